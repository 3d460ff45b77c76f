"""What the analysed code requires of its dynamic sizes, and which requirements break a Dim.

A constraint is what the recorded guards require beyond the declared ranges, printed with
the Dims' names (`seq <= 1024`): per Dim, its narrowed range or fixed value; then the other
guards (relations between Dims, divisibility...). Some contradict what a Dim declared, which is an
error (as in torch.export):
- a bound tighter than the Dim's explicit `max` (or `min`): "seq must be <= 1024 (...), but
  Dim('seq') allows up to 4096";
- a specialization (`batch == 17`): the Dim cannot vary at all;
- an equality of two Dims (`seq == batch`): they are one dimension, declare one Dim.
Other constraints (relations between Dims, divisibility, bounds on a Dim without an explicit
limit) are reported on the result for the user to read.
"""

from __future__ import annotations

import dataclasses
import math

import sympy

from fake_tensor.symbolic import Dim, ShapeEnv, ValueRange, print_python
from fake_tensor.symbolic.provenance import Origin
from fake_tensor.symbolic.simplify import static_truth


@dataclasses.dataclass(frozen=True)
class Constraint:
    condition: sympy.Basic
    origin: Origin

    def __str__(self) -> str:
        return f"{print_python(self.condition)}  ({self.origin})"


def _declared_ranges(env: ShapeEnv) -> dict[sympy.Symbol, ValueRange]:
    ranges = {symbol: ValueRange.of(2, sympy.oo) for symbol in env.hints}
    for symbol, dim in env.declared.items():
        ranges[symbol] = ValueRange.of(max(dim.min, 2), sympy.oo if dim.max == math.inf else dim.max)
    return ranges


def _origin_of(env: ShapeEnv, symbol: sympy.Symbol, kinds: tuple[type, ...]) -> Origin:
    """Where the guards on `symbol` alone (of the given relation kinds) came from."""
    origins = []
    for guard in env.guards:
        expr = guard.expr
        if isinstance(expr, kinds) and expr.free_symbols == {symbol} and guard.origin not in origins:
            origins.append(guard.origin)
    if len(origins) == 1:
        return origins[0]
    return Origin(frame="; ".join(str(o) for o in origins) or None)


def constraints_found(env: ShapeEnv) -> list[Constraint]:
    """Per symbol, how far the guards narrowed its declared range (or the value it was fixed
    to); then every other guard that those narrowed ranges do not imply."""
    declared = _declared_ranges(env)
    found = []
    for symbol in env.hints:
        if symbol in env.replacements:
            found.append(Constraint(sympy.Eq(symbol, env.replacements[symbol]), _origin_of(env, symbol, (sympy.Eq,))))
            continue
        now, before = env.ranges[symbol], declared[symbol]
        if bool(now.lower > before.lower):
            found.append(Constraint(sympy.Ge(symbol, now.lower), _origin_of(env, symbol, (sympy.Ge, sympy.Ne))))
        if bool(now.upper < before.upper):
            found.append(Constraint(sympy.Le(symbol, now.upper), _origin_of(env, symbol, (sympy.Le, sympy.Ne))))
    narrowed = {symbol: env.ranges[symbol] for symbol in env.hints}
    for guard in env.guards:
        if guard.expr.free_symbols & set(env.replacements) or static_truth(guard.expr, narrowed) is True:
            continue
        found.append(Constraint(guard.expr, guard.origin))
    return found


def _violation(env: ShapeEnv, constraint: Constraint) -> str | None:
    condition = constraint.condition
    if not isinstance(condition, sympy.Rel) or not isinstance(condition.lhs, sympy.Symbol):
        return None
    symbol, value = condition.lhs, condition.rhs
    dim: Dim | None = env.declared.get(symbol)
    if dim is None:
        return None
    where = f"({constraint.origin})"
    if isinstance(condition, sympy.Eq) and value.is_Number:
        return (
            f"{dim.name} must be == {value} {where}, but {dim!r} declares it dynamic; the code "
            f"specializes it. Make it static, or change the code."
        )
    if isinstance(condition, sympy.Eq) and value in env.declared:
        other = env.declared[value]
        return (
            f"{dim.name} must be == {other.name} {where}, but they are separate Dims; use one "
            f"Dim for both."
        )
    if isinstance(condition, sympy.Le) and value.is_Number and dim.max != math.inf and dim.max > value:
        return f"{dim.name} must be <= {value} {where}, but {dim!r} allows up to {dim.max}"
    if isinstance(condition, sympy.Ge) and value.is_Number and 0 < dim.min < value:
        return f"{dim.name} must be >= {value} {where}, but {dim!r} allows down to {dim.min}"
    return None


def violations(env: ShapeEnv, constraints: list[Constraint]) -> list[str]:
    return [v for v in (_violation(env, c) for c in constraints) if v is not None]
