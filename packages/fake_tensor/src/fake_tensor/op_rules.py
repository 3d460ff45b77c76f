"""Ops that need more than "run the meta kernel", keyed by ATen overload.

A rule is `rule(mode, func, args, kwargs) -> result`. Rules either refuse the op (its result
depends on tensor data, which fakes do not have) or adapt its inputs, then hand over to
`execution.run_on_meta`. Ops that torch tags `data_dependent_output` (a Python value read
from the data: `item`, `equal`) or `dynamic_output_shape` (`nonzero`, `unique`,
`masked_select`) are refused by default; an entry here can narrow that to the cases that
really depend on data (`index.Tensor` only with boolean masks).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from .errors import DataDependentError

aten = torch.ops.aten

Rule = Callable[[Any, torch._ops.OpOverload, tuple, dict], Any]

_RULES: dict[torch._ops.OpOverload, Rule] = {}
_RESOLVED: dict[torch._ops.OpOverload, Rule | None] = {}


def rule_for(*ops: torch._ops.OpOverload) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        for op in ops:
            _RULES[op] = rule
        return rule

    return register


def rule_of(func: torch._ops.OpOverload) -> Rule | None:
    """The rule for `func`, or None when running its meta kernel is all it takes."""
    try:
        return _RESOLVED[func]
    except KeyError:
        pass
    rule = _RULES.get(func)
    if rule is None and torch.Tag.data_dependent_output in func.tags:
        rule = _refuse_value_read
    if rule is None and torch.Tag.dynamic_output_shape in func.tags:
        rule = _refuse_dynamic_shape
    _RESOLVED[func] = rule
    return rule


def _refuse_value_read(mode, func, args, kwargs):
    raise DataDependentError(func, "it returns a Python value read from the tensor's data")


def _refuse_dynamic_shape(mode, func, args, kwargs):
    raise DataDependentError(func, "its output shape depends on the tensor's data")


def _run(mode, func, args, kwargs):
    from .execution import run_on_meta

    return run_on_meta(mode, func, args, kwargs)


@rule_for(aten._local_scalar_dense.default)
def _refuse_scalar_read(mode, func, args, kwargs):
    raise DataDependentError(func, "Tensor.item(), bool(t), int(t) and float(t) read a value from the data")


@rule_for(aten.index.Tensor)
def _index_with_masks(mode, func, args, kwargs):
    # `x[mask]` selects as many elements as the mask has True values; integer indices are fine.
    indices = args[1] if len(args) > 1 else kwargs["indices"]
    for index in indices:
        if index is not None and index.dtype in (torch.bool, torch.uint8):
            raise DataDependentError(func, "indexing with a boolean mask selects a data-dependent number of elements")
    return _run(mode, func, args, kwargs)


@rule_for(aten.repeat_interleave.Tensor)
def _repeat_interleave_with_counts(mode, func, args, kwargs):
    if kwargs.get("output_size") is None:
        raise DataDependentError(func, "without output_size the result length is the sum of the repeats")
    return _run(mode, func, args, kwargs)


@rule_for(aten.lift_fresh.default, aten.lift_fresh_copy.default)
def _lift_constant(mode, func, args, kwargs):
    # `torch.tensor([1, 2])` builds a real CPU tensor from Python data, then lifts it: the
    # constant becomes a fake (its values are dropped, its metadata kept), as in eager.
    (tensor,) = args
    fake = tensor if isinstance(tensor, torch.Tensor) and _is_own_fake(mode, tensor) else mode.from_real(tensor)
    if func is aten.lift_fresh.default:
        return fake
    return _run(mode, aten.clone.default, (fake,), {})


def _is_own_fake(mode, tensor) -> bool:
    return getattr(tensor, "fake_mode", None) is mode
