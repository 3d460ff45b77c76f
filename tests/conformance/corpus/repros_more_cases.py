"""More cases modelled on PyTorch's test/dynamo/test_repros.py: the Python that real models
(HF transformers, detectron, timm) wrap around their tensors. Config objects read with getattr
defaults and copied, ModelOutput-like OrderedDict subclasses with attribute access, tuples of
hidden states accumulated layer by layer, past key/value caches of tuples, attention masks
built from finfo minima, position ids from cumulative sums of masks, label shifting with an
ignore index, padding to a multiple, drop-path shapes built from ndim, activation lookup
tables keyed by strings, top-k filtering, and beam-search index arithmetic. Recast in our
own words."""

import collections
import copy
import dataclasses
import functools
import math

import torch
import torch.nn.functional as F

from . import snippets

SOURCE = "dynamo/test_repros"


class Config:
    hidden = 4
    heads = 2
    act = "gelu"
    output_hidden_states = True

    def __init__(self, **overrides):
        for key, value in overrides.items():
            setattr(self, key, value)


class ModelOutput(collections.OrderedDict):
    """Like transformers' ModelOutput: a dict whose keys are also attributes, None values left out."""

    def __init__(self, **kwargs):
        super().__init__((k, v) for k, v in kwargs.items() if v is not None)

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def to_tuple(self):
        return tuple(self.values())


@dataclasses.dataclass
class Batch:
    input_ids: torch.Tensor
    mask: torch.Tensor | None = None
    labels: torch.Tensor | None = None


ACT = {"gelu": F.gelu, "relu": torch.relu, "tanh": torch.tanh, "silu": F.silu}


class Layer(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.proj = torch.nn.Linear(cfg.hidden, cfg.hidden)

    def forward(self, h, output_attentions=False):
        out = ACT[self.cfg.act](self.proj(h))
        if output_attentions:
            return out, out.softmax(-1)
        return (out,)


class Encoder(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.layers = torch.nn.ModuleList(Layer(cfg) for _ in range(2))

    def forward(self, h, output_attentions=False, return_dict=True, **kwargs):
        use_cache = kwargs.pop("use_cache", False)
        all_hidden = () if self.cfg.output_hidden_states else None
        all_attn = () if output_attentions else None
        for layer in self.layers:
            if all_hidden is not None:
                all_hidden = all_hidden + (h,)
            outputs = layer(h, output_attentions=output_attentions)
            h = outputs[0]
            if output_attentions:
                all_attn += (outputs[1],)
        if not return_dict:
            return tuple(v for v in (h, all_hidden, all_attn) if v is not None)
        return ModelOutput(last=h, hidden=all_hidden, attn=all_attn, cache=h[:, :1] if use_cache else None)


def encoder_and_input(n):
    torch.manual_seed(0)
    return Encoder(Config()), torch.randn(2, n, 4)


def batch_of(n):
    ids = torch.randint(0, 10, (2, n))
    mask = torch.ones(2, n, dtype=torch.long)
    mask[1, n - 2:] = 0
    return (Batch(ids, mask, ids.clone()),)


def logits_and_labels(n):
    labels = torch.randint(0, 5, (2, n))
    labels[0, 0] = -100
    return torch.randn(2, n, 5), labels


def tokens(n):
    return torch.randn(2, n, 4), torch.ones(2, n, dtype=torch.long).index_fill_(1, torch.tensor([n - 1]), 0)


def past_and_x(n):
    past = tuple((torch.randn(1, 2, n, 3), torch.randn(1, 2, n, 3)) for _ in range(2))
    return past, torch.randn(1, 2, 1, 3)


NS = {
    "torch": torch, "F": F, "math": math, "collections": collections, "copy": copy, "dataclasses": dataclasses,
    "functools": functools, "Config": Config, "ModelOutput": ModelOutput, "Batch": Batch, "ACT": ACT,
}

MODELS = [
    ("encoder_return_dict", "out = m(x)\nreturn out.last, out.hidden, list(out.keys()), isinstance(out, dict)"),
    ("encoder_return_tuple_with_attentions", "return m(x, output_attentions=True, return_dict=False)"),
    ("encoder_use_cache_kwarg", "out = m(x, use_cache=True)\nreturn out.to_tuple()[-1], len(out)"),
    ("encoder_config_flag_changed_inside", "m.cfg.output_hidden_states = False\nout = m(x)\nm.cfg.output_hidden_states = True\nreturn out.last, 'hidden' in out"),
    ("model_output_missing_attribute", "out = ModelOutput(a=x, b=None)\nreturn out.a, hasattr(out, 'b'), getattr(out, 'b', None)"),
]
snippets(SOURCE, "repros_more_model", MODELS, namespace=NS, params="m, x", make_args=encoder_and_input, train=True)

PATTERNS = [
    ("config_getattr_defaults", "cfg = Config(hidden=8)\nscale = getattr(cfg, 'scale', None) or 1 / math.sqrt(cfg.hidden)\nact = ACT[getattr(cfg, 'act', 'relu')]\nreturn act(x * scale), cfg.hidden, Config.hidden"),
    ("config_shallow_copy_mutated", "cfg = Config(act='tanh')\nc2 = copy.copy(cfg)\nc2.act = 'silu'\nreturn ACT[cfg.act](x), ACT[c2.act](x), vars(cfg), vars(c2)"),
    ("config_deepcopy_list_attribute", "cfg = Config(sizes=[1, 2])\nc2 = copy.deepcopy(cfg)\nc2.sizes.append(x.shape[0])\nreturn x * len(cfg.sizes), c2.sizes"),
    ("activation_lookup_loop", "return {name: fn(x) for name, fn in sorted(ACT.items())}"),
    ("drop_path_shape_from_ndim", "keep = 0.75\nshape = (x.shape[0],) + (1,) * (x.ndim - 1)\nmask = torch.ones(shape, dtype=x.dtype).mul_(keep).floor_().add_(1)\nreturn x.div(keep) * mask, shape", {"make_args": lambda n: (torch.randn(n, 3, 2),)}),
    ("pad_to_multiple_of_four", "pad = (-x.shape[-1]) % 4\ny = F.pad(x, (0, pad))\nreturn y, pad, y.shape[-1] // 4", {"make_args": lambda n: (torch.randn(2, n),)}),
    ("split_heads_view_transpose", "b, s, d = x.shape\nheads = 2\nq = x.view(b, s, heads, d // heads).transpose(1, 2)\nscores = q @ q.transpose(-1, -2) / math.sqrt(d // heads)\nreturn scores.softmax(-1).transpose(1, 2).reshape(b, s, -1)", {"make_args": lambda n: (torch.randn(2, n, 4),)}),
    ("topk_filtering_with_inf", "k = 2\nv, _ = torch.topk(x, k)\nreturn x.masked_fill(x < v[..., -1, None], float('-inf')).softmax(-1)", {"make_args": lambda n: (torch.randn(3, n),)}),
    ("beam_index_arithmetic", "vocab = x.shape[-1]\nscores, flat = x.flatten().topk(3)\nbeam = torch.div(flat, vocab, rounding_mode='floor')\ntok = flat % vocab\nreturn scores, beam, tok", {"make_args": lambda n: (torch.randn(2, n),)}),
    ("one_hot_and_argmax_gather", "idx = x.argmax(-1)\noh = F.one_hot(idx, num_classes=x.shape[-1])\nreturn oh, x.gather(-1, idx[:, None]), oh.dtype", {"make_args": lambda n: (torch.randn(3, n),)}),
    ("relative_positions_bucket", "n = x.shape[-1]\npos = torch.arange(n)\nrel = pos[None, :] - pos[:, None]\nbucket = (rel > 0).long() * 4 + rel.abs().clamp(max=3)\nreturn x[..., None] + bucket, bucket.max().item()", {"make_args": lambda n: (torch.randn(n),)}),
    ("new_factories_from_input", "return x.new_zeros(x.shape[0], 2), x.new_ones((2,)), x.new_full((x.shape[0],), 3.5), x.new_tensor([1.0, 2.0]), x.new_empty(0).shape"),
    ("jit_flags_branch", "if torch.jit.is_scripting() or torch.jit.is_tracing():\n    return x\nreturn x + 1"),
    ("fp16_clamp_branch", "if x.dtype == torch.float16:\n    x = x.clamp(-1000, 1000)\nelse:\n    x = x.clamp(-1, 1)\nreturn x, torch.finfo(x.dtype).max"),
    ("rolling_deque_of_tensors", "window = collections.deque(maxlen=2)\nfor i in range(4):\n    window.append(x * i)\nreturn sum(window), len(window)"),
    ("item_of_mean_branch", "v = x.abs().mean().item()\nif v > 0.0:\n    return x / v, type(v).__name__\nreturn x, type(v).__name__"),
    ("tolist_nested_and_sum", "m = x.reshape(-1, 1)[:3].tolist()\nreturn x + sum(r[0] for r in m), len(m), type(m[0][0]).__name__"),
    ("int_tensor_item_as_index", "k = int(torch.tensor(x.shape[0]) // 2)\nreturn x[k], k"),
    ("bool_of_any_branch", "if bool((x > 100).any()):\n    return x * 0\nreturn x + 1"),
    ("float_of_single_element", "return x * float(x[0]), float(x.sum()) > -1000"),
]
snippets(SOURCE, "repros_more", PATTERNS, namespace=NS)

BATCHES = [
    ("batch_dataclass_position_ids", "m = b.mask\npos = torch.cumsum(m, dim=1).type_as(m) * m - 1\nreturn pos, pos.dtype", {"params": "b"}),
    ("batch_extended_attention_mask", "ext = b.mask[:, None, None, :].to(torch.float32)\nreturn (1.0 - ext) * torch.finfo(torch.float32).min", {"params": "b"}),
    ("batch_labels_masked_then_mutated", "b.labels[b.mask == 0] = -100\nreturn (b.labels == -100).sum()", {"params": "b"}),
    ("batch_fields_iteration_skip_none", "b.mask = None\nreturn tuple(getattr(b, f.name) for f in dataclasses.fields(b) if getattr(b, f.name) is not None)", {"params": "b"}),
    ("batch_replace_then_read", "c = dataclasses.replace(b, labels=None)\nreturn c.labels is None, b.labels is c.labels, c.input_ids * 2", {"params": "b"}),
]
snippets(SOURCE, "repros_more_batch", BATCHES, namespace=NS, make_args=batch_of)

LOSSES = [
    ("shift_labels_cross_entropy", "shift_logits = logits[..., :-1, :].contiguous()\nshift_labels = labels[..., 1:].contiguous()\nreturn F.cross_entropy(shift_logits.view(-1, shift_logits.shape[-1]), shift_labels.view(-1), ignore_index=-100)"),
    ("masked_mean_over_valid", "valid = labels != -100\nlp = logits.log_softmax(-1).gather(-1, labels.clamp(min=0)[..., None]).squeeze(-1)\nreturn -(lp * valid).sum() / valid.sum(), valid.sum().item()"),
]
snippets(SOURCE, "repros_more_loss", LOSSES, namespace=NS, params="logits, labels", make_args=logits_and_labels)

OTHERS = [
    ("pooled_by_mask_lengths", "lengths = mask.sum(1)\nlast = h[torch.arange(h.shape[0]), lengths - 1]\nmean = (h * mask[..., None]).sum(1) / lengths[:, None]\nreturn last, mean, lengths.tolist()", {"params": "h, mask", "make_args": tokens}),
    ("past_length_from_cache", "past_len = past[0][0].shape[2] if past is not None else 0\npos = torch.arange(past_len, past_len + x.shape[2])\nnew = tuple((torch.cat([k, x], 2), torch.cat([v, x * 2], 2)) for k, v in past)\nreturn pos, new, len(new)", {"params": "past, x", "make_args": past_and_x}),
]
snippets(SOURCE, "repros_more_cache", OTHERS, namespace=NS)
