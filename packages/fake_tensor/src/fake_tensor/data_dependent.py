"""Ops whose result depends on tensor values.

Torch tags such ops `data_dependent_output` (a Python value read from the data: `item`,
`equal`) or `dynamic_output_shape` (an output whose size depends on the data: `nonzero`,
`unique`, `masked_select`); both tags are refused by default with DataDependentError. Entries
for single ops narrow that to the cases that really depend on data (`index.Tensor` only with
boolean masks).

A mode made with `allow_dynamic_output_shape_ops=True` answers the size-changing ops with a
fresh unbacked symbol instead (`u0`, in [0, numel], size-like), and one made with
`allow_scalar_outputs=True` answers `.item()` with an unbacked SymInt/SymFloat/SymBool.
"""

from __future__ import annotations

import math

import sympy
import torch

from .errors import DataDependentError
from .execution import run_on_meta
from .op_rules import bound_arguments, rule_for, rule_for_tag

aten = torch.ops.aten


@rule_for_tag(torch.Tag.data_dependent_output)
def _refuse_value_read(mode, func, args, kwargs):
    raise DataDependentError(func, "it returns a Python value read from the tensor's data")


@rule_for_tag(torch.Tag.dynamic_output_shape)
def _refuse_dynamic_shape(mode, func, args, kwargs):
    raise DataDependentError(func, "its output shape depends on the tensor's data")


# --- unbacked results ------------------------------------------------------------------------------

def _count(mode, func, numel) -> torch.SymInt:
    """A fresh size-like unbacked symbol for how many of `numel` elements the data selects."""
    upper = numel if isinstance(numel, int) else sympy.oo  # a symbolic numel: no finite bound
    return mode.shape_env.create_unbacked(int, 0, upper, op=str(func), size_like=True)


def _empty(mode, sizes, dtype, device):
    return run_on_meta(mode, aten.empty.memory_format, (list(sizes),), {"dtype": dtype, "device": device})


def _require_dynamic_shapes(mode, func, why: str) -> None:
    if not mode.allow_dynamic_output_shape_ops:
        raise DataDependentError(func, why)


@rule_for(aten.nonzero.default)
def _nonzero(mode, func, args, kwargs):
    _require_dynamic_shapes(mode, func, "its output shape depends on the tensor's data")
    return _nonzero_rows(mode, func, args[0])


def _nonzero_rows(mode, func, x):
    return _empty(mode, (_count(mode, func, x.numel()), x.dim()), torch.long, x.device)


@rule_for(aten.masked_select.default)
def _masked_select(mode, func, args, kwargs):
    _require_dynamic_shapes(mode, func, "its output shape depends on the tensor's data")
    x, mask = bound_arguments(func, args, kwargs).values()
    numel = math.prod(torch.broadcast_shapes(x.shape, mask.shape))
    return _empty(mode, (_count(mode, func, numel),), x.dtype, x.device)


@rule_for(aten.index.Tensor)
def _index_with_masks(mode, func, args, kwargs):
    # `x[mask]` selects as many elements as the mask has True values; integer indices are fine.
    x, indices = bound_arguments(func, args, kwargs).values()
    if not any(i is not None and i.dtype in (torch.bool, torch.uint8) for i in indices):
        return run_on_meta(mode, func, args, kwargs)
    _require_dynamic_shapes(mode, func, "indexing with a boolean mask selects a data-dependent number of elements")
    # As eager does: a k-dim mask is the k index tensors of its nonzero() rows.
    expanded = []
    for index in indices:
        if index is None or index.dtype not in (torch.bool, torch.uint8):
            expanded.append(index)
            continue
        rows = _nonzero_rows(mode, func, index)
        expanded.extend(run_on_meta(mode, aten.select.int, (rows, 1, j), {}) for j in range(index.dim()))
    return run_on_meta(mode, func, (x, expanded), {})


@rule_for(aten._unique2.default, aten.unique_consecutive.default)
def _unique(mode, func, args, kwargs):
    _require_dynamic_shapes(mode, func, "its output shape depends on the tensor's data")
    bound = bound_arguments(func, args, kwargs)
    x = bound["self"]
    if bound.get("dim") is not None:
        raise DataDependentError(func, "unique along a dim is not supported with unbacked sizes")
    count = _count(mode, func, x.numel())
    values = _empty(mode, (count,), x.dtype, x.device)
    inverse = _empty(mode, x.shape if bound["return_inverse"] else (0,), torch.long, x.device)
    counts = _empty(mode, (count,) if bound["return_counts"] else (0,), torch.long, x.device)
    return values, inverse, counts


@rule_for(aten.repeat_interleave.Tensor)
def _repeat_interleave_with_counts(mode, func, args, kwargs):
    bound = bound_arguments(func, args, kwargs)
    if bound["output_size"] is not None:
        return run_on_meta(mode, func, args, kwargs)
    _require_dynamic_shapes(mode, func, "without output_size the result length is the sum of the repeats")
    repeats = bound["repeats"]
    length = mode.shape_env.create_unbacked(int, 0, sympy.oo, op=str(func), size_like=True)
    return _empty(mode, (length,), repeats.dtype, repeats.device)


@rule_for(aten._local_scalar_dense.default)
def _scalar_read(mode, func, args, kwargs):
    if not mode.allow_scalar_outputs:
        raise DataDependentError(func, "Tensor.item(), bool(t), int(t) and float(t) read a value from the data")
    (x,) = args
    if isinstance(x.numel(), int) and x.numel() != 1:
        raise RuntimeError(f"a Tensor with {x.numel()} elements cannot be converted to Scalar")  # as eager
    env, op = mode.shape_env, str(func)
    if x.dtype.is_floating_point or x.dtype.is_complex:
        if x.dtype.is_complex:
            raise DataDependentError(func, "a complex Python number cannot be symbolic")
        return env.create_unbacked(float, op=op)
    if x.dtype is torch.bool:
        return env.create_unbacked(int, 0, 1, op=op) == 1
    info = torch.iinfo(x.dtype)
    return env.create_unbacked(int, info.min, info.max, op=op)
