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
import math
import sys
from collections.abc import Callable, Mapping

import sympy

from fake_tensor.registries import register_once
from fake_tensor.symbolic.functions import (
    FloatAdd, FloatMod, FloatMul, FloatSub, FloatTrueDiv, FloorDiv, PythonMod, RoundToInt, TruncToInt,
)

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


@bound_rule(TruncToInt)
def _trunc(expr, sub):
    # Rounding toward zero never decreases as its argument grows.
    r = sub(expr.args[0])

    def truncated(b, unknown):
        if b in (oo, -oo):
            return b
        return sympy.Integer(math.trunc(fractions.Fraction(str(_exact_endpoint(b))))) if b.is_Number else unknown

    return ValueRange(truncated(r.lower, -oo), truncated(r.upper, oo))


@bound_rule(sympy.ceiling)
def _ceiling(expr, sub):
    r = sub(expr.args[0])
    return ValueRange(sympy.ceiling(r.lower), sympy.ceiling(r.upper))


# A float operator's result is its exact result rounded to a double: off by at most half an
# ulp (2**-53 of it), or 2**-1075 among the subnormals, and past the largest double it is inf.
_HALF_ULP = sympy.Rational(1, 2**53)
_SUBNORMAL_STEP = sympy.Rational(1, 2**1075)
_LARGEST_DOUBLE = sympy.Rational(sys.float_info.max)


def _exact_endpoint(x: sympy.Expr) -> sympy.Expr:
    """A Float endpoint as the rational it is, so arithmetic on it does not round (sympy's
    Float arithmetic does)."""
    return sympy.Rational(x) if x.is_Float else x


def _rounded(lower: sympy.Expr, upper: sympy.Expr) -> ValueRange:
    """The range of a float operator's result, given the range of its exact result."""

    def widened(x, away):
        if x in (oo, -oo):
            return x
        if not x.is_Number or x is sympy.nan:
            return away * oo
        x = x + away * (abs(x) * _HALF_ULP + _SUBNORMAL_STEP)
        return away * oo if abs(x) > _LARGEST_DOUBLE else x

    return ValueRange(widened(lower, -1), widened(upper, 1))


def _exact_operands(expr, sub) -> tuple[ValueRange, ValueRange]:
    return tuple(ValueRange(_exact_endpoint(r.lower), _exact_endpoint(r.upper)) for r in map(sub, expr.args))


@bound_rule(FloatAdd)
def _float_add(expr, sub):
    a, b = _exact_operands(expr, sub)
    return _rounded(a.lower + b.lower, a.upper + b.upper)


@bound_rule(FloatSub)
def _float_sub(expr, sub):
    a, b = _exact_operands(expr, sub)
    return _rounded(a.lower - b.upper, a.upper - b.lower)


@bound_rule(FloatMul)
def _float_mul(expr, sub):
    exact = _mul_ranges(*_exact_operands(expr, sub))
    return _rounded(exact.lower, exact.upper)


@bound_rule(FloatTrueDiv)
def _float_truediv(expr, sub):
    a, b = _exact_operands(expr, sub)
    if not (b.lower > 0 or b.upper < 0):
        return UNKNOWN
    reciprocal = ValueRange(1 / b.upper if b.upper != oo else sympy.Integer(0),
                            1 / b.lower if b.lower != -oo else sympy.Integer(0))
    exact = _mul_ranges(a, reciprocal)
    return _rounded(exact.lower, exact.upper)


@bound_rule(FloatMod)
def _float_mod(expr, sub):
    # Python's float `a % b` has b's sign and is at most |b| (equal to it after rounding:
    # -1e-20 % 1.0 is 1.0).
    b = sub(expr.args[1])
    return ValueRange(sympy.Integer(0), b.upper) if b.lower > 0 else UNKNOWN


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


# Bounds already computed, per distinct `ranges` (a bound depends only on the expression and
# the ranges): a subexpression shared by several terms, and the same nested sizes asked about
# again and again (padded window stages: each question bounds the same `%` and `//` terms;
# swin at a new image size computed 81k sub-bounds for 4.6k questions). The last few range
# sets are kept, each bounded.
class MemosPerRanges:
    """Answers that depend only on an expression and the ranges, one dict per distinct set of
    ranges: the last `range_sets` sets are kept, each of at most `entries` answers."""

    def __init__(self, range_sets: int, entries: int):
        self.range_sets, self.entries = range_sets, entries
        self._memos: dict[frozenset, dict] = {}

    def __call__(self, ranges: Mapping[sympy.Expr, ValueRange]) -> dict:
        key = frozenset(ranges.items())
        memo = self._memos.pop(key, None)  # re-inserted below: the most recent range sets stay
        if memo is None or len(memo) > self.entries:
            memo = {}
        if len(self._memos) >= self.range_sets:
            del self._memos[next(iter(self._memos))]
        self._memos[key] = memo
        return memo


_memo_for = MemosPerRanges(range_sets=16, entries=8192)


def bound(expr: sympy.Expr, ranges: Mapping[sympy.Expr, ValueRange]) -> ValueRange:
    """A range containing every value of `expr` when each symbol (or subexpression) in
    `ranges` lies in its range."""
    if expr.is_Number:
        return ValueRange(expr, expr)
    seen = _memo_for(ranges)

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
