"""Questions about backed symbols, answered from the hints; each answer the ranges and
replacements do not already imply is recorded as a guard, and learned from: equalities become
replacements (`Eq(s1, s0)`: s1 -> s0), one-sided bounds narrow ranges.
"""

from __future__ import annotations

import contextlib
import math

import sympy
import torch

from fake_tensor.errors import GuardOnDataDependentError
from fake_tensor.symbolic.functions import CopySign
from fake_tensor.symbolic.provenance import Guard, Origin, user_frame
from fake_tensor.symbolic.shape_env.symbols import is_constant
from fake_tensor.symbolic.simplify import canonical_relation, simplify, static_truth
from fake_tensor.symbolic.value_ranges import ValueRange, bound

_UNANSWERED = object()


class Questions:
    """ShapeEnv's methods that answer questions and record and learn guards (a mixin: the
    state they use lives in ShapeEnv.__init__)."""

    def simplify(self, expr: sympy.Basic) -> sympy.Basic:
        return simplify(expr, self.replacements, self.ranges)

    def bound(self, expr: sympy.Basic) -> ValueRange:
        return bound(self.simplify(expr), self.ranges)

    def statically_known(self, condition: sympy.Basic) -> bool | None:
        """True/False when replacements and ranges decide `condition`; None otherwise. No guard."""
        simplified = self.simplify(condition)
        return static_truth(simplified, self.ranges, self.facts_about(simplified))

    def size_hint(self, expr) -> int | float | bool:
        """`expr` (sympy, SymInt or int) at the example values of its symbols."""
        if isinstance(expr, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            if expr.node.hint is None:
                raise GuardOnDataDependentError(expr.node.expr, self._unbacked_origins(expr.node.expr))
            return expr.node.hint
        if isinstance(expr, (int, float, bool)):
            return expr
        if not self.has_hint(expr):
            raise GuardOnDataDependentError(expr, self._unbacked_origins(expr))
        if isinstance(expr, sympy.Symbol):
            return self.hints[expr]
        value = expr.xreplace(self.hints)
        if isinstance(value, sympy.logic.boolalg.BooleanAtom):
            return bool(value)
        return int(value) if value.is_Integer else float(value)

    def evaluate(self, expr: sympy.Basic, hint=None):
        """Answer a question about `expr` from the example sizes, recording it as a guard.

        `hint` is the value of `expr` at the example sizes (SymNodes know it; computed when
        omitted). A condition answers True/False; an integer expression answers its value,
        specializing it (`Eq(expr, value)` becomes a guard).
        """
        # Keyed by the hint's type too: float(s0) has the expression of s0 itself, so a float
        # question about it would answer 0.0 to a later int one (a guard_int that returned a
        # float: linalg_vector_norm's backward at a symbolic ord=0 failed in pybind).
        key = (expr, type(hint))
        answered = self._answers.get(key, _UNANSWERED)
        if answered is not _UNANSWERED:
            return answered
        if hint is None:
            if not self.has_hint(expr):
                return self.decide_without_hint(expr)
            hint = self.size_hint(expr)
        simplified = self.simplify(expr)
        if is_constant(simplified):
            if type(hint) in (bool, int) and type(hint)(simplified) != hint:
                raise AssertionError(
                    f"fake_tensor internal error: {expr} simplifies to {simplified} but is {hint} "
                    f"at the example sizes {self.hints}; please report this"
                )
            if type(hint) is float and hint == 0.0 and expr.free_symbols:
                # Known to be zero (`if s:` guarded s == 0, which -0.0 passes too), but which
                # zero is the example's: `f"{s}"` tells them apart.
                self.guard_sign(expr, hint)
        else:
            if type(hint) is bool:
                self._record(simplified if hint else sympy.Not(simplified))
            elif type(hint) is float:
                self._pin_symbols(simplified)
            else:
                self._record(sympy.Eq(simplified, hint))
        self._answers[key] = hint
        return hint

    @contextlib.contextmanager
    def attributing_to(self, op: str):
        """Name `op` as the origin of the guards recorded inside the block."""
        self._op_stack.append(op)
        try:
            yield
        finally:
            self._op_stack.pop()

    def _current_op(self) -> str | None:
        """The op `attributing_to` names now, if any."""
        return self._op_stack[-1] if self._op_stack else None

    def _record(self, condition: sympy.Basic) -> None:
        for part in sympy.And.make_args(sympy.logic.boolalg.to_nnf(condition)):
            part = canonical_relation(part)
            if part is sympy.true or part in self._guard_exprs:
                continue
            if part is sympy.false:
                raise AssertionError(f"guard {condition} is false at the example sizes {self.hints}")
            self._guard_exprs.add(part)
            self.op_cache.clear()  # results may simplify further with what this guard teaches
            op = self._current_op()
            self.guards.append(Guard(part, Origin(user_frame(), op)))
            self._learn(part)

    def _pin_symbols(self, expr: sympy.Basic) -> None:
        """Specialize the float `expr` by guarding each of its symbols to its example value,
        and a zero's sign (`Eq(s, 0.0)` also holds for -0.0). For a symbol alone that is
        `Eq(s, hint)`. With its symbols pinned the program's own arithmetic gives the same
        value again, exactly, and the guard reads as the value the program saw
        (torch.compile specializes float inputs to their values from the start). An int
        specialized from float arithmetic (`int(n * 0.1)`) keeps its guard on the
        expression, which computes in the program's order (functions.FloatOperation):
        pinning would tie a size to one value where a range of them gives the same int."""
        for symbol in sorted(expr.free_symbols, key=str):
            value = self.hints[symbol]
            self._record(sympy.Eq(symbol, value))
            if type(value) is float and value == 0.0:
                self.guard_sign(symbol, value)

    def guard_sign(self, expr: sympy.Basic, value: float) -> None:
        """Guard that the float `expr` keeps the sign of `value` (copysign's, zeros included).
        `Eq(expr, 0.0)` also holds for -0.0, which Python tells apart (`f"{s}"`,
        `math.copysign`): a float specialized to a zero keeps its sign too. Nothing to learn
        from it, so it skips `_record`.

        Where every symbol of `expr` is a zero, their signs are guarded instead: they fix the
        program's zero, while `expr` is sympy's rearrangement of it and may sign it otherwise
        (`s*0.1 + 0*0.2` is +0.0 at s = -0.0 in Python, `0.1*s` after sympy drops the `+ 0`)."""
        symbols = expr.free_symbols
        if symbols and all(self.hints.get(s) == 0.0 for s in symbols):
            signs = [(s, self.hints[s]) for s in sorted(symbols, key=str)]
        else:
            signs = [(expr, value)]
        for subject, sign_of in signs:
            part = sympy.Eq(CopySign(sympy.Float(1.0), subject), sympy.Float(math.copysign(1.0, sign_of)))
            if part not in self._guard_exprs:
                self._guard_exprs.add(part)
                self.guards.append(Guard(part, Origin(user_frame(), self._current_op())))

    def _learn(self, fact: sympy.Basic) -> None:
        if isinstance(fact, sympy.Eq) and fact.lhs.is_integer and fact.rhs.is_Float and float(fact.rhs).is_integer():
            # An integer equal to an integral float (`float(n) == 7`): the integer it is. A
            # Float replacement would make the size a float everywhere it is printed (a C++
            # loop bound `x0 < 7.0`).
            fact = sympy.Eq(fact.lhs, sympy.Integer(int(fact.rhs)))
        if isinstance(fact, sympy.Eq):
            self._learn_equality(fact.lhs, fact.rhs)
        if not (isinstance(fact, sympy.Rel) and fact.rhs.is_Number):
            return
        subject, value = fact.lhs, fact.rhs
        current = bound(subject, self.ranges)
        if subject.is_integer and not value.is_Integer and isinstance(fact, (sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge)):
            # An integer against a float (`n < 5.0`, from max(n, 5.0)): the integer bound it
            # means (n <= 4).
            if not value.is_finite:
                return
            fact = {
                sympy.Lt: lambda: sympy.Le(subject, sympy.ceiling(value) - 1),
                sympy.Le: lambda: sympy.Le(subject, sympy.floor(value)),
                sympy.Gt: lambda: sympy.Ge(subject, sympy.floor(value) + 1),
                sympy.Ge: lambda: sympy.Ge(subject, sympy.ceiling(value)),
            }[type(fact)]()
            if not isinstance(fact, sympy.Rel):
                return  # decided by the symbol's own assumptions: nothing to narrow
            value = fact.rhs
        if not subject.is_integer:
            # Real (float) subjects: strict bounds are kept as closed ones (sound, if loose),
            # and excluding one value narrows nothing.
            if isinstance(fact, sympy.Ne):
                return
            fact = {sympy.Gt: sympy.Ge, sympy.Lt: sympy.Le}.get(type(fact), type(fact))(subject, value)
        if isinstance(fact, sympy.Ne):
            # Excluding an endpoint moves it (sizes are integers); excluding an inner value
            # is not an interval.
            narrower = ValueRange(
                current.lower + int(value == current.lower), current.upper - int(value == current.upper)
            )
        else:
            narrower = {
                sympy.Ge: ValueRange(value, sympy.oo),
                sympy.Le: ValueRange(-sympy.oo, value),
                sympy.Eq: ValueRange(value, value),
            }[type(fact)]
        self.ranges[subject] = current.intersect(narrower)
        if not isinstance(subject, sympy.Symbol):
            self._bounded_exprs.setdefault(subject, None)

    def _learn_equality(self, lhs: sympy.Expr, rhs: sympy.Expr) -> None:
        candidates = [(a, b) for a, b in ((lhs, rhs), (rhs, lhs)) if isinstance(a, sympy.Symbol) and a not in b.free_symbols]
        if not candidates:
            return
        # Replace the newer symbol by the older one, so names stay those of the first inputs.
        symbol, value = max(candidates, key=lambda c: self._order[c[0]])
        self.replacements = {s: v.xreplace({symbol: value}) for s, v in self.replacements.items()}
        self.replacements[symbol] = value
        narrowed = self.ranges[symbol]
        if isinstance(value, sympy.Symbol):
            narrowed = narrowed.intersect(self.ranges[value])
            self.ranges[value] = narrowed
        else:
            narrowed = narrowed.intersect(bound(value, self.ranges))
        self.ranges[symbol] = narrowed
