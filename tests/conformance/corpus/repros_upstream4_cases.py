"""Model-shaped code in the style of dynamo's test_repros (the HF, detectron, timm and maml
repros), recast in our own words, where round two took the Python around models: whole blocks
that train. A GPT block with a causal-mask buffer sliced to the length, rotary tables cached on
the module and grown when a longer input comes, a key/value cache kept on the module across
calls, T5's relative position buckets, an RMSNorm computing in float32, a decoder loss with
ignored labels and label smoothing (labels given or not), gradient checkpointing switched by a
flag, maml's inner step (autograd.grad with create_graph), ResNet and squeeze-excite blocks,
a UNet skip joined after interpolate, a ViT whose position table is interpolated to the input,
position ids sliced from a buffer past a cache length, detectron's box pooler format, heads
picked by a task name, conv-bn fused for evaluation, and top-k routing over experts. Grads of
inputs and parameters are compared after backward."""

import math

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from .upstream4_support import graph_break, pick, register

nn = torch.nn
D = 8
case = register("dynamo/test_repros", "repros4")


class CausalBlock(nn.Module):
    def __init__(self, max_len=16, heads=2):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(D)
        self.ln2 = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(approximate="tanh"), nn.Linear(2 * D, D))
        self.register_buffer("bias", torch.tril(torch.ones(max_len, max_len)).view(1, 1, max_len, max_len))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


def seq_input(make, batch=2):
    def build(n):
        return make(), torch.randn(batch, n, D, requires_grad=True)

    return build


def call(m, x):
    return m(x)


case("gpt_block_causal_mask_buffer", seq_input(CausalBlock), call, train=True, atol=1e-4)
case("gpt_block_twice_stacked", seq_input(lambda: nn.Sequential(CausalBlock(), CausalBlock())), call, train=True,
     atol=1e-4)


class Rotary(nn.Module):
    """Cos/sin tables cached on the module, rebuilt when a longer sequence comes."""

    def __init__(self):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, D, 2).float() / D)), persistent=False)
        self.cached_len = pick(0, 5)
        self.cos_cached = self.sin_cached = None
        if self.cached_len:
            self._build(self.cached_len)

    def _build(self, length):
        t = torch.arange(length, dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos_cached, self.sin_cached = emb.cos(), emb.sin()
        self.cached_len = length

    def forward(self, x):
        T = x.shape[-2]
        if T > self.cached_len:
            self._build(T)
        cos, sin = self.cos_cached[:T], self.sin_cached[:T]
        x1, x2 = x[..., : D // 2], x[..., D // 2:]
        rotated = torch.cat((-x2, x1), dim=-1)
        return x * cos + rotated * sin, self.cached_len


case("rotary_tables_cached_and_grown", seq_input(Rotary), call, train=True)


class KVCacheAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = nn.Linear(D, D)
        self.v = nn.Linear(D, D)
        self.q = nn.Linear(D, D)
        self.cache = []

    def forward(self, x):
        k, v = self.k(x), self.v(x)
        if self.cache:
            past_k, past_v = self.cache[-1]
            k = torch.cat([past_k, k], dim=1)
            v = torch.cat([past_v, v], dim=1)
        self.cache.append((k.detach(), v.detach()))
        att = torch.softmax(self.q(x) @ k.transpose(1, 2) / math.sqrt(D), dim=-1)
        return att @ v, len(self.cache)


def two_steps_with_cache(m, x):
    first, _ = m(x)
    second, count = m(x[:, -1:])
    return first, second, count


case("kv_cache_on_module_across_steps", seq_input(KVCacheAttention), two_steps_with_cache, train=True, atol=1e-4)


def relative_bucket(relative_position, bidirectional, num_buckets=8, max_distance=16):
    ret = 0
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret += (n < 0).to(torch.long) * num_buckets
        n = torch.abs(n)
    else:
        n = torch.max(n, torch.zeros_like(n))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        torch.log(n.float() / max_exact + 1e-6) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    val_if_large = torch.min(val_if_large, torch.full_like(val_if_large, num_buckets - 1))
    return ret + torch.where(is_small, n, val_if_large)


class T5Bias(nn.Module):
    def __init__(self):
        super().__init__()
        self.is_decoder = pick(True, False)
        self.bias = nn.Embedding(8, 2)

    def forward(self, x):
        T = x.shape[1]
        context = torch.arange(T)[:, None]
        memory = torch.arange(T)[None, :]
        buckets = relative_bucket(memory - context, bidirectional=not self.is_decoder)
        values = self.bias(buckets).permute(2, 0, 1).unsqueeze(0)
        return x.sum(-1, keepdim=True).unsqueeze(1) * values


case("t5_relative_position_buckets", seq_input(T5Bias), call, train=True)


class RMSNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(D) + 0.1 * torch.randn(D))
        self.eps = 1e-6

    def forward(self, hidden):
        dtype = hidden.dtype
        hidden = hidden.to(torch.float32)
        variance = hidden.pow(2).mean(-1, keepdim=True)
        hidden = hidden * torch.rsqrt(variance + self.eps)
        return self.weight * hidden.to(dtype)


def rms_input(n):
    return RMSNorm(), torch.randn(2, n, D, dtype=pick(torch.float32, torch.float64), requires_grad=True)


case("rmsnorm_float32_then_input_dtype", rms_input, call, train=True)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(12, D)
        self.block = CausalBlock()
        self.head = nn.Linear(D, 12)
        self.head.weight = self.embed.weight
        self.smoothing = pick(0.0, 0.1)

    def forward(self, ids, labels=None):
        logits = self.head(self.block(self.embed(ids)))
        loss = None
        if labels is not None:
            shift_logits = logits[:, :-1].contiguous()
            shift_labels = labels[:, 1:].contiguous()
            loss = F.cross_entropy(shift_logits.view(-1, 12), shift_labels.view(-1), ignore_index=-100,
                                   label_smoothing=self.smoothing)
        return {"loss": loss, "logits": logits}


def lm_input(n):
    ids = torch.randint(0, 12, (2, n))
    labels = None
    if pick(True, False):
        labels = ids.clone()
        labels[:, 0] = -100
    return TinyLM(), ids, labels


case("tiny_lm_loss_with_ignored_labels", lm_input, lambda m, ids, labels: m(ids, labels=labels), train=True, atol=1e-4)


class CheckpointedStack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Sequential(nn.Linear(D, D), nn.Tanh()) for _ in range(3)])
        self.gradient_checkpointing = pick(True, False)
        self.train(pick(True, False))

    def forward(self, x):
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                x = checkpoint(layer, x, use_reentrant=False)
            else:
                x = layer(x)
        return x


case("gradient_checkpointing_by_flag", seq_input(CheckpointedStack), call, train=True)


class MamlNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, 1)

    def forward(self, x, w=None, b=None):
        return F.linear(x, self.fc.weight if w is None else w, self.fc.bias if b is None else b)


def maml_input(n):
    return MamlNet(), torch.randn(n, D), torch.randn(n, 1), torch.randn(3, D), torch.randn(3, 1)


def maml_step(m, x_s, y_s, x_q, y_q):
    loss = F.mse_loss(m(x_s), y_s)
    gw, gb = torch.autograd.grad(loss, (m.fc.weight, m.fc.bias), create_graph=True)
    w, b = m.fc.weight - 0.1 * gw, m.fc.bias - 0.1 * gb
    return F.mse_loss(m(x_q, w, b), y_q)


case("maml_inner_step_create_graph", maml_input, maml_step, train=True)


class BasicBlock(nn.Module):
    def __init__(self, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 4, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(4)
        self.downsample = nn.Sequential(nn.Conv2d(2, 4, 1, stride=stride, bias=False), nn.BatchNorm2d(4))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.downsample(x))


def image_input(make):
    def build(n):
        return make(), torch.randn(2, 2, n + 2, n + 2, requires_grad=True)

    return build


case("resnet_basic_block_stride", image_input(lambda: BasicBlock(pick(1, 2))), call, train=True, atol=1e-4)


class SqueezeExcite(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(nn.Linear(2, 4), nn.ReLU(inplace=True), nn.Linear(4, 2), nn.Sigmoid())

    def forward(self, x):
        b, c, _, _ = x.size()
        y = self.fc(self.pool(x).view(b, c)).view(b, c, 1, 1)
        return x * y.expand_as(x)


case("squeeze_excite_block", image_input(SqueezeExcite), call, train=True)


class UNetSkip(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(2, 3, 3, stride=2, padding=1)
        self.up = nn.Conv2d(5, 2, 3, padding=1)
        self.mode = pick("nearest", "bilinear")

    def forward(self, x):
        h = F.relu(self.down(x))
        kwargs = {"align_corners": False} if self.mode == "bilinear" else {}
        h = F.interpolate(h, size=x.shape[-2:], mode=self.mode, **kwargs)
        return self.up(torch.cat([x, h], dim=1))


case("unet_skip_after_interpolate", image_input(UNetSkip), call, train=True, atol=1e-4)


class TinyViT(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(2, D, kernel_size=2, stride=2)
        self.cls_token = nn.Parameter(torch.randn(1, 1, D))
        self.pos = nn.Parameter(torch.randn(1, 1 + 4, D))  # made for a 2x2 grid of patches

    def interpolated_pos(self, grid):
        if grid * grid + 1 == self.pos.shape[1]:
            return self.pos
        cls_pos, patch_pos = self.pos[:, :1], self.pos[:, 1:]
        patch_pos = patch_pos.reshape(1, 2, 2, D).permute(0, 3, 1, 2)
        patch_pos = F.interpolate(patch_pos, size=(grid, grid), mode="bicubic", align_corners=False)
        return torch.cat([cls_pos, patch_pos.permute(0, 2, 3, 1).reshape(1, grid * grid, D)], dim=1)

    def forward(self, x):
        x = self.patch(x)
        grid = x.shape[-1]
        x = x.flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        return x + self.interpolated_pos(grid)


def vit_input(n):
    side = 4 if n < 6 else 2 * (n // 2)
    return TinyViT(), torch.randn(2, 2, side, side, requires_grad=True)


case("vit_position_table_interpolated", vit_input, call, train=True, atol=1e-4)


class LearnedPositions(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(12, D)
        self.pos = nn.Embedding(32, D)
        self.register_buffer("position_ids", torch.arange(32).expand((1, -1)), persistent=False)

    def forward(self, ids, past_length=0):
        T = ids.shape[1]
        positions = self.position_ids[:, past_length: past_length + T]
        return self.tok(ids) + self.pos(positions)


def positions_input(n):
    return LearnedPositions(), torch.randint(0, 12, (2, n)), pick(0, 3, 7)


case("position_ids_sliced_past_cache_length", positions_input, lambda m, ids, past: m(ids, past_length=past),
     train=True)


def extended_mask(n):
    mask = torch.ones(2, n, dtype=torch.long)
    mask[1, -pick(1, 2):] = 0
    return torch.randn(2, n, D, requires_grad=True), mask, pick(torch.float32, torch.float64)


def apply_extended_mask(h, mask, dtype):
    ext = mask[:, None, None, :].to(dtype)
    ext = (1.0 - ext) * torch.finfo(dtype).min
    scores = (h @ h.transpose(1, 2)).unsqueeze(1).to(dtype) + ext
    return scores.softmax(-1)


case("extended_attention_mask_finfo_min", extended_mask, apply_extended_mask, train=True)


def boxes_input(n):
    return [torch.rand(pick(1, 2, 3), 4, requires_grad=True) * 10 for _ in range(2)] + [torch.rand(n, 4) * 10]


def pooler_format(box_lists):
    def fmt_box_list(box_tensor, batch_index):
        repeated_index = torch.full_like(box_tensor[:, :1], batch_index, dtype=box_tensor.dtype)
        return torch.cat((repeated_index, box_tensor), dim=1)

    return torch.cat([fmt_box_list(b, i) for i, b in enumerate(box_lists)], dim=0)


case("detectron_boxes_to_pooler_format", lambda n: (boxes_input(n),), pooler_format, train=True)


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(D, D)
        self.heads = nn.ModuleDict({"cls": nn.Linear(D, 3), "reg": nn.Linear(D, 1)})

    def forward(self, x, task):
        return self.heads[task](F.relu(self.body(x)))


case("head_picked_by_task_name", lambda n: (MultiTask(), torch.randn(n, D, requires_grad=True), pick("cls", "reg")),
     lambda m, x, task: m(x, task), train=True)


def conv_bn(n):
    conv, bn = nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3)
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    conv.eval()
    bn.eval()
    return conv, bn, torch.randn(1, 2, n, n)


def fused(conv, bn, x):
    with torch.no_grad():
        fused_conv = torch.nn.utils.fuse_conv_bn_eval(conv, bn)
    return fused_conv(x), bn(conv(x))


case("conv_bn_fused_for_eval", conv_bn, fused, atol=1e-4)


class TopKRouter(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(D, 4)
        self.experts = nn.ModuleList([nn.Linear(D, D) for _ in range(4)])
        self.k = pick(1, 2)

    def forward(self, x):
        weights = self.gate(x).softmax(-1)
        top_w, top_i = weights.topk(self.k, dim=-1)
        top_w = top_w / top_w.sum(-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            chosen = (top_i == e).to(x.dtype)
            gate = (top_w * chosen).sum(-1, keepdim=True)
            out = out + gate * expert(x)
        return out


case("topk_routing_over_experts_dense", lambda n: (TopKRouter(), torch.randn(n, D, requires_grad=True)), call,
     train=True)


class SparseRouter(TopKRouter):
    def forward(self, x):
        top_i = self.gate(x).argmax(-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            rows = torch.nonzero(top_i == e).squeeze(-1)
            if rows.numel():
                out = out.index_add(0, rows, expert(x[rows]))
        return out


case("argmax_routing_with_index_add", lambda n: (SparseRouter(), torch.randn(n, D, requires_grad=True)), call,
     train=True)


class Config:
    def __init__(self):
        self.use_cache = pick(True, False)
        self.output_hidden_states = pick(True, False)
        self.layers = pick(1, 2)


class ConfiguredEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.config = Config()
        self.layers = nn.ModuleList([nn.Linear(D, D) for _ in range(2)])

    def forward(self, x):
        hidden = () if self.config.output_hidden_states else None
        cache = [] if self.config.use_cache else None
        for layer in self.layers[: self.config.layers]:
            if hidden is not None:
                hidden = hidden + (x,)
            x = torch.tanh(layer(x))
            if cache is not None:
                cache.append(x.detach())
        return x, hidden, cache


case("encoder_config_flags_per_call", lambda n: (ConfiguredEncoder(), torch.randn(n, D, requires_grad=True)), call,
     train=True)


class RecordsLast(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(D, D)
        self.last = None

    def forward(self, x):
        out = self.lin(x)
        previous = self.last
        self.last = out.detach()
        return out if previous is None or previous.shape != out.shape else out + previous


def calls_twice_with_break(m, x):
    a = m(x)
    graph_break()
    return a, m(x)


case("module_keeps_last_output_across_break", lambda n: (RecordsLast(), torch.randn(n, D, requires_grad=True)),
     calls_twice_with_break, train=True)
