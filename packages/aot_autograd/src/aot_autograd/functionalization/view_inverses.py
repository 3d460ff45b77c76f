"""Writing a view's new value back into its base, one view op at a time.

When `v = base.<view op>(...)` is written in place, the base's new value is the old base with
`v`'s elements replaced. Each view op has such an inverse, keyed by the op: the `*_scatter`
ops for views that select elements, the opposite view for views that only rearrange them.
Views without an entry fall back to `as_strided_scatter` with the view's geometry relative to
its base, which holds for any view of a base whose own layout is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.fx as fx
from fake_tensor.registries import register_once

from ..errors import UnsupportedProgramError
from ..tracing.emitter import Emitter, sizes_of, value_of

aten = torch.ops.aten


@dataclass(frozen=True)
class ViewStep:
    """One view op applied to the previous value of a chain (args exclude that value).

    `index` picks one result of a view op returning several (`split`, `unbind`).
    """

    op: Any
    args: tuple
    kwargs: dict
    index: int | None = None

    def replay(self, emit: Emitter, base: fx.Node) -> fx.Node:
        view = emit(self.op, base, *self.args, **self.kwargs)
        return view if self.index is None else emit.getitem(view, self.index)


# inverse(emit, step, base, view, updated) -> the base's new value, where `base` is the value the
# view was taken of, `view` the view taken of it, and `updated` the view's new value.
Inverse = Callable[[Emitter, ViewStep, fx.Node, fx.Node, fx.Node], fx.Node]
_INVERSES: dict[Any, Inverse] = {}


def inverse_of(*ops):
    def register(fn: Inverse) -> Inverse:
        return register_once(_INVERSES, ops, fn, "view inverses")

    return register


def scatter_into_base(emit: Emitter, step: ViewStep, base: fx.Node, view: fx.Node, updated: fx.Node) -> fx.Node:
    inverse = _INVERSES.get(step.op, _as_strided_inverse)
    return inverse(emit, step, base, view, updated)


def _arg(step: ViewStep, index: int, name: str, default: Any) -> Any:
    """A view op argument by position among the args after the viewed tensor, or by name."""
    if len(step.args) > index:
        return step.args[index]
    return step.kwargs.get(name, default)


@inverse_of(
    aten.view.default,
    aten._unsafe_view.default,
    aten._reshape_alias.default,
    aten.unsqueeze.default,
    aten.squeeze.default,
    aten.squeeze.dim,
    aten.squeeze.dims,
    aten.flatten.using_ints,
    aten.unflatten.int,
)
def _reshape_back(emit, step, base, view, updated):
    # A functional op on a view need not keep the view's strides; a contiguous copy can
    # always be viewed in the base's shape (the base itself is rebuilt contiguous).
    if not value_of(updated).is_contiguous():
        updated = emit(aten.clone.default, updated, memory_format=torch.contiguous_format)
    return emit(aten.view.default, updated, sizes_of(base))


@inverse_of(aten.t.default)
def _transpose_2d_back(emit, step, base, view, updated):
    return emit(aten.t.default, updated)


@inverse_of(aten.transpose.int)
def _transpose_back(emit, step, base, view, updated):
    return emit(aten.transpose.int, updated, _arg(step, 0, "dim0", None), _arg(step, 1, "dim1", None))


@inverse_of(aten.permute.default)
def _permute_back(emit, step, base, view, updated):
    dims = [d % len(sizes_of(base)) for d in _arg(step, 0, "dims", None)]
    inverse = [dims.index(i) for i in range(len(dims))]
    return emit(aten.permute.default, updated, inverse)


@inverse_of(aten.slice.Tensor)
def _slice_back(emit, step, base, view, updated):
    dim, start, end, step_ = (_arg(step, i, name, default) for i, (name, default) in
                              enumerate((("dim", 0), ("start", None), ("end", None), ("step", 1))))
    return emit(aten.slice_scatter.default, base, updated, dim, start, end, step_)


@inverse_of(aten.select.int)
def _select_back(emit, step, base, view, updated):
    return emit(aten.select_scatter.default, base, updated, _arg(step, 0, "dim", None), _arg(step, 1, "index", None))


@inverse_of(aten.diagonal.default)
def _diagonal_back(emit, step, base, view, updated):
    offset, dim1, dim2 = (_arg(step, i, name, default) for i, (name, default) in
                          enumerate((("offset", 0), ("dim1", 0), ("dim2", 1))))
    return emit(aten.diagonal_scatter.default, base, updated, offset, dim1, dim2)


@inverse_of(aten.unbind.int)
def _unbind_back(emit, step, base, view, updated):
    return emit(aten.select_scatter.default, base, updated, _arg(step, 0, "dim", 0), step.index)


@inverse_of(aten.split.Tensor, aten.split_with_sizes.default)
def _split_back(emit, step, base, view, updated):
    dim = _arg(step, 1, "dim", 0)
    sizes = value_of(updated).shape
    split = _arg(step, 0, "split_size" if step.op is aten.split.Tensor else "split_sizes", None)
    if step.op is aten.split.Tensor:
        start = value_of(split) * step.index
    else:
        start = sum((value_of(s) for s in split[: step.index]), 0)
    return emit(aten.slice_scatter.default, base, updated, dim, start, start + sizes[dim], 1)


@inverse_of(aten.expand.default)
def _expand_back(emit, step, base, view, updated):
    raise UnsupportedProgramError(
        "writes in place into an expanded tensor (several elements share one memory location)",
        "Clone the tensor before writing to it (eager refuses most such writes; fill_, zero_ "
        "and index_put_ it allows, but they are not compiled).",
    )


def _as_strided_inverse(emit, step, base, view, updated):
    base_val, view_val = value_of(base), value_of(view)
    offset = view_val.storage_offset() - base_val.storage_offset()
    return emit(aten.as_strided_scatter.default, base, updated, list(view_val.shape), list(view_val.stride()), offset)
