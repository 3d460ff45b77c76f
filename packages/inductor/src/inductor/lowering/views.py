"""Views as index remaps: view/reshape, permute, expand, slice, select, (un)squeeze, as_strided.

Each builds a `GenericView` (new index -> old index); over a buffer, a remap that stays affine
becomes a `ReinterpretView` (plain strides), which extern kernels can take without a copy.
"""

from __future__ import annotations

import functools

import sympy
import torch

from ..context import current_graph
from ..ir import GenericView, IRNode, Layout, ReinterpretView, storage_of
from ..sizes import FloorDiv, PythonMod, affine_coefficient, as_expr, loop_vars, product, simplify_index
from . import register_lowering

aten = torch.ops.aten


def make_view(data: IRNode, size, reindex) -> IRNode:
    """A view of `data`; strided when `data` is storage and the remap is affine."""
    size = tuple(as_expr(s) for s in size)
    view = GenericView(data, size, reindex)
    base = storage_of(data)
    if base is None:
        return view
    index = loop_vars("v", len(size))
    return strided_view(base, size, index, data.layout.index(reindex(index))) or view


def strided_view(base, size, index, flat) -> ReinterpretView | None:
    """`base` read at `flat` (an expression of the loop variables `index` over `size`) as a
    strided view, when `flat` is affine in them; else None."""
    flat = simplify_index(flat)
    strides = []
    for var in index:
        coeff = affine_coefficient(flat, var)
        if coeff is None:
            return None
        strides.append(coeff)
    offset = flat.subs({v: 0 for v in index})
    if offset.free_symbols & set(index) or any(s.free_symbols & set(index) for s in strides):
        return None
    return ReinterpretView(base, Layout(base.device, base.dtype, tuple(size), tuple(strides), offset))


def _dim(dim, ndim):
    return dim + ndim if dim < 0 else dim


def reshape_reindex(old_size, new_size):
    """new index -> old index for a row-major reshape: each group of new dims is flattened and
    unflattened over the old dims whose sizes multiply to the same number."""
    if any(size == 0 for size in old_size):
        # An empty tensor: no element is read (its loops never run), and unflattening over a
        # size of 0 would be a `% 0` (the backward of matmul over an empty inner dimension).
        return lambda index: [sympy.Integer(0)] * len(old_size)
    groups = reshape_groups(old_size, new_size)

    def reindex(index):
        old = [sympy.Integer(0)] * len(old_size)
        for og, ng in groups:
            flat = sympy.Integer(0)
            for k in ng:
                flat = flat * new_size[k] + index[k]
            divisor = sympy.Integer(1)
            for k in reversed(og):
                part = FloorDiv(flat, divisor)
                old[k] = part if k == og[0] else PythonMod(part, old_size[k])
                divisor = divisor * old_size[k]
        return old

    return reindex


def reshape_groups(old_size, new_size) -> list[tuple[list[int], list[int]]]:
    """Pairs (old dims, new dims) whose size products are equal at every size the graph accepts
    (dims of size 1 take part in none). Hints only choose which side to extend; a group closes on
    a symbolic equality, so the remap holds at any size. When the sizes left cannot be matched
    symbolically (equal only under a guard such as `s0*s1 == s2*s3`), all of them form one last
    group: flattening everything left is correct for any sizes with the same numel."""
    hint = current_graph().hint
    old = [k for k, n in enumerate(old_size) if n != 1]
    new = [k for k, n in enumerate(new_size) if n != 1]
    groups: list[tuple[list[int], list[int]]] = []
    oi = ni = 0
    while oi < len(old) and ni < len(new):
        og, ng = [old[oi]], [new[ni]]
        po, pn = old_size[old[oi]], new_size[new[ni]]
        oi, ni = oi + 1, ni + 1
        while not _same_numel(po, pn):
            grow_old = oi < len(old) and (ni == len(new) or hint(po) < hint(pn))
            if grow_old:
                og.append(old[oi])
                po = po * old_size[old[oi]]
                oi += 1
            elif ni < len(new):
                ng.append(new[ni])
                pn = pn * new_size[new[ni]]
                ni += 1
            else:
                break
        groups.append((og, ng))
    rest = (old[oi:], new[ni:])
    if rest[0] or rest[1]:
        if groups:
            groups[-1][0].extend(rest[0])
            groups[-1][1].extend(rest[1])
        else:
            groups.append(rest)
    return groups


def _same_numel(a, b) -> bool:
    """Whether two products of sizes are equal. A view's sizes divide exactly (the -1 one is a
    FloorDiv that leaves no remainder), so FloorDiv(n, d) compares as n / d."""
    def exact(expr):
        return expr.replace(FloorDiv, lambda n, d: n / d)

    difference = exact(a) - exact(b)
    # A difference that is not 0 at the example's sizes is not 0 at every size. Most pairs
    # differ (a group grows until its products match): settled here without algebra.
    # (xreplace of a lone symbol hands back the hint itself, a Python int.)
    at_example = sympy.sympify(difference.xreplace(current_graph().hints))
    if at_example.is_Number and at_example != 0:
        return False
    return _identically_zero(difference)


# Memoized: the same products meet at every view of a model's repeated blocks.
@functools.lru_cache(maxsize=4096)
def _identically_zero(expr) -> bool:
    # Expanding settles most: a polynomial that expands to 0 is 0, one that expands to another
    # number is never 0. simplify (what a rational difference needs) costs 100 times more.
    expanded = sympy.expand(expr)
    if expanded.is_Number:
        return expanded == 0
    return sympy.simplify(expr) == 0


def view(x: IRNode, size) -> IRNode:
    size = [as_expr(s) for s in size]
    if -1 in size:
        # An exact quotient, kept a FloorDiv: numel / known would be a fraction (s1/2) when sizes
        # are symbolic, and sympy distributes it over a sum (`(s0 + (-s0 % 64)) / 64` becomes
        # `s0/64 + (-s0 % 64)/64`, no index C++ or Triton can print). FloorDiv cancels the
        # factors the two share.
        size[size.index(-1)] = FloorDiv(x.get_numel(), product(s for s in size if s != -1))
    if tuple(size) == tuple(x.size):
        return x
    return make_view(x, size, reshape_reindex(tuple(x.size), tuple(size)))


@register_lowering(aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.view_copy.default)
def _view(x, size):
    return view(x, size)


@register_lowering(aten.permute.default)
def permute(x, dims):
    dims = [_dim(d, len(x.size)) for d in dims]
    inverse = [dims.index(k) for k in range(len(dims))]
    return make_view(x, [x.size[d] for d in dims], lambda index: [index[inverse[k]] for k in range(len(dims))])


@register_lowering(aten.t.default)
def _t(x):
    return permute(x, [1, 0]) if len(x.size) == 2 else x


@register_lowering(aten.transpose.int)
def _transpose(x, dim0, dim1):
    dims = list(range(len(x.size)))
    a, b = _dim(dim0, len(dims)), _dim(dim1, len(dims))
    dims[a], dims[b] = dims[b], dims[a]
    return permute(x, dims)


@register_lowering(aten.expand.default)
def expand(x, size):
    size = [as_expr(s) for s in size]
    offset = len(size) - len(x.size)
    size = [x.size[k - offset] if s == -1 else s for k, s in enumerate(size)]
    if tuple(size) == tuple(x.size):
        return x
    own = x.size
    return make_view(
        x, size, lambda index: [sympy.Integer(0) if own[k] == 1 else index[k + offset] for k in range(len(own))]
    )


def slice_bounds(n, start, end) -> tuple:
    """`start` and `end` of a slice of a dimension of `n`, as torch's slice reads them:
    negative ones from the end, then clamped into [0, n], and an end before the start moved
    to the start."""
    graph = current_graph()
    start = 0 if start is None else as_expr(start)
    end = n if end is None else as_expr(end)
    if graph.decide(sympy.Lt(start, 0)):
        start = start + n
    if graph.decide(sympy.Lt(end, 0)):
        end = end + n
    # Clamped to n only past it, as torch's slice does (`end > size`), so the tracer's guard
    # holds for this choice: `x[2:4]` of a dynamic x traced at n = 4 is two long at every n >= 4,
    # where `end >= n` made it n - 2.
    start = sympy.Integer(0) if graph.decide(sympy.Lt(start, 0)) else (n if graph.decide(sympy.Gt(start, n)) else start)
    end = n if graph.decide(sympy.Gt(end, n)) else (sympy.Integer(0) if graph.decide(sympy.Lt(end, 0)) else end)
    # An end before the start is the start, as torch's slice makes it (the tracer guarded this
    # choice too): x[k - n : k + w - n] at k + w = n ends at 0, before its start k, and is
    # empty, where the span k + w - n - k gave a negative length.
    if graph.decide(sympy.Lt(end, start)):
        end = start
    return start, end


@register_lowering(aten.slice.Tensor)
def slice_(x, dim=0, start=None, end=None, step=1):
    dim = _dim(dim, len(x.size))
    n = x.size[dim]
    start, end = slice_bounds(n, start, end)
    span = end - start
    if isinstance(span, sympy.Integer):
        length = sympy.Integer(max(0, -(-int(span) // step)))
    else:
        length = span if step == 1 else FloorDiv(span + step - 1, step)
    if start == 0 and step == 1 and end == n:
        return x
    size = list(x.size)
    size[dim] = length

    def reindex(index):
        old = list(index)
        old[dim] = start + step * index[dim]
        return old

    return make_view(x, size, reindex)


@register_lowering(aten.select.int)
def select(x, dim, index):
    dim = _dim(dim, len(x.size))
    index = as_expr(index)
    if current_graph().decide(sympy.Lt(index, 0)):
        index = index + x.size[dim]
    size = [s for k, s in enumerate(x.size) if k != dim]
    return make_view(x, size, lambda idx: [*idx[:dim], index, *idx[dim:]])


@register_lowering(aten.unsqueeze.default)
def unsqueeze(x, dim):
    dim = _dim(dim, len(x.size) + 1)
    size = [*x.size[:dim], sympy.Integer(1), *x.size[dim:]]
    return make_view(x, size, lambda idx: [*idx[:dim], *idx[dim + 1 :]])


@register_lowering(aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default)
def squeeze(x, dim=None):
    ndim = len(x.size)
    dims = range(ndim) if dim is None else [_dim(d, ndim) for d in ([dim] if isinstance(dim, int) else dim)]
    # By the example's sizes: the tracer guarded on them (the last piece of unbind's
    # decomposition, `x[8:]` of an s0-long x, is s0 - 8 here, and 1 wherever this graph runs).
    graph = current_graph()
    drop = [d for d in dims if graph.decide(sympy.Eq(x.size[d], 1))]
    if not drop:
        return x
    keep = [k for k in range(ndim) if k not in drop]

    def reindex(idx):
        old = [sympy.Integer(0)] * ndim
        for pos, k in enumerate(keep):
            old[k] = idx[pos]
        return old

    return make_view(x, [x.size[k] for k in keep], reindex)


@register_lowering(aten.alias.default, aten.detach.default, aten.lift_fresh.default)
def _identity(x):
    return x


@register_lowering(aten.as_strided.default)
def as_strided(x, size, stride, storage_offset=None):
    base = current_graph().realize(x)
    buffer = storage_of(base)
    offset = as_expr(storage_offset) if storage_offset is not None else (
        base.layout.offset if isinstance(base, ReinterpretView) else sympy.Integer(0)
    )
    layout = Layout(x.device, x.dtype, tuple(map(as_expr, size)), tuple(map(as_expr, stride)), offset)
    return ReinterpretView(buffer, layout)


@register_lowering(aten.split.Tensor, aten.split_with_sizes.default)
def split(x, split_size, dim=0):
    """Slices of `x` along `dim`; sizes may be symbolic (`chunk` of an `s1` dim gives
    `(s1 + 1) // 2` and the rest), so they are added as expressions, never read as ints."""
    dim = _dim(dim, len(x.size))
    n = x.size[dim]
    if isinstance(split_size, (list, tuple)):
        sizes = [as_expr(s) for s in split_size]
    else:
        split_size = as_expr(split_size)
        # As many pieces as at the example size (the captured graph's output count is guarded);
        # the last takes what is left.
        count = max(1, -(-current_graph().hint(n) // current_graph().hint(split_size)))
        sizes = [split_size] * (count - 1) + [n - split_size * (count - 1)]
    pieces, start = [], sympy.Integer(0)
    for piece in sizes:
        pieces.append(slice_(x, dim, start, start + piece))
        start = start + piece
    return pieces


@register_lowering(aten.unbind.int)
def unbind(x, dim=0):
    dim = _dim(dim, len(x.size))
    return [select(x, dim, k) for k in range(current_graph().hint(x.size[dim]))]
