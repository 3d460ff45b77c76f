"""Bounds on the *values* of integer tensors, to find index constraints that shapes alone miss.

GPT-2 builds `position_ids = arange(seq)` and looks them up in a 1024-row embedding: nothing
in the shapes says `seq <= 1024`, yet any larger seq fails at run time. During
`infer_shapes`, `AnalysisMode` remembers `[lower, upper]` (sympy expressions in the symbols)
for integer tensors made by `arange`, constant factories, shifts and views, and when such a
tensor indexes a dimension (`embedding`, `index_select`, `gather`, `tensor[idx]`) it asks the
ShapeEnv `upper <= size - 1`, which becomes a guard like any other.

Two tables keyed by op packet: `VALUE_RULES` (what an op's output values are, given the
bounds of its inputs through `values_of`) and `INDEX_CHECKS` (which argument indexes which
dimension of which tensor).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import sympy
import torch
from fake_tensor.registries import register_once
from fake_tensor.symbolic import ConstraintViolationError, ShapeEnv, print_python

aten = torch.ops.aten


@dataclasses.dataclass(frozen=True)
class IntValues:
    """Every element of the tensor lies in [lower, upper]."""

    lower: sympy.Expr
    upper: sympy.Expr

    def shifted(self, by: sympy.Expr) -> IntValues:
        return IntValues(self.lower + by, self.upper + by)


def _expr(value) -> sympy.Expr:
    if isinstance(value, torch.SymInt):
        return value.node.expr
    return sympy.sympify(value)


# rule(values_of, args, kwargs): values_of(tensor) gives an input's IntValues (or None).
ValueRule = Callable[[Callable, tuple, dict], IntValues | None]
VALUE_RULES: dict[object, ValueRule] = {}


def value_rule(*packets):
    def register(rule: ValueRule) -> ValueRule:
        return register_once(VALUE_RULES, packets, rule, "value rules")

    return register


@value_rule(aten.arange)
def _arange(values_of, args, kwargs):
    start, end, step = (0, args[0], 1) if len(args) == 1 else (*args[:2], args[2] if len(args) > 2 else 1)
    if not all(isinstance(v, (int, torch.SymInt)) for v in (start, end, step)):
        return None
    if isinstance(step, torch.SymInt) or step == 0:
        return None
    start, end = _expr(start), _expr(end)
    return IntValues(start, end - 1) if step > 0 else IntValues(end + 1, start)


@value_rule(aten.zeros, aten.zeros_like, aten.new_zeros)
def _zeros(values_of, args, kwargs):
    return IntValues(sympy.Integer(0), sympy.Integer(0))


@value_rule(aten.ones, aten.ones_like, aten.new_ones)
def _ones(values_of, args, kwargs):
    return IntValues(sympy.Integer(1), sympy.Integer(1))


@value_rule(aten.full, aten.new_full)
def _full(values_of, args, kwargs):
    value = args[-1] if len(args) > 1 else kwargs.get("fill_value")
    if isinstance(value, (int, torch.SymInt)) and not isinstance(value, bool):
        return IntValues(_expr(value), _expr(value))
    return None


# Ops whose output elements are elements of their first argument.
@value_rule(
    aten.view, aten._unsafe_view, aten.reshape, aten.unsqueeze, aten.squeeze, aten.expand,
    aten.permute, aten.transpose, aten.t, aten.slice, aten.select, aten.clone, aten.contiguous,
    aten._to_copy, aten.detach, aten.alias, aten.lift_fresh, aten.repeat, aten.flatten,
    aten.narrow, aten.index_select, aten.gather, aten.expand_copy, aten.view_copy,
)
def _same_values(values_of, args, kwargs):
    return values_of(args[0])


def _shift_rule(sign: int) -> ValueRule:
    # add.Tensor(a, b, alpha=1) / sub.Tensor(a, b, alpha=1) with b a number or a bounded tensor.
    def rule(values_of, args, kwargs):
        a, b = values_of(args[0]), args[1]
        alpha = kwargs.get("alpha", 1)
        if a is None or not isinstance(alpha, int):
            return None
        factor = sign * alpha
        if isinstance(b, (int, torch.SymInt)) and not isinstance(b, bool):
            return a.shifted(factor * _expr(b))
        other = values_of(b)
        if other is None:
            return None
        low, high = (other.lower, other.upper) if factor >= 0 else (other.upper, other.lower)
        return IntValues(a.lower + factor * low, a.upper + factor * high)

    return rule


VALUE_RULES[aten.add] = _shift_rule(+1)
VALUE_RULES[aten.sub] = _shift_rule(-1)


@value_rule(aten.cat)
def _cat(values_of, args, kwargs):
    parts = [values_of(t) for t in args[0]]
    if not parts or any(p is None for p in parts):
        return None
    return IntValues(sympy.Min(*(p.lower for p in parts)), sympy.Max(*(p.upper for p in parts)))


# --- which argument indexes which dimension ------------------------------------------------------

IndexCheck = Callable[[tuple, dict], list[tuple[torch.Tensor, torch.Tensor, int]]]
INDEX_CHECKS: dict[object, IndexCheck] = {
    # (index tensor, indexed tensor, indexed dim)
    aten.embedding: lambda args, kwargs: [(args[1], args[0], 0)],
    aten.index_select: lambda args, kwargs: [(args[2], args[0], args[1])],
    aten.gather: lambda args, kwargs: [(args[2], args[0], args[1])],
    aten.index: lambda args, kwargs: [
        (index, args[0], dim) for dim, index in enumerate(args[1]) if isinstance(index, torch.Tensor)
    ],
}


def require_in_bounds(env: ShapeEnv, func, values: IntValues, indexed: torch.Tensor, dim: int) -> None:
    """Guard that index values `values` stay below the size of `indexed` at `dim`."""
    size = _expr(indexed.shape[dim])
    condition = sympy.Le(values.upper, size - 1)
    reason = (
        f"{func} indexes dim {dim} of a tensor of size {print_python(size)} with values up to "
        f"{print_python(values.upper)}"
    )
    if not env.size_hint(condition):
        raise ConstraintViolationError(f"{reason}: out of range already at the example sizes")
    with env.attributing_to(reason):
        env.evaluate(condition, True)
