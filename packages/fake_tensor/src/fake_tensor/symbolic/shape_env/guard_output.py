"""Guards out: everything the trace assumed, as sympy booleans (`produce_guards`), as Python
over the places (`guards_as_python`), or checked against new inputs (`evaluate_guards`).

`produce_guards()` spells neither duck sizing (a symbol's other places must equal its first)
nor expression places: they are not sympy over symbols. `place_checks()` lists them, and
consumers that compile guards read them there, as `guards_as_python` does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sympy
import torch

from fake_tensor.symbolic.functions import CopySign
from fake_tensor.symbolic.guard_printer import print_python
from fake_tensor.symbolic.shape_env.places import Place, place_name, read_place
from fake_tensor.symbolic.simplify import static_truth
from fake_tensor.symbolic.value_ranges import ValueRange, bound


class GuardOutput:
    """ShapeEnv's methods that hand its guards on (a mixin: the state they use lives in
    ShapeEnv.__init__)."""

    def produce_guards(self) -> list[sympy.Basic]:
        """Everything the trace assumed about the symbols, as sympy booleans.

        Per symbol: its equality if one was learned (`Eq(s1, s0)`, `Eq(s2, 8)`), else its range
        (`s0 >= 2`, and `s0 <= 1024` if bounded); then every other recorded guard that the
        final ranges do not already imply. See the module docstring for places.
        """
        out: list[sympy.Basic] = []
        for symbol in self.hints:
            if symbol in self.replacements:
                out.append(sympy.Eq(symbol, self.replacements[symbol]))
            else:
                out.extend(_range_conditions(symbol, self.ranges[symbol], ValueRange(-sympy.oo, sympy.oo)))
        symbol_ranges = {s: self.ranges[s] for s in self.hints}
        for expr in self._bounded_exprs:
            out.extend(_range_conditions(expr, self.ranges[expr], bound(expr, symbol_ranges)))
        for guard in self.guards:
            if self._restated_per_symbol(guard.expr) or static_truth(guard.expr, self.ranges) is True:
                continue
            out.append(guard.expr)
        return out

    def _restated_per_symbol(self, expr: sympy.Basic) -> bool:
        """Bounds (restated from the final ranges) and the equalities that made replacements."""
        if isinstance(expr, sympy.Eq) and (expr.lhs in self.replacements or expr.rhs in self.replacements):
            return True
        if expr.has(CopySign):
            return False  # the sign of a zero: no range says it
        # Strict bounds only arise on float symbols, whose ranges keep them as closed ones.
        return isinstance(expr, (sympy.Eq, sympy.Ge, sympy.Le)) and expr.rhs.is_Number

    def place_checks(self) -> list[tuple[Place, sympy.Expr]]:
        """(place, expr) pairs: the place must equal expr for the guards to be meaningful."""
        checks = []
        for symbol, places in self.symbol_sources.items():
            checks.extend((place, symbol) for place in places[1:])
        checks.extend(((source, kind, dim), expr) for source, kind, dim, expr in self.expression_places)
        return checks

    def _binding_places(self) -> dict[sympy.Symbol, Place]:
        return {symbol: places[0] for symbol, places in self.symbol_sources.items() if places}

    def guards_as_python(self, place_name: Callable[..., str] = place_name) -> list[str]:
        """The guards as Python boolean expressions over the places.

        `place_name(source, kind, dim)` spells a place (default `L['x'].size()[0]` for a
        source printing as `L['x']`).
        """
        names = {symbol: place_name(*place) for symbol, place in self._binding_places().items()}
        lines = [f"{place_name(*place)} == {print_python(expr, names)}" for place, expr in self.place_checks()]
        lines.extend(print_python(guard, names) for guard in self.produce_guards())
        return lines

    def bind_symbols(self, tensors: Mapping[object, torch.Tensor]) -> dict[sympy.Symbol, int]:
        """Each symbol's value for new tensors (keyed by source), read at its first place."""
        return {symbol: read_place(tensors, *place) for symbol, place in self._binding_places().items()}

    def evaluate_guards(self, tensors: Mapping[object, torch.Tensor]) -> bool:
        """Whether tensors (keyed by the sources they were fakeified with) satisfy every guard."""
        values = self.bind_symbols(tensors)
        return all(read_place(tensors, *place) == _value_at(expr, values) for place, expr in self.place_checks()) and all(
            _value_at(guard, values) for guard in self.produce_guards()
        )

    def failed_guards(self, tensors: Mapping[object, torch.Tensor]) -> list[str]:
        """The guards (Python spelling) that `tensors` violate; empty if all hold."""
        values = self.bind_symbols(tensors)
        names = {symbol: place_name(*place) for symbol, place in self._binding_places().items()}
        failed = [
            f"{place_name(*place)} == {print_python(expr, names)}"
            for place, expr in self.place_checks()
            if read_place(tensors, *place) != _value_at(expr, values)
        ]
        failed.extend(print_python(guard, names) for guard in self.produce_guards() if not _value_at(guard, values))
        return failed

    def guards_hold_at(self, values: Mapping[sympy.Symbol, int]) -> bool:
        """Whether `produce_guards()` all hold when each symbol has the given value."""
        return all(_value_at(guard, values) for guard in self.produce_guards())


def _value_at(expr: sympy.Basic, values: Mapping[sympy.Symbol, int]):
    """`expr` at concrete symbol values; a division by zero there means the guard fails
    (guards are checked in order, and an earlier one that fails protects this one in the
    generated code, as `and` would)."""
    try:
        return expr.xreplace(values)
    except ZeroDivisionError:
        return sympy.false


def _range_conditions(expr: sympy.Expr, known: ValueRange, implied: ValueRange) -> list[sympy.Basic]:
    """`expr == v`, or `expr >= lower` / `expr <= upper`, for the bounds `implied` lacks."""
    if known.is_singleton():
        return [] if implied.is_singleton() else [sympy.Eq(expr, known.lower)]
    conditions = []
    if known.lower != -sympy.oo and bool(known.lower > implied.lower):
        conditions.append(sympy.Ge(expr, known.lower))
    if known.upper != sympy.oo and bool(known.upper < implied.upper):
        conditions.append(sympy.Le(expr, known.upper))
    return conditions
