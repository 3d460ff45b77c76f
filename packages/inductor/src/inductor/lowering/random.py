"""Random numbers generated inside kernels: rand/randn (and _like), native_dropout.

Each random op draws one int64 seed from torch's default generator per call (so
`torch.manual_seed` makes runs repeatable) and the kernel derives element `i`'s number from
(seed, i) with a counter-based generator (Philox). The stream differs from eager's.
"""

from __future__ import annotations

import sympy
import torch

from ..context import current_graph
from ..ir import ExternKernel, Layout, Pointwise
from ..ops import ops
from ..sizes import as_expr, contiguous_strides
from . import register_lowering
from .pointwise import broadcast_loader, cast

aten = torch.ops.aten


def _seed(device) -> callable:
    graph = current_graph()
    layout = Layout.contiguous(device, torch.int64, (1,))
    seed = graph.register_extern(ExternKernel(graph.new_name(), layout, "random_seed", (str(device),), {}))
    load = seed.make_loader()
    return lambda: load([sympy.Integer(0)])


def random_values(size, device, dtype, kind: str) -> Pointwise:
    size = tuple(as_expr(s) for s in size)
    load_seed = _seed(device)
    strides = contiguous_strides(size)

    def inner(index):
        offset = ops.index_expr(sum((i * s for i, s in zip(index, strides)), sympy.Integer(0)), torch.int64)
        return cast(getattr(ops, kind)(load_seed(), offset), torch.float32, dtype)

    return Pointwise(torch.device(device or "cpu"), dtype, size, inner)


@register_lowering(aten.rand.default)
def _rand(size, *, dtype=None, layout=None, device=None, pin_memory=None, generator=None):
    return random_values(size, device, dtype or torch.get_default_dtype(), "rand")


@register_lowering(aten.randn.default)
def _randn(size, *, dtype=None, layout=None, device=None, pin_memory=None, generator=None):
    return random_values(size, device, dtype or torch.get_default_dtype(), "randn")


@register_lowering(aten.rand_like.default)
def _rand_like(x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return random_values(x.size, x.device, dtype or x.dtype, "rand")


@register_lowering(aten.randn_like.default)
def _randn_like(x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return random_values(x.size, x.device, dtype or x.dtype, "randn")


@register_lowering(aten.native_dropout.default)
def native_dropout(x, p, train):
    if not train or p == 0:
        ones = Pointwise(x.device, torch.bool, x.size, lambda index: ops.constant(True, torch.bool))
        return x, ones
    uniform = random_values(x.size, x.device, torch.float32, "rand")
    load_u = uniform.make_loader()
    keep = Pointwise(x.device, torch.bool, x.size, lambda index: ops.lt(load_u(index), ops.constant(1 - p, torch.float32)))
    keep = current_graph().realize(keep)
    load_keep, load_x = keep.make_loader(), broadcast_loader(x, x.size)
    compute = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    scale = 1.0 / (1.0 - p)

    def inner(index):
        value = ops.mul(cast(load_x(index), x.dtype, compute), ops.constant(scale, compute))
        return cast(ops.where(load_keep(index), value, ops.constant(0, compute)), compute, x.dtype)

    return Pointwise(x.device, x.dtype, x.size, inner), keep
