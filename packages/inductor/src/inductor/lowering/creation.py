"""Tensors made from nothing: full/zeros/ones (and their _like forms), scalar_tensor, arange, iota."""

from __future__ import annotations

import sympy
import torch

from ..context import current_graph
from ..ir import Pointwise
from ..ops import ops
from ..sizes import as_expr
from . import register_lowering
from .pointwise import scalar_operand

aten = torch.ops.aten


def _scalar_dtype(value) -> torch.dtype:
    if isinstance(value, bool):
        return torch.bool
    integer = isinstance(value, int) or (isinstance(value, sympy.Basic) and value.is_integer)
    return torch.int64 if integer else torch.get_default_dtype()


def full(size, value, dtype, device) -> Pointwise:
    dtype = dtype or _scalar_dtype(value)
    # A fill value may be one the sizes give (multilabel_margin_loss fills with the class count).
    return Pointwise(torch.device(device or "cpu"), dtype, tuple(as_expr(s) for s in size),
                     lambda index: scalar_operand(value, dtype))


@register_lowering(aten.full.default)
def _full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return full(size, fill_value, dtype, device)


@register_lowering(aten.scalar_tensor.default)
def _scalar_tensor(value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return full((), value, dtype or torch.get_default_dtype(), device)


def _like(x, value, dtype, device):
    return full(x.size, value, dtype or x.dtype, device or x.device)


@register_lowering(aten.full_like.default)
def _full_like(x, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _like(x, fill_value, dtype, device)


@register_lowering(aten.zeros_like.default, aten.empty_like.default)
def _zeros_like(x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _like(x, 0, dtype, device)


@register_lowering(aten.ones_like.default)
def _ones_like(x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _like(x, 1, dtype, device)


@register_lowering(aten.zeros.default, aten.empty.memory_format)
def _zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return full(size, 0, dtype or torch.get_default_dtype(), device)


@register_lowering(aten.ones.default)
def _ones(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return full(size, 1, dtype or torch.get_default_dtype(), device)


@register_lowering(aten.arange.start_step, aten.arange.start, aten.arange.default)
def arange(start, end=None, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    if end is None:
        start, end = 0, start
    is_float = any(isinstance(v, float) for v in (start, end, step))
    dtype = dtype or (torch.get_default_dtype() if is_float else torch.int64)
    # The length as the tracer computed it: with a symbolic end (`torch.arange(x.shape[0])`)
    # it is a size expression, and float bounds round as eager's do.
    graph = current_graph()
    (length,) = graph.current_val().shape
    compute = torch.float64 if dtype.is_floating_point else torch.int64

    def inner(index):
        position = ops.to_dtype(ops.index_expr(index[0], torch.int64), compute)
        value = ops.add(ops.mul(position, scalar_operand(step, compute)), scalar_operand(start, compute))
        return ops.to_dtype(value, dtype)

    return Pointwise(torch.device(device or "cpu"), dtype, (graph.sympify(length),), inner)


