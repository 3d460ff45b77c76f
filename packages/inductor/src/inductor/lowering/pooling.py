"""Max-pool 2-d, forward and backward, as pointwise bodies that fuse with their neighbours.

Forward: one body per output element scanning its window, unrolled (windows of at most
`MAX_LOWERED_WINDOW` elements; larger ones stay aten calls). It follows eager's kernel: the
running max starts at the window's first in-bounds element, a later element wins if it is
greater or NaN (so on ties the first in window order wins, and a NaN is the max: the last
NaN's position is the index), padding is never read. It yields the max and the winner as an
int8 window offset (`kh * KW + kw`) or eager's int64 index (`ih * W + iw`).

Backward: one body per *input* element summing, over the few output windows that contain it,
the gradient of each output whose winner is this element; in output order, as eager's kernel
adds them. The winner comes from the saved offsets (max_pool_ops.py) or indices.
"""

from __future__ import annotations


import sympy
import torch
from fake_tensor.symbolic import FloorDiv, PythonMod

from ..context import current_graph
from ..ir import IRNode, Pointwise
from ..max_pool_ops import (
    PoolGeometry, lowered_as_kernel, max_pool2d_offsets_to_indices, max_pool2d_with_offsets,
    max_pool2d_with_offsets_backward,
)
from ..ops import ops
from ..sizes import clamp_index
from . import register_lowering
from .extern import extern
from .pointwise import cast, opmath_dtype

aten = torch.ops.aten


def _and(a, b):
    """Conjunction of conditions where None stands for "always true"."""
    if a is None or b is None:
        return b if a is None else a
    return ops.logical_and(a, b)


def _window_max(x: IRNode, geometry: PoolGeometry, ceil_mode: bool, winner_of):
    """index -> (max, winner) over output `index`'s window; `winner_of(kh, kw, ih, iw)` gives
    the ops value naming an element (its offset or its index)."""
    load = x.make_loader()
    height, width = x.size[-2:]
    compute = opmath_dtype(x.dtype)
    (kernel_h, kernel_w), (stride_h, stride_w) = geometry.kernel, geometry.stride
    (pad_h, pad_w), (dil_h, dil_w) = geometry.padding, geometry.dilation

    def inside(position, low_needed, high_needed, size):
        """Whether `position` lies in [0, size): None where it does for every output."""
        test = None
        if low_needed:
            test = ops.ge(ops.index_expr(position, torch.int64), ops.constant(0, torch.int64))
        if high_needed:
            test = _and(test, ops.lt(ops.index_expr(position, torch.int64), ops.index_expr(size, torch.int64)))
        return test

    def scan(index):
        *batch, oh, ow = index
        best = winner = found = None
        for kh in range(kernel_h):
            ih = oh * stride_h - pad_h + kh * dil_h
            # Without ceil_mode the last window ends at most `pad` past the input's end.
            in_h = inside(ih, kh * dil_h < pad_h, ceil_mode or (kernel_h - 1 - kh) * dil_h < pad_h, height)
            for kw in range(kernel_w):
                iw = ow * stride_w - pad_w + kw * dil_w
                in_w = inside(iw, kw * dil_w < pad_w, ceil_mode or (kernel_w - 1 - kw) * dil_w < pad_w, width)
                valid = _and(in_h, in_w)
                value = cast(load([*batch, clamp_index(ih, height), clamp_index(iw, width)]), x.dtype, compute)
                tag = winner_of(kh, kw, ih, iw)
                if best is None:
                    if valid is None:
                        best, winner, found = value, tag, True
                    else:
                        best = ops.where(valid, value, ops.constant(float("-inf"), compute))
                        winner, found = tag, valid
                    continue
                update = ops.logical_or(ops.gt(value, best), ops.isnan(value))
                if found is not True:
                    update = ops.logical_or(update, ops.logical_not(found))
                update = _and(valid, update)
                best = ops.where(update, value, best)
                winner = ops.where(update, tag, winner)
                if found is not True:
                    found = True if valid is None else ops.logical_or(found, valid)
        return cast(best, compute, x.dtype), winner

    return scan


def _output_size(value_of_output: torch.Tensor) -> tuple:
    graph = current_graph()
    return tuple(graph.sympify(s) for s in value_of_output.shape)


def _offset_of(geometry: PoolGeometry):
    return lambda kh, kw, ih, iw: ops.constant(kh * geometry.kernel[1] + kw, torch.int8)


def _index_of(width):
    return lambda kh, kw, ih, iw: ops.index_expr(ih * width + iw, torch.int64)


def _pool_outputs(x, geometry, ceil_mode, winner_dtype, winner_of):
    size = _output_size(current_graph().current_val()[0])
    scan = _window_max(x, geometry, ceil_mode, winner_of)
    values = Pointwise(x.device, x.dtype, size, lambda index: scan(index)[0])
    winners = Pointwise(x.device, winner_dtype, size, lambda index: scan(index)[1])
    return values, winners


@register_lowering(aten.max_pool2d_with_indices.default)
def _max_pool2d_with_indices(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    geometry = PoolGeometry.of(kernel_size, stride, padding, dilation)
    if not lowered_as_kernel(x.dtype, geometry) or not _scans_windows_in_kernels(x.device):
        return extern(aten.max_pool2d_with_indices.default, (x, kernel_size, stride, padding, dilation, ceil_mode), {})
    return _pool_outputs(x, geometry, ceil_mode, torch.int64, _index_of(x.size[-1]))


def _scans_windows_in_kernels(device) -> bool:
    """Whether a pool that saves no offsets (inference) is a generated kernel on `device`: in
    Triton's, fused with its neighbours; C++ loops scan each window slower than ATen's
    vectorized CPU pool (a ResNet-18's stem pool, 2 cores: ~3 ms more per call). A training
    pool's offsets (passes/max_pool_offsets.py) are generated on both."""
    return current_graph().targets.backend(device).name == "triton"


@register_lowering(max_pool2d_with_offsets)
def _max_pool2d_with_offsets(x, kernel_size, stride, padding, dilation, ceil_mode):
    geometry = PoolGeometry.of(kernel_size, stride, padding, dilation)
    if not lowered_as_kernel(x.dtype, geometry):
        raise NotImplementedError  # passes/max_pool_offsets.py only writes the ones lowered here
    values, offsets = _pool_outputs(x, geometry, ceil_mode, torch.int8, _offset_of(geometry))
    # The offsets, saved for the backward, are computed now, beside the values: left lazy they
    # would be realized with the forward's outputs at its end, a second scan of the windows
    # (and of the recomputed activation they read) in a kernel of their own.
    return values, current_graph().realize_like_traced(offsets, output=1)


def _window_position(offset, geometry: PoolGeometry):
    """(kh, kw) of an int8 window offset, as int32 ops values."""
    offset = ops.to_dtype(offset, torch.int32)
    columns = ops.constant(geometry.kernel[1], torch.int32)
    return ops.floordiv(offset, columns), ops.mod(offset, columns)


@register_lowering(max_pool2d_offsets_to_indices)
def _offsets_to_indices(offsets, kernel_size, stride, padding, dilation, input_width):
    geometry = PoolGeometry.of(kernel_size, stride, padding, dilation)
    load = offsets.make_loader()
    width = current_graph().sympify(input_width)

    def index_of(index):
        *_, oh, ow = index
        kh, kw = (ops.to_dtype(k, torch.int64) for k in _window_position(load(index), geometry))
        ih = ops.add(ops.index_expr(oh * geometry.stride[0] - geometry.padding[0], torch.int64),
                     ops.mul(kh, ops.constant(geometry.dilation[0], torch.int64)))
        iw = ops.add(ops.index_expr(ow * geometry.stride[1] - geometry.padding[1], torch.int64),
                     ops.mul(kw, ops.constant(geometry.dilation[1], torch.int64)))
        return ops.add(ops.mul(ih, ops.index_expr(width, torch.int64)), iw)

    return Pointwise(offsets.device, torch.int64, offsets.size, index_of)


def _candidates(position, pad: int, kernel: int, stride: int, dilation: int):
    """The outputs along one dim whose window may hold input `position`, as (output, distance
    of `position` from that window's origin) pairs. The first one's window reaches `position`;
    later ones may start past it (negative distance) or lie past the last output."""
    span = (kernel - 1) * dilation
    count = span // stride + 1
    # The first output whose window reaches `position`: ceil((position + pad - span) / stride),
    # shifted by `count` strides so that FloorDiv's numerator is never negative.
    first = sympy.Max(0, FloorDiv(position + pad - span - 1 + stride * count, stride) - count + 1)
    return [(first + j, position + pad - (first + j) * stride) for j in range(count)]


def _gather_gradients(grad: IRNode, winners: IRNode, input_hw, geometry: PoolGeometry, wins):
    """Pointwise over the input: the sum of the gradients of the outputs won by each element.
    `wins(winner, distance_h, distance_w, ih, iw)` says whether a loaded winner is this element."""
    graph = current_graph()
    height, width = (graph.sympify(s) for s in input_hw)
    out_h, out_w = grad.size[-2:]
    load_grad, load_winner = grad.make_loader(), winners.make_loader()
    compute = opmath_dtype(grad.dtype)

    def body(index):
        *batch, ih, iw = index
        total = ops.constant(0.0, compute)
        rows = _candidates(ih, geometry.padding[0], geometry.kernel[0], geometry.stride[0], geometry.dilation[0])
        columns = _candidates(iw, geometry.padding[1], geometry.kernel[1], geometry.stride[1], geometry.dilation[1])
        for oh, distance_h in rows:
            for ow, distance_w in columns:
                at = [*batch, sympy.Min(oh, out_h - 1), sympy.Min(ow, out_w - 1)]
                hit = ops.logical_and(
                    ops.logical_and(ops.lt(ops.index_expr(oh, torch.int64), ops.index_expr(out_h, torch.int64)),
                                    ops.lt(ops.index_expr(ow, torch.int64), ops.index_expr(out_w, torch.int64))),
                    wins(load_winner(at), distance_h, distance_w, ih, iw),
                )
                gradient = cast(load_grad(at), grad.dtype, compute)
                total = ops.add(total, ops.where(hit, gradient, ops.constant(0.0, compute)))
        return cast(total, compute, grad.dtype)

    return Pointwise(grad.device, grad.dtype, (*grad.size[:-2], height, width), body)


def _offset_wins(geometry: PoolGeometry):
    """An offset names this element when the element lies in that output's window (distances
    from the window's origin >= 0, multiples of the dilation) exactly there: one comparison of
    the loaded offset with an index expression, no division of loaded values."""
    (_, kernel_w), (dilation_h, dilation_w) = geometry.kernel, geometry.dilation

    def wins(offset, distance_h, distance_w, ih, iw):
        in_window = None
        for distance, dilation in ((distance_h, dilation_h), (distance_w, dilation_w)):
            # (Candidates never lie past the window's far end: `_candidates` starts there.)
            in_window = _and(in_window, ops.ge(ops.index_expr(distance, torch.int32), ops.constant(0, torch.int32)))
            if dilation > 1:
                remainder = ops.index_expr(PythonMod(distance, dilation), torch.int32)
                in_window = ops.logical_and(in_window, ops.eq(remainder, ops.constant(0, torch.int32)))
        expected = FloorDiv(distance_h, dilation_h) * kernel_w + FloorDiv(distance_w, dilation_w)
        return ops.logical_and(in_window, ops.eq(ops.to_dtype(offset, torch.int32), ops.index_expr(expected, torch.int32)))

    return wins


def _index_wins(width):
    return lambda index, distance_h, distance_w, ih, iw: ops.eq(index, ops.index_expr(ih * width + iw, torch.int64))


@register_lowering(max_pool2d_with_offsets_backward)
def _max_pool2d_with_offsets_backward(grad, offsets, input_hw, kernel_size, stride, padding, dilation, ceil_mode):
    geometry = PoolGeometry.of(kernel_size, stride, padding, dilation)
    return _gather_gradients(grad, offsets, input_hw, geometry, _offset_wins(geometry))


@register_lowering(aten.max_pool2d_with_indices_backward.default)
def _max_pool2d_with_indices_backward(grad, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    geometry = PoolGeometry.of(kernel_size, stride, padding, dilation)
    if not lowered_as_kernel(x.dtype, geometry):
        args = (grad, x, kernel_size, stride, padding, dilation, ceil_mode, indices)
        return extern(aten.max_pool2d_with_indices_backward.default, args, {})
    # A gather: it assumes what autograd hands it, indices that max_pool2d_with_indices chose
    # (each inside its output's window); eager's scatter would also take any other index.
    return _gather_gradients(grad, indices, x.size[-2:], geometry, _index_wins(x.size[-1]))
