"""Marking dimensions of a tensor dynamic: `mark_dynamic(t, dim)` makes capture trace those
sizes as symbols (one entry serves every size its shape guards allow), whatever the
`dynamic` setting of the compiled function. `marked_dims` applies export's `dynamic_shapes`
for the duration of one capture."""

from __future__ import annotations

import contextlib

import torch

# The attribute on a tensor mapping its marked dimensions to a fake_tensor.Dim (or None).
MARK_ATTRIBUTE = "_capture_dynamic_dims"


def _normalized(tensor: torch.Tensor, dims) -> dict:
    if isinstance(dims, int):
        dims = {dims: None}
    elif not isinstance(dims, dict):
        dims = dict.fromkeys(dims)
    for dim in dims:
        if not -tensor.dim() <= dim < tensor.dim():
            raise IndexError(f"dynamic dim {dim} is out of range for a tensor with {tensor.dim()} dims")
    return {dim % tensor.dim(): spec for dim, spec in dims.items()}


def mark_dynamic(tensor: torch.Tensor, dims: int | list[int]) -> None:
    marked = dict(getattr(tensor, MARK_ATTRIBUTE, {}))
    marked.update(_normalized(tensor, dims))
    setattr(tensor, MARK_ATTRIBUTE, marked)


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
