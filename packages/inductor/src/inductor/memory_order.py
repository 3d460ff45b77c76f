"""Where a value's dims lie in memory: the order eager's strides give a traced value, and
whether a layout holds its dims in a given order (with or without gaps). Lowering keeps
eager's order (channels-last stays channels-last) when it computes values into memory."""

from __future__ import annotations

import sympy
import torch

from .input_symbols import hint_of
from .ir import Layout, ReinterpretView, storage_of


def memory_order(val) -> list[int] | None:
    """A traced tensor's dims from outermost to innermost in memory when it is dense (no gaps,
    no overlap) with static strides; None otherwise, and for anything not a tensor."""
    if not isinstance(val, torch.Tensor):
        return None
    order = static_dense_order(list(val.shape), list(val.stride()))  # first: numel() of symbolic sizes guards
    return None if order is None or val.numel() == 0 else order


def static_dense_order(sizes, strides) -> list[int] | None:
    """The dims from outermost to innermost in memory of static sizes and strides (ints or
    sympy integers) holding every element once; None if they do not, or are symbolic."""
    if not all(isinstance(v, (int, sympy.Integer)) for v in (*sizes, *strides)):
        return None
    sizes, strides = [int(v) for v in sizes], [int(v) for v in strides]
    order = sorted(range(len(sizes)), key=lambda d: (-strides[d], d))
    return order if dense_in_order(sizes, strides, order) else None


def dense_in_order(sizes, strides, order: list[int]) -> bool:
    """Whether sizes and strides (ints, or sympy expressions) hold every element with no gaps,
    the dims outermost to innermost in `order`."""
    expected = 1
    for d in reversed(order):
        if sizes[d] != 1 and strides[d] != expected and sympy.expand(strides[d] - expected) != 0:
            return False
        expected *= sizes[d]
    return True


def dense_strides(sizes, order) -> tuple:
    """The strides that hold `sizes` with no gaps, dims outermost to innermost in `order`."""
    strides, span = [None] * len(sizes), sympy.Integer(1)
    for d in reversed(order):
        strides[d] = span
        span = span * sizes[d]
    return tuple(strides)


def with_dense_strides(value, order):
    """`value`, a buffer or view dense in `order`, viewed with exactly `dense_strides`: a size-1
    dim's stride is free in our layouts (a batch of one is viewed at stride 0), but aten reads
    a stride-0 batch as row-major (a convolution then copies a channels-last input back and
    runs its row-major kernel), and a graph reading the tensor later expects these strides."""
    strides = dense_strides(value.size, order)
    if all(sympy.expand(a - b) == 0 for a, b in zip(value.layout.stride, strides)):
        return value
    return ReinterpretView(storage_of(value), Layout(value.device, value.dtype, tuple(value.size), strides,
                                                     value.layout.offset))


def strided_in_order(layout: Layout, order: list[int]) -> bool:
    """Whether `layout`'s dims (size-1 dims aside) lie in memory in `order`, outermost first,
    each dim's elements apart by at least the span of the dims inside it (no overlap; gaps allowed)."""
    dims = [d for d in order if layout.size[d] != 1]
    if not all(isinstance(layout.stride[d], sympy.Integer) and isinstance(layout.size[d], sympy.Integer) for d in dims):
        return False
    span = 1
    for d in reversed(dims):
        if int(layout.stride[d]) < span:
            return False
        span = int(layout.stride[d]) * int(layout.size[d])
    return True


def strides_match(layout: Layout, val: torch.Tensor) -> bool:
    """Whether `layout` has `val`'s strides (size-1 dims aside)."""
    return all(n == 1 or s == v for n, s, v in zip(layout.size, layout.stride, val.stride()))




def strides_to_keep(val) -> tuple | None:
    """A traced tensor's strides (ints or SymInts) that memory_order does not keep, when they do
    not overlap its elements: gapped ones (aten.copy of x[:, :, 0:1] keeps x's strides in
    eager) and symbolic ones in another order than row-major (a (2, s0, 64) product of a
    transposed conv output: (64*s0, 1, s0)). None for dense static strides (memory_order's),
    overlapping (expanded) or data-dependent ones, and for empty tensors. Overlap is judged at
    the example sizes."""
    if not isinstance(val, torch.Tensor) or memory_order(val) is not None:
        return None
    sizes, strides = [hint_of(n) for n in val.shape], [hint_of(s) for s in val.stride()]
    if None in sizes or None in strides or 0 in sizes:
        return None
    span = 1
    for d in sorted((d for d in range(len(sizes)) if sizes[d] != 1), key=lambda d: strides[d]):
        if strides[d] < span:
            return None  # overlapping: a view eager returns (an expand), not memory of its own
        span = strides[d] * sizes[d]
    return tuple(val.stride())
