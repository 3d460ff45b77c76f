"""Unbacked symbols (`u0`, `uf0`): values only the data decides (`nonzero`'s row count,
`.item()`). They have a range but no hint, and never appear in guards: a question their ranges
cannot decide raises GuardOnDataDependentError instead of specializing; `expect_true` assumes a
fact and keeps it in `runtime_asserts` for whoever runs the graph to check.
"""

from __future__ import annotations

import itertools

import sympy
import torch

from fake_tensor.errors import GuardOnDataDependentError
from fake_tensor.symbolic.provenance import Guard, Origin, user_frame
from fake_tensor.symbolic.shape_env.symbols import sympy_symbol
from fake_tensor.symbolic.simplify import canonical_relation, simplify, static_truth
from fake_tensor.symbolic.sym_node import SymNode
from fake_tensor.symbolic.value_ranges import ValueRange


class UnbackedSymbols:
    """ShapeEnv's methods for unbacked symbols (a mixin: the state they use lives in
    ShapeEnv.__init__)."""

    def create_unbacked(self, pytype: type = int, lower=-sympy.oo, upper=sympy.oo, *, op: str | None = None, size_like: bool = False):
        """A fresh unbacked SymInt/SymFloat (`u0`, `uf0`) in [lower, upper]: a value only the
        data decides, created by `op` (named in the errors about it)."""
        prefix = "uf" if pytype is float else "u"
        name = next(f"{prefix}{i}" for i in itertools.count(len(self.unbacked)) if f"{prefix}{i}" not in self._names)
        self._names.add(name)
        value_range = ValueRange.of(lower, upper)
        symbol = sympy_symbol(name, pytype, value_range, nonnegative=True)
        self._order[symbol] = len(self._order)
        self.ranges[symbol] = value_range
        # Code that runs the user's program some other way names the user's line itself.
        frame = self._op_stack[-1] if self._op_stack else user_frame()
        self.unbacked[symbol] = Origin(frame, op)
        if size_like:
            self.size_like.add(symbol)
        return (torch.SymFloat if pytype is float else torch.SymInt)(SymNode(symbol, self, pytype, None))

    def undecided_bool(self, derivation) -> SymNode:
        """A SymBool no question can decide statically: `Eq(u, 1)` over a fresh 0-or-1 symbol,
        computed in a graph from `derivation` (operator, operand nodes). For a comparison sympy
        folded over a float read from data: `v == v` is True for a finite real, but False for
        a NaN item, so its branch must see the value (a graph break)."""
        flag = self.create_unbacked(int, 0, 1, op="a comparison of a float read from data").node.expr
        node = SymNode(sympy.Eq(flag, 1), self, bool, None)
        node.derivation = derivation
        return node

    def has_hint(self, expr) -> bool:
        """Whether `expr` has an example value (it mentions no unbacked symbol)."""
        if isinstance(expr, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return expr.node.hint is not None
        if not isinstance(expr, sympy.Basic) or not self.unbacked:
            return True
        return self.unbacked.keys().isdisjoint(expr.free_symbols)

    def decide_without_hint(self, expr: sympy.Basic, *, size_oblivious: bool = False):
        """The answer the ranges alone give to a question mentioning unbacked symbols; no guard.
        Raises GuardOnDataDependentError when they do not decide it. `size_oblivious` also
        assumes size-like unbacked symbols are >= 2 (torch: a kernel that works for sizes >= 2
        works for 0 and 1 as well, so a question like `u0 == 1` need not stop tracing)."""
        ranges = self.ranges
        if size_oblivious and self.size_like:
            ranges = dict(ranges)
            for symbol in self.size_like:
                ranges[symbol] = ranges[symbol].intersect(ValueRange.of(2, sympy.oo))
        simplified = simplify(expr, self.replacements, ranges)
        if isinstance(simplified, sympy.logic.boolalg.BooleanAtom):
            return bool(simplified)
        if simplified.is_Number:
            return int(simplified) if simplified.is_Integer else float(simplified)
        truth = (
            static_truth(simplified, ranges, self.facts_about(simplified))
            if isinstance(simplified, sympy.logic.boolalg.Boolean)
            else None
        )
        if truth is not None:
            return truth
        raise GuardOnDataDependentError(simplified, self._unbacked_origins(expr))

    def maybe_decide_without_hint(self, expr: sympy.Basic, *, size_oblivious: bool = False):
        try:
            return self.decide_without_hint(expr, size_oblivious=size_oblivious)
        except GuardOnDataDependentError:
            return None

    def assume_at_runtime(self, condition: sympy.Basic) -> None:
        """`expect_true` on a condition about unbacked symbols: assumed from now on, and kept
        in `runtime_asserts` for whoever runs the graph to check. Single-symbol bounds narrow
        ranges; compound facts decide questions through `facts_about`."""
        condition = canonical_relation(self.simplify(condition))
        if condition is sympy.true or any(a.expr == condition for a in self.runtime_asserts):
            return
        op = self._current_op()
        self.runtime_asserts.append(Guard(condition, Origin(user_frame(), op)))
        self.op_cache.clear()
        if isinstance(condition, (sympy.Ge, sympy.Le, sympy.Eq)) and isinstance(condition.lhs, sympy.Symbol) and condition.rhs.is_Number:
            narrower = {
                sympy.Ge: ValueRange(condition.rhs, sympy.oo),
                sympy.Le: ValueRange(-sympy.oo, condition.rhs),
                sympy.Eq: ValueRange(condition.rhs, condition.rhs),
            }[type(condition)]
            self.ranges[condition.lhs] = self.ranges[condition.lhs].intersect(narrower)

    def facts_about(self, condition: sympy.Basic) -> list[sympy.Basic]:
        """The assumed facts (`runtime_asserts`: torch._check's, checked when the graph runs)
        that share a symbol with `condition`: what a compound fact teaches (`u0 + 4 <= s0`
        decides `u0 > s0`), as torch's axioms do."""
        symbols = condition.free_symbols
        return [a.expr for a in self.runtime_asserts if not symbols.isdisjoint(a.expr.free_symbols)]

    def _unbacked_origins(self, expr: sympy.Basic) -> list[tuple[sympy.Symbol, Origin]]:
        return [(s, self.unbacked[s]) for s in sorted(expr.free_symbols, key=str) if s in self.unbacked]
