"""Bounds on the *values* of integer tensors, to find index constraints that shapes alone miss.

GPT-2 builds `position_ids = arange(seq)` and looks them up in a 1024-row embedding: nothing
in the shapes says `seq <= 1024`, yet any larger seq fails at run time. `ValueBoundsMode` runs
above the FakeTensorMode during `infer_shapes`, remembers `[lower, upper]` (sympy expressions
in the symbols) for integer tensors made by `arange`, constant factories, shifts and views,
and when such a tensor indexes a dimension (`embedding`, `index_select`, `gather`,
`tensor[idx]`) it asks the ShapeEnv the question `upper <= size - 1`, which becomes a guard
like any other. It also names the op behind every guard recorded while an op runs.

Rules are two tables keyed by op packet: `VALUE_RULES` (what an op's output values are) and
`INDEX_CHECKS` (which argument indexes which dimension).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import sympy
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

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


ValueRule = Callable[["ValueBoundsMode", tuple, dict], IntValues | None]
VALUE_RULES: dict[object, ValueRule] = {}


def value_rule(*packets):
    def register(rule: ValueRule) -> ValueRule:
        for packet in packets:
            VALUE_RULES[packet] = rule
        return rule

    return register


@value_rule(aten.arange)
def _arange(mode, args, kwargs):
    start, end, step = (0, args[0], 1) if len(args) == 1 else (*args[:2], args[2] if len(args) > 2 else 1)
    if not all(isinstance(v, (int, torch.SymInt)) for v in (start, end, step)):
        return None
    if isinstance(step, torch.SymInt) or step == 0:
        return None
    start, end = _expr(start), _expr(end)
    return IntValues(start, end - 1) if step > 0 else IntValues(end + 1, start)


@value_rule(aten.zeros, aten.zeros_like, aten.new_zeros)
def _zeros(mode, args, kwargs):
    return IntValues(sympy.Integer(0), sympy.Integer(0))


@value_rule(aten.ones, aten.ones_like, aten.new_ones)
def _ones(mode, args, kwargs):
    return IntValues(sympy.Integer(1), sympy.Integer(1))


@value_rule(aten.full, aten.new_full)
def _full(mode, args, kwargs):
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
def _same_values(mode, args, kwargs):
    return mode.values_of(args[0])


def _shift_rule(sign: int) -> ValueRule:
    # add.Tensor(a, b, alpha=1) / sub.Tensor(a, b, alpha=1) with b a number or a bounded tensor.
    def rule(mode, args, kwargs):
        a, b = mode.values_of(args[0]), args[1]
        alpha = kwargs.get("alpha", 1)
        if a is None or not isinstance(alpha, int):
            return None
        factor = sign * alpha
        if isinstance(b, (int, torch.SymInt)) and not isinstance(b, bool):
            return a.shifted(factor * _expr(b))
        other = mode.values_of(b)
        if other is None:
            return None
        low, high = (other.lower, other.upper) if factor >= 0 else (other.upper, other.lower)
        return IntValues(a.lower + factor * low, a.upper + factor * high)

    return rule


VALUE_RULES[aten.add] = _shift_rule(+1)
VALUE_RULES[aten.sub] = _shift_rule(-1)


@value_rule(aten.cat)
def _cat(mode, args, kwargs):
    parts = [mode.values_of(t) for t in args[0]]
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


class ValueBoundsMode(TorchDispatchMode):
    def __init__(self, shape_env: ShapeEnv):
        super().__init__()
        self.shape_env = shape_env
        self._values = WeakIdKeyDictionary()

    def values_of(self, t) -> IntValues | None:
        return self._values.get(t) if isinstance(t, torch.Tensor) else None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        packet = func.overloadpacket
        check = INDEX_CHECKS.get(packet)
        if check is not None:
            for index, indexed, dim in check(args, kwargs):
                self._require_in_bounds(func, index, indexed, dim)
        with self.shape_env.attributing_to(str(func)):
            out = func(*args, **kwargs)
        rule = VALUE_RULES.get(packet)
        if rule is not None and isinstance(out, torch.Tensor) and not out.is_floating_point():
            values = rule(self, args, kwargs)
            if values is not None:
                self._values[out] = values
        return out

    def _require_in_bounds(self, func, index, indexed: torch.Tensor, dim: int) -> None:
        values = self.values_of(index)
        if values is None:
            return
        size = _expr(indexed.shape[dim])
        condition = sympy.Le(values.upper, size - 1)
        env = self.shape_env
        reason = (
            f"{func} indexes dim {dim} of a tensor of size {print_python(size)} with values up to "
            f"{print_python(values.upper)}"
        )
        if not env.size_hint(condition):
            raise ConstraintViolationError(f"{reason}: out of range already at the example sizes")
        with env.attributing_to(reason):
            env.evaluate(condition, True)
