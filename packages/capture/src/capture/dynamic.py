"""Marking dimensions of a tensor: `mark_dynamic(t, dim, min=None, max=None)` makes capture
trace those sizes as symbols (one entry serves every size its shape guards allow, within the
range if given), whatever the `dynamic` setting of the compiled function; `mark_static(t,
dim)` keeps them specialized even under `dynamic=True` or after they changed between calls;
`maybe_mark_dynamic` is the hint form; `mark_unbacked` traces them without example values.
`marked_dims` applies export's `dynamic_shapes` for the duration of one capture."""

from __future__ import annotations

import contextlib
import itertools
import math

import torch
from fake_tensor import UNBACKED, Dim

# The attribute on a tensor mapping its marked dimensions to a fake_tensor.Dim (or None).
MARK_ATTRIBUTE = "_capture_dynamic_dims"
# The attribute on a tensor holding the dimensions marked static.
STATIC_ATTRIBUTE = "_capture_static_dims"

_range_names = itertools.count()


def _normalized(tensor: torch.Tensor, dims) -> dict:
    if isinstance(dims, int):
        dims = {dims: None}
    elif not isinstance(dims, dict):
        dims = dict.fromkeys(dims)
    for dim in dims:
        if not -tensor.dim() <= dim < tensor.dim():
            raise IndexError(f"dynamic dim {dim} is out of range for a tensor with {tensor.dim()} dims")
    return {dim % tensor.dim(): spec for dim, spec in dims.items()}


def mark_dynamic(tensor: torch.Tensor, dims: int | list[int], min: int | None = None, max: int | None = None) -> None:
    """Trace `tensor`'s sizes in `dims` as symbols in every capture it is an input of
    (within [min, max] when given), whatever the compiled function's `dynamic` setting."""
    marked = dict(getattr(tensor, MARK_ATTRIBUTE, {}))
    normalized = _normalized(tensor, dims)
    if min is not None or max is not None:
        # A range needs a Dim, and a Dim a name of its own (Dims sharing a name share a symbol).
        bounds = {"min": 0 if min is None else min, "max": math.inf if max is None else max}
        normalized = {dim: Dim(f"dim{next(_range_names)}", **bounds) for dim in normalized}
    marked.update(normalized)
    setattr(tensor, MARK_ATTRIBUTE, marked)


def mark_unbacked(tensor: torch.Tensor, dims: int | list[int]) -> None:
    """Trace `tensor`'s sizes in `dims` as unbacked symbols (`u0`): without their example
    values, so 0 and 1 do not specialize and no guard depends on them; code that branches on
    them breaks the graph there (torch.compiler's mark_unbacked)."""
    marked = dict(getattr(tensor, MARK_ATTRIBUTE, {}))
    marked.update(dict.fromkeys(_normalized(tensor, dims), UNBACKED))
    setattr(tensor, MARK_ATTRIBUTE, marked)


def maybe_mark_dynamic(tensor: torch.Tensor, dims: int | list[int]) -> None:
    """A hint that dims vary: traced as symbols unless the code specializes them (then the
    entry's guards pin the size), never an error (torch.compiler's maybe_mark_dynamic).
    Capture never raises when a marked dim specializes, so this is `mark_dynamic` without a
    range; torch's `mark_dynamic` raises there instead."""
    mark_dynamic(tensor, dims)


def mark_static(tensor: torch.Tensor, dims: int | list[int]) -> None:
    """Keep `tensor`'s sizes in `dims` specialized, even under `dynamic=True` or after they
    changed between calls."""
    static = set(getattr(tensor, STATIC_ATTRIBUTE, ()))
    static.update(_normalized(tensor, dims))
    setattr(tensor, STATIC_ATTRIBUTE, frozenset(static))


@contextlib.contextmanager
def marked_dims(specs: list[tuple[torch.Tensor, object]]):
    """Mark each tensor with its dims (a list of dims, or a dict dim -> Dim) while the block
    runs; the marks the tensors had before are restored afterwards."""
    saved = [(t, getattr(t, MARK_ATTRIBUTE, None)) for t, _ in specs]
    try:
        for tensor, dims in specs:
            setattr(tensor, MARK_ATTRIBUTE, _normalized(tensor, dims))
        yield
    finally:
        for tensor, previous in saved:
            if previous is None:
                delattr(tensor, MARK_ATTRIBUTE)
            else:
                setattr(tensor, MARK_ATTRIBUTE, previous)
