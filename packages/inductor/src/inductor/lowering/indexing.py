"""Gathers and layout-building ops: cat, constant_pad_nd, gather, index, index_select, embedding.

Loads driven by runtime values go through `ops.indirect_indexing`. Where only some elements
read a given input (cat, pad), the index is clamped into that input's range and the value
discarded by `where`: every load stays in bounds, whichever way a backend evaluates `where`.
"""

from __future__ import annotations

import sympy
import torch

from ..context import current_graph
from ..ir import ExternKernel, IRNode, Pointwise
from ..ops import ops
from ..runtime.kernel_errors import BOUNDS_ERROR_CODES
from ..sizes import as_expr, clamp_index, product
from . import register_lowering
from .pointwise import broadcast_loader, broadcast_sizes, cast, promote, scalar_operand
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND as Kind

aten = torch.ops.aten
CHECK_TAKE = "inductor.runtime.kernel_errors.check_take"
INDEX_SELECT_OF_EMPTY = "index_select(): self indexing axis dim should be positive"  # embedding's too


@register_lowering(aten.cat.default)
def cat(tensors, dim=0):
    # Every input takes part in type promotion, empty ones too (as in eager); legacy empty
    # tensors (1-D of size 0) in nothing else, whatever the others' rank.
    _, dtype = promote(tensors, Kind.NO_OPMATH)
    shaped = [t for t in tensors if not (len(t.size) == 1 and t.size[0] == 0)] or tensors[:1]
    ndim = len(shaped[0].size)
    dim = dim + ndim if dim < 0 else dim
    offsets, total = [], sympy.Integer(0)
    for t in shaped:
        offsets.append(total)
        total = total + t.size[dim]
    size = list(shaped[0].size)
    size[dim] = total
    # Inputs empty along `dim` supply no element: no load of theirs, even a clamped one.
    loaders = [(t.make_loader(), t.dtype, t.size[dim], start) for t, start in zip(shaped, offsets) if t.size[dim] != 0]
    if not loaders:
        return Pointwise(shaped[0].device, dtype, tuple(size), lambda index: ops.constant(0, dtype))

    def inner(index):
        value = None
        for load, src, n, start in reversed(loaders):
            local = list(index)
            local[dim] = clamp_index(index[dim] - start, n) if len(loaders) > 1 else index[dim] - start
            piece = cast(load(local), src, dtype)
            if value is None:
                value = piece
            else:
                inside = ops.lt(ops.index_expr(index[dim], torch.int64), ops.index_expr(start + n, torch.int64))
                value = ops.where(inside, piece, value)
        return value

    return Pointwise(shaped[0].device, dtype, tuple(size), inner)


@register_lowering(aten.constant_pad_nd.default)
def constant_pad_nd(x, pad, value=0.0):
    ndim = len(x.size)
    size = list(x.size)
    lows = {}
    for k in range(len(pad) // 2):
        dim = ndim - 1 - k
        low, high = as_expr(pad[2 * k]), as_expr(pad[2 * k + 1])
        size[dim] = size[dim] + low + high
        if low != 0 or high != 0:
            lows[dim] = low
    load = x.make_loader()

    def inner(index):
        # Only padded dims are clamped and tested: a clamp (tl.minimum) hides from Triton that
        # consecutive elements are contiguous, so the kernel loses its vector loads (a matmul
        # operand padded along rows only keeps them along its unpadded columns).
        source = list(index)
        inside = None
        for dim, low in lows.items():
            shifted = index[dim] - low
            source[dim] = clamp_index(shifted, x.size[dim])
            position = ops.index_expr(shifted, torch.int64)
            in_dim = ops.lt(position, ops.index_expr(x.size[dim], torch.int64))
            if low != 0:
                in_dim = ops.logical_and(ops.ge(position, ops.constant(0, torch.int64)), in_dim)
            inside = in_dim if inside is None else ops.logical_and(inside, in_dim)
        loaded = load(source)
        return loaded if inside is None else ops.where(inside, loaded, scalar_operand(value, x.dtype))

    return Pointwise(x.device, x.dtype, tuple(size), inner)


def _indirect(load_index, index, size, eager_error=IndexError):
    return ops.indirect_indexing(load_index(index), size, eager_error)


def check_empty_take(size, count, eager_error, message) -> None:
    """Where `count` indices may go into a dimension of `size` that may be empty (`y[i]` of
    `y = x[x > 0]`), eager raises `eager_error(message)` on the host when it is: the wrapper
    checks it before the kernel runs (runtime/kernel_errors.py `check_take`)."""
    size, count = as_expr(size), as_expr(count)
    if size.is_positive or count.is_zero:
        return
    graph = current_graph()
    check = (size, count, BOUNDS_ERROR_CODES[eager_error], message)
    graph.register_extern(ExternKernel(graph.new_name(), None, CHECK_TAKE, check, {}, False, False, is_check=True))


@register_lowering(aten.gather.default)
def gather(x, dim, index, sparse_grad=False):
    dim = dim + len(x.size) if dim < 0 else dim
    load_x, load_index = x.make_loader(), index.make_loader()
    check_empty_take(x.size[dim] if x.size else 1, product(index.size), RuntimeError,
                     f"gather(): index out of bounds for dimension {dim} with size 0")

    def inner(idx):
        # Eager's gather raises RuntimeError for an index out of range (indexing ops raise IndexError).
        position = _indirect(load_index, idx, x.size[dim] if x.size else sympy.Integer(1), RuntimeError)
        if not x.size:
            return load_x([])  # a 0-d input: its one element, for an index that must be 0
        source = list(idx)
        source[dim] = position
        return load_x(source)

    return Pointwise(x.device, x.dtype, tuple(index.size), inner)


@register_lowering(aten.index_select.default)
def index_select(x, dim, index):
    load_x, load_index = x.make_loader(), index.make_loader()
    if not x.size:
        # A 0-d input gives a 0-d result: its one element, for an index that must be 0.
        def element(idx):
            _indirect(load_index, [sympy.Integer(0)] * len(index.size), sympy.Integer(1))
            return load_x([])

        return Pointwise(x.device, x.dtype, (), element)
    dim = dim + len(x.size) if dim < 0 else dim
    check_empty_take(x.size[dim], product(index.size), RuntimeError, INDEX_SELECT_OF_EMPTY)
    size = list(x.size)
    size[dim] = index.size[0] if index.size else sympy.Integer(1)

    def inner(idx):
        source = list(idx)
        source[dim] = _indirect(load_index, [idx[dim]] if index.size else [], x.size[dim])
        return load_x(source)

    return Pointwise(x.device, x.dtype, tuple(size), inner)


@register_lowering(aten.embedding.default)
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    load_w, load_i = weight.make_loader(), indices.make_loader()
    nidx = len(indices.size)
    check_empty_take(weight.size[0], product(indices.size), RuntimeError, INDEX_SELECT_OF_EMPTY)

    def inner(idx):
        row = _indirect(load_i, idx[:nidx], weight.size[0])
        return load_w([row, *idx[nidx:]])

    return Pointwise(weight.device, weight.dtype, (*indices.size, *weight.size[1:]), inner)


@register_lowering(aten.index.Tensor)
def index(x, indices):
    positions = [k for k, t in enumerate(indices) if t is not None]
    tensors = [indices[k] for k in positions]
    tensors = [_bool_mask_unsupported(t) for t in tensors]
    bsize = broadcast_sizes(*[t.size for t in tensors])
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    rest = [k for k in range(len(x.size)) if k not in positions]
    before = [k for k in rest if k < positions[0]] if adjacent else []
    after = [k for k in rest if k not in before]
    size = (*[x.size[k] for k in before], *bsize, *[x.size[k] for k in after])
    loaders = [broadcast_loader(t, bsize) for t in tensors]
    load_x = x.make_loader()
    nb = len(before)
    for k in positions:
        check_empty_take(x.size[k], product(bsize), IndexError, "index is out of bounds for dimension with size 0")

    def inner(idx):
        bidx = idx[nb : nb + len(bsize)]
        source = [None] * len(x.size)
        for k, i in zip(before, idx[:nb]):
            source[k] = i
        for k, i in zip(after, idx[nb + len(bsize) :]):
            source[k] = i
        for k, load in zip(positions, loaders):
            source[k] = ops.indirect_indexing(load(bidx), x.size[k])
        return load_x(source)

    return Pointwise(x.device, x.dtype, size, inner)


def _bool_mask_unsupported(t: IRNode) -> IRNode:
    if t.dtype == torch.bool:
        # A boolean mask's result size depends on the data: the aten fallback handles it.
        raise NotImplementedError("index with a boolean mask")
    return t
