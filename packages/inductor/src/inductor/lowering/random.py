"""Random ops drawn inside kernels, as torch.compile does by default (`fallback_random=False`).

Each random op of a graph gets one 64-bit seed; the seeds of one call are drawn together by a
single aten call (`randint` over int64, from torch's generator, so `torch.manual_seed` makes a
compiled program repeat itself). Element `i` of the op's result is then Philox(seed, i)
(`tl.rand`/`tl.randn` in Triton): a pure function of its position, so a random value can be
inlined into every reader, recomputed in a fused kernel, or fused into its consumers like any
other pointwise value, and a dropout's mask and output agree wherever each is computed.

The numbers differ from eager's kernels. Where a graph must draw eager's numbers (tests that
compare dropout masks with eager) `fallback_random=True` keeps random ops as aten calls, as the
C++ backend always does (its kernels have no Philox): see `GraphLowering.in_kernel_random`.
"""

from __future__ import annotations

import functools
import weakref

import sympy
import torch

from ..context import current_graph
from ..ir import IRNode, Pointwise
from ..ops import ops
from ..sizes import as_expr, contiguous_strides
from . import register_lowering
from .extern import extern_call
from .pointwise import operand_loaders

aten = torch.ops.aten

# The ops drawn in kernel; `_seed` counts them in a graph to size its seeds buffer.
DRAWN_IN_KERNEL = (
    aten.rand.default, aten.randn.default, aten.rand_like.default, aten.randn_like.default,
    aten.bernoulli.default, aten.bernoulli.p, aten.native_dropout.default,
)

# graph -> {device: (seeds buffer, seeds handed out so far)}
_seeds: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _seed(device: torch.device):
    """A loader of the next unused seed of this call, drawing the graph's seeds on first use."""
    graph = current_graph()
    per_device = _seeds.setdefault(graph, {})
    if device not in per_device:
        count = sum(1 for node in graph.module.graph.nodes if node.target in DRAWN_IN_KERNEL)
        traced = torch.empty(count, dtype=torch.int64, device="meta")
        low, high = torch.iinfo(torch.int64).min, torch.iinfo(torch.int64).max
        buffer = extern_call(aten.randint.low, (low, high, [count]), {"dtype": torch.int64, "device": device},
                             is_fallback=False, traced=traced)
        per_device[device] = [buffer, 0]
    entry = per_device[device]
    buffer, position = entry
    entry[1] += 1
    load = buffer.make_loader()
    return lambda: load([sympy.Integer(position)])


def _draw(kind: str, size, device: torch.device, dtype: torch.dtype) -> Pointwise:
    """`size` numbers from `ops.rand` or `ops.randn` (float32), cast to `dtype`."""
    size = tuple(as_expr(s) for s in size)
    strides = contiguous_strides(size)
    load_seed = _seed(device)

    def inner(index):
        offset = sum((i * s for i, s in zip(index, strides)), sympy.Integer(0))
        value = getattr(ops, kind)(load_seed(), ops.index_expr(offset, torch.int64))
        return ops.to_dtype(value, dtype) if dtype != torch.float32 else value

    return Pointwise(device, dtype, size, inner)


def _drawn_here(device) -> torch.device:
    """The device when its kernels draw random numbers; else NotImplementedError, which makes
    the op an aten call (graph.py's fallback) drawing eager's numbers."""
    device = torch.device(device)
    if not current_graph().in_kernel_random(device):
        raise NotImplementedError
    return device


def _random_like(kind, x: IRNode, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _draw(kind, x.size, _drawn_here(device or x.device), dtype or x.dtype)


def _random(kind, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _draw(kind, size, _drawn_here(device or "cpu"), dtype or torch.get_default_dtype())


for _kind in ("rand", "randn"):
    register_lowering(getattr(aten, f"{_kind}_like").default)(functools.partial(_random_like, _kind))
    register_lowering(getattr(aten, _kind).default)(functools.partial(_random, _kind))


@register_lowering(aten.bernoulli.default, aten.bernoulli.p)
def _bernoulli(x: IRNode, p=None, *, generator=None):
    if generator is not None:
        raise NotImplementedError
    uniform = _draw("rand", x.size, _drawn_here(x.device), torch.float32).make_loader()
    # bernoulli(x) draws with probability x elementwise, bernoulli(x, p) with probability p.
    (probability,) = operand_loaders([x if p is None else p], x.size, torch.float32)
    return Pointwise(x.device, x.dtype, x.size,
                     lambda index: ops.to_dtype(ops.lt(uniform(index), probability(index)), x.dtype))


@register_lowering(aten.native_dropout.default)
def _native_dropout(x: IRNode, p: float, train):
    # torch's decomposition of native_dropout: keep where a uniform draw exceeds p, scale by 1/(1-p).
    if not train or p == 0 or p == 1 or not x.dtype.is_floating_point:
        raise NotImplementedError  # eager's kernel: no draw, or all dropped
    uniform = _draw("rand", x.size, _drawn_here(x.device), torch.float32).make_loader()
    (load_x,) = operand_loaders([x], x.size, torch.float32)
    scale = 1.0 / (1.0 - p)

    def keep(index):
        return ops.gt(uniform(index), ops.constant(p, torch.float32))

    def output(index):
        kept = ops.where(keep(index), ops.mul(load_x(index), ops.constant(scale, torch.float32)),
                         ops.constant(0.0, torch.float32))
        return ops.to_dtype(kept, x.dtype) if x.dtype != torch.float32 else kept

    return Pointwise(x.device, x.dtype, x.size, output), Pointwise(x.device, torch.bool, x.size, keep)
