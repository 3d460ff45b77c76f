"""ShapeGuard: a sympy condition over symbolic sizes, each symbol read from its source.

fake_tensor's ShapeEnv records what a trace assumed about dynamic sizes (`s0 >= 2`,
`Eq(s1, 2*s0)`, `s0 <= 1024`). `shape_guards(...)` turns its output into ShapeGuards without
importing fake_tensor: each symbol is read from the first place it came from
(`L['x'].size()[0]`), other places holding the same symbol must equal it, and places whose
value is an expression (the stride `s1*768` of a contiguous tensor) must equal that.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterable, Mapping, Sequence

import sympy

from ..codegen import Check, EmitContext, must_hold
from ..errors import GuardError
from ..printer import python_expression
from ..sources import Source, tensor_property_source
from .base import PRIORITY_SHAPE, Guard, emits


@dataclasses.dataclass(frozen=True)
class ShapeGuard(Guard):
    """`expr` holds when each symbol takes the value of its source.

    `symbols` is a tuple of (symbol, source) pairs, sorted by symbol name; build one with
    `ShapeGuard.of(expr, {symbol: source})`.
    """

    expr: sympy.Basic
    symbols: tuple[tuple[sympy.Symbol, Source], ...]
    priority = PRIORITY_SHAPE

    @classmethod
    def of(cls, expr: sympy.Basic, sources: Mapping[sympy.Symbol, Source]) -> ShapeGuard:
        expr = sympy.sympify(expr)
        missing = [s for s in expr.free_symbols if s not in sources]
        if missing:
            raise GuardError(f"shape guard {expr}: no source for {', '.join(map(str, missing))}")
        used = sorted(expr.free_symbols, key=lambda s: s.name)
        return cls(expr, tuple((symbol, sources[symbol]) for symbol in used))

    def __str__(self) -> str:
        return python_expression(self.expr, {symbol: str(source) for symbol, source in self.symbols})


@emits(ShapeGuard)
def _shape_guard(guard: ShapeGuard, ctx: EmitContext) -> list[Check]:
    reads = {symbol: ctx.read(source) for symbol, source in guard.symbols}
    call = functools.partial(_callable_name, ctx=ctx)
    if isinstance(guard.expr, sympy.core.relational.Relational) and all(s.is_integer for s, _ in guard.symbols):
        # Sizes are integers, never NaN, so `not (a >= 2)` is exactly `a < 2` (not so for a
        # symbolic float, which may be NaN).
        fails = python_expression(guard.expr.negated, reads, call)
    else:
        fails = must_hold(python_expression(guard.expr, reads, call))
    actual = tuple((str(source), reads[symbol]) for symbol, source in guard.symbols)
    return [Check(fails, str(guard), actual)]


def _callable_name(name: str, ctx: EmitContext) -> str:
    module, _, attr = name.rpartition(".")
    if module == "math":
        return ctx.constant(getattr(math, attr), attr, name)
    return ctx.builtin(name)


Place = Sequence  # (source, "size" | "stride" | "storage_offset" | "value", dim), as fake_tensor spells it


def shape_guards(
    exprs: Iterable[sympy.Basic],
    symbol_sources: Mapping[sympy.Symbol, Sequence[Place]],
    place_checks: Iterable[tuple[Place, sympy.Expr]] = (),
) -> list[ShapeGuard]:
    """ShapeGuards from a ShapeEnv's `produce_guards()`, `symbol_sources`, `place_checks()`."""
    binding = {symbol: _place_source(places[0]) for symbol, places in symbol_sources.items() if places}
    guards = []
    for place, expr in place_checks:
        # The place gets a symbol of its own, named after it, so the equality prints as
        # `L['y'].size()[0] == L['x'].size()[0]` and equal places deduplicate.
        source = _place_source(place)
        symbol = sympy.Symbol(str(source), integer=True)
        guards.append(ShapeGuard.of(sympy.Eq(symbol, expr, evaluate=False), {**binding, symbol: source}))
    for expr in exprs:
        if expr is sympy.true:
            continue
        guards.append(ShapeGuard.of(expr, binding))
    return guards


def _place_source(place: Place) -> Source:
    source, prop, dim = place
    if not isinstance(source, Source):
        raise GuardError(
            f"shape place {place!r}: its source {source!r} is not a guards Source; fakeify "
            "inputs with source=<a guards.sources.Source> so guards can read them"
        )
    if prop == "value":
        # A symbolic Python number input: the place is the number itself.
        return source
    return tensor_property_source(source, prop, dim)
