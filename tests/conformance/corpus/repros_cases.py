"""Cases modelled on dynamo's test_repros: the shapes of bugs found in real models (HF
reformer/longformer/t5 chunking and masking, detectron box pooling, maml, fastNLP) and the
Python those models use around their tensors: lists aliased and mutated, dicts of lists,
dataclasses and namedtuples, in-place ops on views of inputs, `.data`, `out=` and `alpha=`
forms, asserts on shapes, sizes used as numbers, and values read from globals, closures,
default arguments and class attributes that the input maker changes between calls (the
compiled function must notice each change or take the value as an input)."""

import collections
import copy
import dataclasses
import functools
import math
import random
from typing import NamedTuple

import torch
import torch.nn.functional as F

from . import add, snippets

SOURCE = "dynamo/test_repros"


def pick(*options):
    return random.choice(options)


@dataclasses.dataclass
class Output:
    logits: torch.Tensor
    loss: torch.Tensor | None = None
    extra: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Frozen:
    scale: float
    name: str = "f"


class Pair(NamedTuple):
    a: torch.Tensor
    b: torch.Tensor


class ProcessorList(list):
    def __call__(self, x):
        for p in self:
            x = p(x)
        return x


class Holder:
    classattr = 2

    def __init__(self, t):
        self.t = t

    @classmethod
    def make(cls, t):
        return cls(t * cls.classattr)


COUNTER_G = 0

NS = {
    "torch": torch, "F": F, "math": math, "collections": collections, "copy": copy, "dataclasses": dataclasses,
    "functools": functools, "Output": Output, "Frozen": Frozen, "Pair": Pair, "ProcessorList": ProcessorList,
    "Holder": Holder,
}


def matrix(n):
    return (torch.randn(n, 6),)


def boxes(n):
    return [torch.rand(n, 4) * 10, torch.rand(n + 1, 4) * 10], torch.randn(2 * n + 1, 3)


def grad_matrix(n):
    return (torch.randn(n, 6, requires_grad=True),)


REPROS = [
    # HF reformer / longformer / t5
    ("reformer_chunked_feed_forward", "chunks = x.chunk(2, dim=0)\nouts = [F.gelu(c @ c.t()).sum(1, keepdim=True) * c for c in chunks]\nreturn torch.cat(outs, dim=0)"),
    ("reformer_split_heads_merge", "b = x.shape[0]\nh = x.view(b, 2, 3).transpose(0, 1)\nm = h.transpose(0, 1).reshape(b, -1)\nreturn m + x, h.shape"),
    ("longformer_pad_and_diagonalize", "p = F.pad(x, (0, x.shape[0] + 1))\np = p.view(x.shape[0], -1)\np = p[:, :-1]\nreturn p.reshape(x.shape[0], x.shape[0] + 6)"),
    ("longformer_as_strided_chunks", "h = x.contiguous()\nsize = (max(h.shape[0] - 1, 1), 2, 6)\nstride = (h.stride(0), h.stride(0), h.stride(1))\nreturn h.as_strided(size=size, stride=stride).sum(1)"),
    ("t5_relative_position_bucket", "pos = torch.arange(x.shape[0])[:, None] - torch.arange(x.shape[0])[None, :]\nn = -pos\nnum = 8\nret = (n < 0).to(torch.long) * num\nn = torch.abs(n)\nis_small = n < 4\nlarge = 4 + (torch.log(n.float().clamp(min=1) / 4) / math.log(16 / 4) * 4).to(torch.long)\nlarge = torch.min(large, torch.full_like(large, num - 1))\nreturn ret + torch.where(is_small, n, large)"),
    ("t5_layer_norm_fp32_variance", "var = x.to(torch.float32).pow(2).mean(-1, keepdim=True)\nreturn x * torch.rsqrt(var + 1e-6)"),
    ("attention_mask_min_value", "mask = (torch.arange(6) < 4)[None, :].expand(x.shape[0], 6)\nreturn x.masked_fill(~mask, torch.finfo(x.dtype).min).softmax(-1)"),
    ("causal_mask_triu", "n = x.shape[0]\nmask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)\nscores = (x @ x.t()).masked_fill(mask, float('-inf'))\nreturn scores.softmax(-1)"),
    # detectron / torchvision
    ("convert_boxes_to_pooler_format", "(a, b), feats = x\nidx = [torch.full_like(bx[:, :1], i) for i, bx in enumerate((a, b))]\nrois = torch.cat([torch.cat(idx, 0), torch.cat((a, b), 0)], 1)\nreturn rois, feats.sum()", {"make_args": lambda n: (boxes(n),)}),
    ("do_paste_mask_int_bounds", "x0 = int(max(float(x[:, 0].min()) - 1, 0))\ny1 = int(min(float(x[:, 1].max()) + 1, 10))\nreturn torch.arange(x0, y1, dtype=torch.float32), (x0, y1)", {"make_args": lambda n: (torch.rand(n, 2) * 10,)}),
    ("boxes_clamp_and_area", "b = x[:, :4].clone()\nb[:, 0::2] = b[:, 0::2].clamp(min=0, max=5)\nb[:, 1::2] = b[:, 1::2].clamp(min=0, max=3)\nreturn (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])"),
    ("nonzero_then_index", "idx = (x[:, 0] > 0).nonzero().squeeze(1)\nreturn x[idx].sum(0), idx.numel()"),
    # lists, dicts, aliasing
    ("list_aliasing_append", "a = [x]\nb = a\nb.append(x * 2)\nc = list(a)\nc.append(x * 3)\nreturn len(a), len(c), sum(a)"),
    ("list_slice_assignment_mutable", "l = [x, x + 1, x + 2]\nl[1:2] = [x * 10, x * 20]\ndel l[0]\nreturn l"),
    ("seq_append_in_loop", "outs = []\nfor i in range(x.shape[0] % 3 + 2):\n    outs.append(x[i % x.shape[0]] * i)\nreturn torch.stack(outs)"),
    ("dict_of_lists_mutated", "d = collections.defaultdict(list)\nfor i in range(3):\n    d['k%d' % (i % 2)].append(x * i)\nreturn {k: torch.stack(v).sum(0) for k, v in d.items()}"),
    ("recursive_map_nested", "def rmap(f, o):\n    if isinstance(o, dict):\n        return {k: rmap(f, v) for k, v in o.items()}\n    if isinstance(o, (list, tuple)):\n        return type(o)(rmap(f, v) for v in o)\n    return f(o)\nreturn rmap(lambda t: t * 2, {'a': [x, (x, x + 1)], 'b': x})"),
    ("merge_processor_list_subclass", "ps = ProcessorList([torch.relu, lambda t: t * 2, torch.neg])\nreturn ps(x), len(ps)"),
    ("dict_update_and_pop", "d = {'a': x}\nd.update(b=x * 2, c=x * 3)\nv = d.pop('b')\nreturn d, v, sorted(d)"),
    ("list_of_tensors_sum_builtin", "return sum([x[i] for i in range(x.shape[0])]), max(x.shape[0], 3)"),
    ("id_memo_dict", "memo = {}\nfor t in (x, x, x * 2):\n    memo.setdefault(id(t), t)\nreturn len(memo)"),
    # dataclasses, namedtuples, classes
    ("dataclass_output_construct", "o = Output(logits=x * 2)\no.extra.append(x.shape[0])\nreturn o.logits, o.loss, o.extra"),
    ("dataclass_fields_iteration", "o = Output(x, x.sum())\nnames = [f.name for f in dataclasses.fields(o)]\nreturn names, o.loss"),
    ("dataclass_replace", "o = Output(x)\np = dataclasses.replace(o, loss=x.mean())\nreturn p.loss, o.loss is None"),
    ("frozen_dataclass_read", "f = Frozen(2.5)\nreturn x * f.scale, f.name, f == Frozen(2.5)"),
    ("frozen_dataclass_setattr_raises", "f = Frozen(2.5)\nf.scale = 3.0\nreturn x"),
    ("namedtuple_build_and_replace", "p = Pair(x, x * 2)\nq = p._replace(b=x * 3)\nreturn p.a + q.b, q._fields"),
    ("object_classmethod_constructor", "h = Holder.make(x)\nreturn h.t"),
    ("dataclass_asdict", "return dataclasses.asdict(Output(x, None, [1, 2]))"),
    # in-place ops, views, .data, out=, alpha=
    ("inplace_view_on_input", "x[0].add_(1)\nx[:, 1].mul_(2)\nreturn x.sum()"),
    ("inplace_view_of_view_on_input", "v = x[1:]\nw = v[:, :3]\nw.zero_()\nreturn x"),
    ("data_attribute_mutation", "x.data.mul_(2)\nreturn x + 1"),
    ("data_attribute_assignment", "x.data = x.data * 0 + 1\nreturn x.sum(), x.shape"),
    ("add_sub_alpha", "return torch.add(x, x, alpha=2), torch.sub(x, x * 3, alpha=0.5), x.add(1, alpha=3)"),
    ("out_variant_fresh_tensor", "out = torch.empty(0)\ntorch.sigmoid(x, out=out)\nreturn out"),
    ("out_variant_non_contiguous", "out = torch.empty(6, x.shape[0]).t()\ntorch.mul(x, 2, out=out)\nreturn out, out.is_contiguous()"),
    ("sort_out_tuple", "vals = torch.empty(0)\nidx = torch.empty(0, dtype=torch.long)\ntorch.sort(x, dim=1, out=(vals, idx))\nreturn vals, idx"),
    ("setitem_with_mask", "y = x.clone()\ny[y < 0] = 0\ny[:, -1] = y[:, 0]\nreturn y"),
    ("index_put_accumulate", "y = torch.zeros(6)\nidx = torch.tensor([0, 1, 1, 5])\ny.index_put_((idx,), x[0, :4], accumulate=True)\nreturn y"),
    ("zero_dim_tensor_inplace", "s = x.sum()\ns.add_(1)\nreturn s, x * s"),
    ("new_zeros_and_new_tensor", "return x.new_zeros(2, 3), x.new_tensor([1, 2]), x.new_full((2,), 7), x.new_ones(x.shape[0]).dtype"),
    # sizes as numbers, asserts, checks
    ("assert_on_shape", "assert x.shape[1] == 6, 'bad width'\nassert x.dim() == 2\nreturn x * 2"),
    ("assert_on_shape_fails", "assert x.shape[0] > 100, f'too short: {x.shape[0]}'\nreturn x"),
    ("negative_shape_guard", "if x.shape[0] < 0:\n    return x * 0\nreturn x + x.shape[0]"),
    ("size_floordiv_and_truediv", "n = x.shape[0]\nreturn x[: n // 2], int(n / 2), n / 4, math.ceil(n / 3)"),
    ("sizes_into_tensor", "return torch.tensor([x.shape[0], x.shape[1] * 2]), torch.tensor(x.shape)"),
    ("size_tuple_arithmetic", "s = x.size()\nt = s[:-1] + (3, 2)\nreturn x.reshape(*t), t, torch.Size([1]) + s"),
    ("fstring_with_size", "return x + 1, f'{x.shape[0]}x{x.shape[1]}', str(x.dtype)"),
    ("chained_size_comparison", "return x * (1 < x.shape[0] <= 5), 1 < x.shape[0] <= 5"),
    ("item_to_python_branch", "if x.sum().item() > 0:\n    return x * 2\nreturn x - 1"),
    ("maml_item_capture", "loss = (x ** 2).mean()\nacc = (x > 0).float().mean().item()\nreturn loss, round(acc, 4)"),
    ("numpy_list_round_trip", "import numpy as np\narr = np.array([x.shape[0], 2])\nreturn x * int(arr.prod()), arr.tolist()"),
    ("hasattr_on_tensor", "return hasattr(x, 'foo'), hasattr(x, 'shape'), x * 2"),
    ("type_of_tensor", "return type(x) is torch.Tensor, isinstance(x, torch.Tensor), x.type()"),
    # autograd shapes of bugs
    ("requires_grad_false_parameter", "p = torch.nn.Parameter(torch.ones(6), requires_grad=False)\nreturn x * p, p.requires_grad", {"make_args": grad_matrix, "train": True}),
    ("detach_then_inplace", "d = x.detach()\nd.mul_(0.5)\nreturn d, d.requires_grad"),
    ("grad_through_cat_and_split", "a, b = torch.cat([x, x * 2], 1).split(6, 1)\nreturn (a * b).sum(1)", {"make_args": grad_matrix, "train": True}),
    ("grad_through_expand_and_where", "m = x.sum(1, keepdim=True).expand_as(x)\nreturn torch.where(x > 0, m, x)", {"make_args": grad_matrix, "train": True}),
    ("deepcopy_dict_of_tensors", "d = {'a': x, 'b': [x * 2, 3]}\nc = copy.deepcopy(d)\nc['a'].add_(1)\nreturn c, d['a'] is x"),
    ("functools_partial_of_torch_op", "f = functools.partial(torch.clamp, min=-0.5)\nreturn f(x, max=0.5)"),
    ("closure_cell_rebound_across_break", "k = 1\ndef g():\n    return x * k\na = g()\nprint('break')\nk = 2\nreturn a, g()"),
    ("nonlocal_written_by_callee_across_break", "total = 0\ndef bump(t):\n    nonlocal total\n    total += 1\n    print('break')\n    return t * total\na = bump(x)\nb = bump(x)\nreturn a, b, total"),
    ("list_mutated_across_break", "acc = [x]\nacc.append(x * 2)\nprint('break')\nacc[0] = acc[0] + 1\nreturn sum(acc), len(acc)"),
    ("global_written_across_break", "global COUNTER_G\nCOUNTER_G = 0\nCOUNTER_G += 1\nprint('break')\nCOUNTER_G += 2\nreturn x * COUNTER_G, COUNTER_G"),
    ("dict_mutated_across_break", "d = {'a': x}\nd['b'] = x * 2\nprint('break')\nd['a'] = d['a'] + d.pop('b')\nreturn d, len(d)"),
    ("iterator_consumed_across_break", "it = iter([x, x * 2, x * 3])\nfirst = next(it)\nprint('break')\nrest = list(it)\nreturn first, rest"),
    ("exception_raised_in_callee_after_break", "def g(t):\n    print('break')\n    raise KeyError('k')\ntry:\n    g(x)\nexcept KeyError as e:\n    return x + 1, str(e)\nreturn x"),
    ("object_attribute_written_across_break", "class O:\n    pass\no = O()\no.v = x\nprint('break')\no.v = o.v * 2\nreturn o.v, vars(o).keys() == {'v'}"),
    ("lru_cache_helper", "@functools.lru_cache(None)\ndef k(n):\n    return n * 3\nreturn x * k(x.shape[0]), k(x.shape[0])"),
]
snippets(SOURCE, "repro", REPROS, namespace=NS, make_args=matrix)


# ---- values from outside the function, changed between calls by the input maker ------------------

G = {"scale": 1.0, "offset": torch.zeros(6), "fn": torch.sin, "mode": "sum", "n": 2}


def set_globals(n):
    G["scale"] = pick(0.5, 2.0)
    G["offset"] = torch.randn(6) if pick(True, False) else torch.zeros(6)
    G["fn"] = pick(torch.sin, torch.cos, lambda t: t * 3)
    G["mode"] = pick("sum", "mean")
    G["n"] = pick(1, 2, 3)
    globals()["SCALE"] = pick(1, 3)
    globals()["ACT"] = pick(torch.relu, torch.tanh)
    Holder.classattr = pick(2, 5)
    return (torch.randn(n, 6),)


SCALE = 1
ACT = torch.relu


def reads_global_scalars(x):
    return x * SCALE * G["scale"] + G["offset"]


def reads_global_function(x):
    return ACT(G["fn"](x))


def reads_global_string_and_count(x):
    out = x
    for _ in range(G["n"]):
        out = out.sum(0) if G["mode"] == "sum" else out.mean(0)
        out = out + x
    return out


def reads_class_attribute(x):
    return Holder.make(x).t


for fn in (reads_global_scalars, reads_global_function, reads_global_string_and_count, reads_class_attribute):
    add(SOURCE, f"repro.{fn.__name__}_changed_between_calls", fn, set_globals)


def make_closure():
    state = {"k": 1.0}
    k = 1.0

    def inner(x):
        return x * k + state["k"]

    def set_k(value):
        nonlocal k
        k = value

    return inner, set_k, state


CLOSURE, SET_CELL, CLOSURE_STATE = make_closure()


def set_closure(n):
    SET_CELL(pick(1.0, -2.0, 0.5))
    CLOSURE_STATE["k"] = pick(0.0, 10.0)
    return (torch.randn(n),)


add(SOURCE, "repro.closure_cell_changed_between_calls", CLOSURE, set_closure)


def with_default(x, k=2.0):
    return x * k


def calls_with_default(x):
    return with_default(x) + with_default(x, 1.0)


def set_default(n):
    with_default.__defaults__ = (pick(2.0, -3.0),)
    return (torch.randn(n),)


add(SOURCE, "repro.default_argument_changed_between_calls", calls_with_default, set_default)


PARTIAL = functools.partial(torch.clamp, min=-1.0)


def uses_partial(x):
    return PARTIAL(x) + 1


def set_partial(n):
    global PARTIAL
    PARTIAL = functools.partial(torch.clamp, min=pick(-1.0, 0.0, 0.5))
    return (torch.randn(n),)


add(SOURCE, "repro.global_partial_replaced_between_calls", uses_partial, set_partial)


class Counter:
    def __init__(self):
        self.step = 0
        self.scale = 1.0

    def scaled(self, x):
        return x * self.scale + self.step


COUNTER = Counter()


def bound_method_reads(x):
    method = COUNTER.scaled
    return method(x)


def set_counter(n):
    COUNTER.step = pick(0, 1, 2)
    COUNTER.scale = pick(1.0, -1.0)
    return (torch.randn(n),)


add(SOURCE, "repro.bound_method_object_changed_between_calls", bound_method_reads, set_counter)


GLOBAL_LIST = [1.0]


def reads_global_list(x):
    total = x
    for v in GLOBAL_LIST:
        total = total + v
    return total, len(GLOBAL_LIST)


def set_global_list(n):
    GLOBAL_LIST[:] = [float(i) for i in range(pick(1, 2, 3))]
    return (torch.randn(n),)


add(SOURCE, "repro.global_list_length_changed_between_calls", reads_global_list, set_global_list)


GLOBAL_TENSOR_HOLDER = {"t": torch.ones(3)}


def reads_global_tensor_inplace_changed(x):
    return x * GLOBAL_TENSOR_HOLDER["t"].sum()


def set_global_tensor_values(n):
    GLOBAL_TENSOR_HOLDER["t"].fill_(pick(1.0, 2.0))
    return (torch.randn(n),)


add(SOURCE, "repro.global_tensor_values_changed_in_place", reads_global_tensor_inplace_changed, set_global_tensor_values)


def grad_mode_guard_flag(n):
    return torch.randn(n, requires_grad=True), pick(True, False)


def grad_mode_around_break(x, flag):
    prev = torch.is_grad_enabled()
    torch.set_grad_enabled(flag)
    a = x + 1
    a.tolist()
    ret = a * 2
    torch.set_grad_enabled(prev)
    return ret, ret.requires_grad


add(SOURCE, "repro.grad_mode_switched_around_tolist", grad_mode_around_break, grad_mode_guard_flag)


def deepcopy_tensors(d):
    c = copy.deepcopy(d)
    return {k: v * 2 for k, v in c.items()}, c["a"] is d["a"]


add(SOURCE, "repro.deepcopy_input_dict_of_tensors", deepcopy_tensors, lambda n: ({"a": torch.randn(n), "b": torch.randn(n, 2)},))


# ---- callees that break their graph, changed between calls ------------------------------------------


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, t):
        print("a break inside the method")
        return t * self.k


class Shifter(Scaler):
    def apply(self, t):
        print("a break inside the override")
        return t + self.k


def calls_method(obj, x):
    return obj.apply(x * 2)


add(SOURCE, "repro.method_of_object_of_changing_class_breaks", calls_method,
    lambda n: (pick(Scaler, Shifter)(pick(2.0, 3.0)), torch.randn(n)))


def calls_partial(p, x):
    return p(x) + 1


def breaking_scale(t, k):
    print("a break inside the partial's function")
    return t * k


def breaking_shift(t, k):
    print("a break inside the partial's function")
    return t + k


add(SOURCE, "repro.partial_passed_in_breaks", calls_partial,
    lambda n: (functools.partial(pick(breaking_scale, breaking_shift), k=pick(2.0, 5.0)), torch.randn(n)))


def breaking_with_default(t, k=2.0):
    print("a break inside the callee")
    return t * k


def calls_breaking_with_default(x):
    return breaking_with_default(x) + breaking_with_default(x, 1.0)


def set_breaking_default(n):
    breaking_with_default.__defaults__ = (pick(2.0, -3.0),)
    return (torch.randn(n),)


add(SOURCE, "repro.default_of_breaking_callee_changed_between_calls", calls_breaking_with_default, set_breaking_default)


BREAKING_CLOSURE_STATE = {}


def make_breaking_closure():
    k = 1.0

    def inner(t):
        print("a break inside the closure")
        return t * k

    def set_k(value):
        nonlocal k
        k = value

    return inner, set_k


BREAKING_CLOSURE, SET_BREAKING_CELL = make_breaking_closure()


def calls_breaking_closure(x):
    return BREAKING_CLOSURE(x) + 1


def set_breaking_closure(n):
    SET_BREAKING_CELL(pick(1.0, -2.0, 0.5))
    return (torch.randn(n),)


add(SOURCE, "repro.cell_of_breaking_closure_changed_between_calls", calls_breaking_closure, set_breaking_closure)


def global_breaking_fn(t):
    print("a break inside the global function")
    return t * 2


def calls_global_breaking_fn(x):
    return GLOBAL_BREAKING(x)


GLOBAL_BREAKING = global_breaking_fn


def set_global_breaking(n):
    global GLOBAL_BREAKING
    GLOBAL_BREAKING = pick(global_breaking_fn, breaking_shift_one)
    return (torch.randn(n),)


def breaking_shift_one(t):
    print("a break inside the other global function")
    return t + 1


add(SOURCE, "repro.global_breaking_function_replaced_between_calls", calls_global_breaking_fn, set_global_breaking)


def class_attr_read_in_breaking_callee(x):
    def g(t):
        print("a break")
        return t * Holder.classattr

    return g(x)


def set_class_attr(n):
    Holder.classattr = pick(2, 5)
    return (torch.randn(n),)


add(SOURCE, "repro.class_attribute_read_after_break_changed_between_calls", class_attr_read_in_breaking_callee, set_class_attr)


def generator_passed_in(gen_fn, x):
    return sum(gen_fn(x))


def gen_a(t):
    yield t
    print("a break inside the generator")
    yield t * 2


def gen_b(t):
    yield t
    print("a break inside the generator")
    yield t * 3


add(SOURCE, "repro.generator_function_passed_in_breaks", generator_passed_in, lambda n: (pick(gen_a, gen_b), torch.randn(n)))


@dataclasses.dataclass
class Settings:
    scale: float
    use_bias: bool
    names: tuple


def reads_dataclass_input(s, x):
    y = x * s.scale
    if s.use_bias:
        y = y + len(s.names)
    return y


add(SOURCE, "repro.dataclass_input_fields_change", reads_dataclass_input,
    lambda n: (Settings(pick(1.0, 2.0), pick(True, False), pick(("a",), ("a", "b"))), torch.randn(n)))


def module_counter_across_break(m, x):
    m.calls += 1
    print("break")
    m.calls += 1
    return x * m.calls


class CountingModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = pick(0, 5)


add(SOURCE, "repro.module_attribute_incremented_across_break", module_counter_across_break, lambda n: (CountingModule(), torch.randn(n)))
