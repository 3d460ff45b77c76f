"""Closed integer/real intervals and interval arithmetic over sympy shape expressions.

A `ValueRange` is `[lower, upper]` with sympy numbers as bounds (`-oo`/`oo` allowed). The
ShapeEnv keeps one per symbol (dynamic sizes start at `[2, oo)`), and `bound(expr, ranges)`
computes a sound (possibly loose) range for any expression built from the operations
shapes use. Bounds rules live in a table keyed by sympy class, so teaching the simplifier a
new function is adding an entry.
"""

from __future__ import annotations

import dataclasses
import fractions
import functools
from collections.abc import Callable, Mapping

import sympy

from fake_tensor.registries import register_once
from fake_tensor.symbolic.functions import FloorDiv, PythonMod, RoundToInt

oo = sympy.oo


def least(*bounds: sympy.Expr) -> sympy.Expr:
    """sympy.Min of interval endpoints, without sympy when all are numbers (most are: building
    a Min, or comparing two sympy numbers with `<`, builds a relation first; a Swin layer's
    views ask for tens of thousands)."""
    if all(b.is_Number and b is not sympy.nan for b in bounds):
        return min(bounds, key=_exact)
    return sympy.Min(*bounds)


def greatest(*bounds: sympy.Expr) -> sympy.Expr:
    """sympy.Max of interval endpoints; see `least`."""
    if all(b.is_Number and b is not sympy.nan for b in bounds):
        return max(bounds, key=_exact)
    return sympy.Max(*bounds)


def _exact(number: sympy.Number) -> int | fractions.Fraction | float:
    """A sympy number as the Python number that orders as it does (ints and fractions exact)."""
    if number.is_Integer:
        return int(number)
    if number.is_Rational:
        return fractions.Fraction(int(number.p), int(number.q))
    return float(number)  # a Float, or +-oo


@dataclasses.dataclass(frozen=True)
class ValueRange:
    lower: sympy.Expr
    upper: sympy.Expr

    @staticmethod
    def of(lower, upper) -> ValueRange:
        return ValueRange(sympy.sympify(lower), sympy.sympify(upper))

    def is_singleton(self) -> bool:
        return bool(self.lower == self.upper)

    def intersect(self, other: ValueRange) -> ValueRange:
        return ValueRange(greatest(self.lower, other.lower), least(self.upper, other.upper))

    def union(self, other: ValueRange) -> ValueRange:
        return ValueRange(least(self.lower, other.lower), greatest(self.upper, other.upper))

    def __str__(self) -> str:
        upper = "inf" if self.upper == oo else str(self.upper)
        lower = "-inf" if self.lower == -oo else str(self.lower)
        return f"[{lower}, {upper}]"


UNKNOWN = ValueRange(-oo, oo)


def _mul_bound(a, b):
    # Interval endpoints may be infinite; 0 * oo means "0 times something finite" here.
    if a == 0 or b == 0:
        return sympy.Integer(0)
    return a * b


def _mul_ranges(x: ValueRange, y: ValueRange) -> ValueRange:
    products = [_mul_bound(p, q) for p in (x.lower, x.upper) for q in (y.lower, y.upper)]
    return ValueRange(least(*products), greatest(*products))


def _pow_range(base: ValueRange, exponent: sympy.Expr) -> ValueRange:
    if not exponent.is_Integer:
        return UNKNOWN
    if exponent >= 0 and base.lower >= 0:
        return ValueRange(base.lower**exponent, base.upper**exponent)
    if exponent < 0 and base.lower > 0:
        upper = base.lower**exponent
        lower = sympy.Integer(0) if base.upper == oo else base.upper**exponent
        return ValueRange(lower, upper)
    return UNKNOWN


BoundRule = Callable[[sympy.Expr, Callable[[sympy.Expr], ValueRange]], ValueRange]
BOUND_RULES: dict[type, BoundRule] = {}


def bound_rule(*classes: type):
    def register(rule: BoundRule) -> BoundRule:
        return register_once(BOUND_RULES, classes, rule, "bound rules")

    return register


@bound_rule(sympy.Add)
def _add(expr, sub):
    lower, upper = sympy.Integer(0), sympy.Integer(0)
    for arg in expr.args:
        r = sub(arg)
        lower, upper = lower + r.lower, upper + r.upper
    return ValueRange(lower, upper)


@bound_rule(sympy.Mul)
def _mul(expr, sub):
    return functools.reduce(_mul_ranges, (sub(arg) for arg in expr.args))


@bound_rule(sympy.Pow)
def _pow(expr, sub):
    return _pow_range(sub(expr.base), expr.exp)


@bound_rule(FloorDiv)
def _floordiv(expr, sub):
    a, b = sub(expr.args[0]), sub(expr.args[1])
    if not b.lower > 0:
        return UNKNOWN
    # a // b over b > 0 grows with a and moves toward 0 (or -1) as b grows: the extremes are
    # at the corners. A negative numerator counts too: `(12 - u0) // 3` is a slice's length.

    def corner(x, y):
        if x in (oo, -oo):
            return x
        if y == oo:
            return sympy.Integer(0 if x >= 0 else -1)
        return sympy.floor(x / y)

    corners = [corner(x, y) for x in (a.lower, a.upper) for y in (b.lower, b.upper)]
    return ValueRange(least(*corners), greatest(*corners))


@bound_rule(PythonMod)
def _mod(expr, sub):
    a, b = sub(expr.args[0]), sub(expr.args[1])
    if b.lower <= 0:
        return UNKNOWN
    result = ValueRange(sympy.Integer(0), b.upper - 1)
    if a.lower >= 0:
        result = result.intersect(ValueRange(sympy.Integer(0), a.upper))
        if a.upper < b.lower:
            # a is already smaller than every possible divisor: a % b == a.
            result = a
    return result


@bound_rule(sympy.Max)
def _max(expr, sub):
    ranges = [sub(arg) for arg in expr.args]
    return ValueRange(greatest(*(r.lower for r in ranges)), greatest(*(r.upper for r in ranges)))


@bound_rule(sympy.Min)
def _min(expr, sub):
    ranges = [sub(arg) for arg in expr.args]
    return ValueRange(least(*(r.lower for r in ranges)), least(*(r.upper for r in ranges)))


@bound_rule(sympy.floor)
def _floor(expr, sub):
    r = sub(expr.args[0])
    return ValueRange(sympy.floor(r.lower), sympy.floor(r.upper))


@bound_rule(RoundToInt)
def _round(expr, sub):
    r = sub(expr.args[0])
    return ValueRange(sympy.floor(r.lower), sympy.ceiling(r.upper))


@bound_rule(sympy.ceiling)
def _ceiling(expr, sub):
    r = sub(expr.args[0])
    return ValueRange(sympy.ceiling(r.lower), sympy.ceiling(r.upper))


@bound_rule(sympy.Abs)
def _abs(expr, sub):
    r = sub(expr.args[0])
    if r.lower >= 0:
        return r
    if r.upper <= 0:
        return ValueRange(-r.upper, -r.lower)
    return ValueRange(sympy.Integer(0), greatest(-r.lower, r.upper))


@bound_rule(sympy.Piecewise)
def _piecewise(expr, sub):
    return functools.reduce(ValueRange.union, (sub(value) for value, _ in expr.args))


def bound(expr: sympy.Expr, ranges: Mapping[sympy.Expr, ValueRange]) -> ValueRange:
    """A range containing every value of `expr` when each symbol (or subexpression) in
    `ranges` lies in its range."""

    seen: dict[sympy.Expr, ValueRange] = {}  # a subexpression shared by several terms: once

    def sub(e: sympy.Expr) -> ValueRange:
        if e not in seen:
            seen[e] = _computed(e)
        return seen[e]

    def _computed(e: sympy.Expr) -> ValueRange:
        if e.is_Number:
            return ValueRange(e, e)
        if e.is_Symbol:
            return ranges.get(e, UNKNOWN)
        rule = BOUND_RULES.get(type(e))
        if rule is None:
            rule = next((r for cls, r in BOUND_RULES.items() if isinstance(e, cls)), None)
        computed = rule(e, sub) if rule is not None else UNKNOWN
        # `ranges` may also bound compound expressions (a guard `(s0 - 1)//2 >= 2`).
        known = ranges.get(e)
        return computed if known is None else computed.intersect(known)

    return sub(expr)
