"""Scatters: index_put, scatter, scatter_add, scatter_reduce, index_add: values written at
positions the data decides.

A scatter is not a function of its output position, so in general it is no Pointwise:

- A scatter of one value per row along `dim` (index of size 1 there, the input's size
  elsewhere: a one-hot, as nll_loss's backward scatters -1 at each row's target) is one:
  out[..., j, ...] = src if j == index[..., 0, ...] else self. It fuses with its readers and
  writes no buffer.
- Every other scatter runs as aten's in-place op on a buffer the graph owns: `self` itself when
  nothing else can see its memory (the zeros an embedding's backward accumulates into, a
  matmul result read only here), else a copy of it. The functional op would clone `self`
  first: in GPT-2's backward that is a second 154 MB gradient of the tied embedding, written
  once more than needed.
"""

from __future__ import annotations

import sympy
import torch
import torch.fx

from ..context import current_graph
from ..ir import ComputedBuffer, ExternKernel, GenericView, IRNode, MultiOutput, Pointwise, Reduction, storage_of
from ..ops import ops
from ..sizes import as_expr, clamp_index, product
from . import register_lowering
from .extern import extern_call, fallback
from .indexing import check_empty_take
from .pointwise import cast, scalar_operand
from .views import slice_bounds

aten = torch.ops.aten

# Each functional scatter and the in-place op that does its work on a buffer the graph owns.
IN_PLACE = {
    aten.index_put.default: aten.index_put_.default,
    aten.scatter.src: aten.scatter_.src,
    aten.scatter.value: aten.scatter_.value,
    aten.scatter.reduce: aten.scatter_.reduce,
    aten.scatter.value_reduce: aten.scatter_.value_reduce,
    aten.scatter_add.default: aten.scatter_add_.default,
    aten.scatter_reduce.two: aten.scatter_reduce_.two,
    aten.index_add.default: aten.index_add_.default,
}


@register_lowering(aten.scatter.src, aten.scatter.value)
def scatter(self, dim, index, src):
    dim = dim + len(self.size) if dim < 0 and self.size else dim
    if _one_per_row(self, dim, index) and (isinstance(src, IRNode) or type(src) in (int, float, bool)):
        return _select_one_per_row(self, dim, index, src)
    op = aten.scatter.src if isinstance(src, IRNode) else aten.scatter.value
    return in_place(op, self, dim, index, src)


@register_lowering(aten.index_put.default, aten.scatter.reduce, aten.scatter.value_reduce, aten.scatter_add.default,
                   aten.scatter_reduce.two, aten.index_add.default)
def _scatter_in_place(self, *args, **kwargs):
    return in_place(current_graph().current_node.target, self, *args, **kwargs)


@register_lowering(aten.slice_scatter.default)
def slice_scatter(base, src, dim=0, start=None, end=None, step=1):
    """`base` with `src` over `base[start:end]` along `dim`, per element: the backward of a
    slice (zeros with the gradient in one part: rotary embeddings' rotate_half takes two per
    projection) and a write through a slice. As an aten call it was two copies, of `base`
    and of `src` into it, for every slice of a backward (33 of each in a Llama training step);
    as a Pointwise it fuses with the zeros and with what reads it. Slices with a step stay
    aten calls."""
    if step != 1:
        return fallback(aten.slice_scatter.default, (base, src, dim, start, end, step), {})
    dim = dim + len(base.size) if dim < 0 else dim
    start, _ = slice_bounds(base.size[dim], start, end)
    length = src.size[dim]
    if length == 0:
        return base
    load_base, load_src = base.make_loader(), src.make_loader()

    def inner(index):
        offset = index[dim] - start
        source = list(index)
        source[dim] = clamp_index(offset, length)  # in bounds; discarded outside
        position = ops.index_expr(offset, torch.int64)
        inside = ops.logical_and(ops.ge(position, ops.constant(0, torch.int64)),
                                 ops.lt(position, ops.index_expr(length, torch.int64)))
        return ops.where(inside, cast(load_src(source), src.dtype, base.dtype), load_base(index))

    return Pointwise(base.device, base.dtype, tuple(base.size), inner)


@register_lowering(aten.select_scatter.default)
def select_scatter(base, src, dim, index):
    """`base` with `src` over `base.select(dim, index)`, per element: the backward of a select
    (`x[:, 0]`, a pooler's first token; `logits[:, -1]`) as a Pointwise, not two aten copies."""
    dim = dim + len(base.size) if dim < 0 else dim
    index = as_expr(index)
    if current_graph().decide(sympy.Lt(index, 0)):
        index = index + base.size[dim]
    load_base, load_src = base.make_loader(), src.make_loader()

    def inner(position):
        hit = ops.eq(ops.index_expr(position[dim], torch.int64), ops.index_expr(index, torch.int64))
        value = load_src([*position[:dim], *position[dim + 1:]])
        return ops.where(hit, cast(value, src.dtype, base.dtype), load_base(position))

    return Pointwise(base.device, base.dtype, tuple(base.size), inner)


def _one_per_row(self: IRNode, dim: int, index: IRNode) -> bool:
    if not self.size or len(index.size) != len(self.size) or index.size[dim] != 1:
        return False
    return all(index.size[d] == self.size[d] for d in range(len(self.size)) if d != dim)


def _select_one_per_row(self: IRNode, dim: int, index: IRNode, src) -> Pointwise:
    load_self, load_index = self.make_loader(), index.make_loader()
    load_src = src.make_loader() if isinstance(src, IRNode) else None
    size = self.size[dim]
    check_empty_take(size, product(index.size), RuntimeError,
                     f"scatter(): index out of bounds for dimension {dim} with size 0")

    def inner(idx):
        row = list(idx)
        row[dim] = sympy.Integer(0)
        target = load_index(row)
        # Eager's scatter rejects an index outside [0, size) with a RuntimeError, negative ones
        # too (gather's indexing would wrap them): a negative index is sent past the end.
        checked = ops.where(ops.lt(target, ops.constant(0, index.dtype)), ops.index_expr(size, index.dtype), target)
        position = ops.indirect_indexing(checked, size, RuntimeError)
        hit = ops.eq(ops.index_expr(position, torch.int64), ops.index_expr(idx[dim], torch.int64))
        value = cast(load_src(row), src.dtype, self.dtype) if load_src else scalar_operand(src, self.dtype)
        return ops.where(hit, value, load_self(idx))

    return Pointwise(self.device, self.dtype, tuple(self.size), inner)


def in_place(op, self: IRNode, *args, **kwargs):
    """`op(self, ...)` as its in-place form on `self`'s memory when the graph owns it, else on a copy."""
    graph = current_graph()
    node = graph.current_node
    target = _owned(graph, node, self)
    if target is None:
        copy = Pointwise(self.device, self.dtype, tuple(self.size), self.make_loader())
        target = graph.realize_like_traced(copy)
    return extern_call(IN_PLACE[op], (target, *args), kwargs, is_fallback=False)


def _owned(graph, node: torch.fx.Node, self: IRNode):
    """`self` as memory that only this scatter can see, or None.

    A lazy value read by this scatter alone realizes into a new buffer only it sees (read by
    other nodes too, it would be their buffer: once realized, every reader loads it, and the
    scatter would write into their input; index_reduce's backward reads its mask twice). A
    realized one qualifies when its storage was made by the graph (not an input, not an aten
    view of one) and reaches this node through a chain of nodes each read by the next alone: no
    other node's value, view or lazy reader, can see the memory the scatter writes."""
    arg = node.args[0] if node.args else node.kwargs.get("self")
    if isinstance(self, (Pointwise, GenericView, Reduction)):
        if isinstance(arg, torch.fx.Node) and list(arg.users) != [node]:
            return None
        return graph.realize(self)
    base = storage_of(self)
    if not _made_by_graph(base) or not _same_strides(self.layout, graph.current_val()):
        return None
    user = node
    while isinstance(arg, torch.fx.Node):
        if list(arg.users) != [user]:
            return None
        sharing = [n for n in arg.all_input_nodes if _storage(graph, n) is base]
        if not sharing:
            return self  # `arg` made the buffer
        if len(sharing) > 1:
            return None
        user, arg = arg, sharing[0]
    return None


def _made_by_graph(base) -> bool:
    if isinstance(base, MultiOutput):
        base = base.parent
    if isinstance(base, ExternKernel):
        return not base.aliases_inputs
    return isinstance(base, ComputedBuffer)


def _storage(graph, node: torch.fx.Node):
    value = graph.env.get(node)
    return storage_of(value) if isinstance(value, IRNode) else None


def _same_strides(layout, val) -> bool:
    if not isinstance(val, torch.Tensor):
        return False
    return all(n == 1 or s == v for n, s, v in zip(layout.size, layout.stride, val.stride()))
