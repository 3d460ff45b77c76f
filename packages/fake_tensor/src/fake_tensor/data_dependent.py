"""Ops whose result depends on tensor values: on fakes they raise DataDependentError.

Torch tags such ops `data_dependent_output` (a Python value read from the data: `item`,
`equal`) or `dynamic_output_shape` (an output whose size depends on the data: `nonzero`,
`unique`, `masked_select`); both tags are refused by default. Entries for single ops narrow
that to the cases that really depend on data (`index.Tensor` only with boolean masks).
"""

from __future__ import annotations

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


@rule_for(aten._local_scalar_dense.default)
def _refuse_scalar_read(mode, func, args, kwargs):
    raise DataDependentError(func, "Tensor.item(), bool(t), int(t) and float(t) read a value from the data")


@rule_for(aten.index.Tensor)
def _index_with_masks(mode, func, args, kwargs):
    # `x[mask]` selects as many elements as the mask has True values; integer indices are fine.
    for index in bound_arguments(func, args, kwargs)["indices"]:
        if index is not None and index.dtype in (torch.bool, torch.uint8):
            raise DataDependentError(func, "indexing with a boolean mask selects a data-dependent number of elements")
    return run_on_meta(mode, func, args, kwargs)


@rule_for(aten.repeat_interleave.Tensor)
def _repeat_interleave_with_counts(mode, func, args, kwargs):
    if bound_arguments(func, args, kwargs)["output_size"] is None:
        raise DataDependentError(func, "without output_size the result length is the sum of the repeats")
    return run_on_meta(mode, func, args, kwargs)
