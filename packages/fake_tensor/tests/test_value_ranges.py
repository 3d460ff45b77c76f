"""Value ranges of integer functions hold every value the function takes over its arguments'
ranges (checked exhaustively on small ranges), and are tight at the corners."""

from __future__ import annotations

import itertools
import random

import sympy

from fake_tensor.symbolic.functions import FloorDiv
from fake_tensor.symbolic.value_ranges import ValueRange, bound


def test_floor_division_bounds_hold_for_negative_numerators_too():
    a, b = sympy.Symbol("a", integer=True), sympy.Symbol("b", integer=True, positive=True)
    rng = random.Random(0)
    for _ in range(200):
        a_lo = rng.randint(-20, 20)
        a_hi = a_lo + rng.randint(0, 15)
        b_lo = rng.randint(1, 6)
        b_hi = b_lo + rng.randint(0, 4)
        ranges = {a: ValueRange.of(a_lo, a_hi), b: ValueRange.of(b_lo, b_hi)}
        got = bound(FloorDiv(a, b), ranges)
        values = [x // y for x, y in itertools.product(range(a_lo, a_hi + 1), range(b_lo, b_hi + 1))]
        assert (got.lower, got.upper) == (min(values), max(values)), (ranges, got)


def test_floor_division_by_an_unbounded_divisor_tends_to_zero_or_minus_one():
    a, b = sympy.Symbol("a", integer=True), sympy.Symbol("b", integer=True, positive=True)
    got = bound(FloorDiv(a, b), {a: ValueRange.of(-9, 12), b: ValueRange.of(2, sympy.oo)})
    assert (got.lower, got.upper) == (-5, 6)
    got = bound(FloorDiv(a, b), {a: ValueRange.of(-9, -3), b: ValueRange.of(2, sympy.oo)})
    assert (got.lower, got.upper) == (-5, -1)


def test_a_bound_is_worked_out_once_per_set_of_ranges(monkeypatch):
    """Padded window stages ask about the same nested `%` and `//` terms question after
    question: swin at a new image size computed 81k sub-bounds for 4.6k questions. A bound
    depends only on the expression and the ranges: asked again under the same ranges, nothing
    is recomputed; under other ranges, it is (and the answer is theirs)."""
    from fake_tensor.symbolic import value_ranges
    from fake_tensor.symbolic.functions import PythonMod

    calls = []
    rule = value_ranges.BOUND_RULES[FloorDiv]
    monkeypatch.setitem(value_ranges.BOUND_RULES, FloorDiv, lambda e, sub: calls.append(e) or rule(e, sub))
    s0 = sympy.Symbol("s0", integer=True, positive=True)
    padded = FloorDiv(s0 + PythonMod(-s0, 7), 7) + FloorDiv(s0 - 1, 2)
    ranges = {s0: ValueRange.of(3, 20)}
    first = bound(padded, ranges)
    asked = len(calls)
    assert bound(padded, dict(ranges)) == first and len(calls) == asked
    wider = bound(padded, {s0: ValueRange.of(3, 40)})
    assert len(calls) > asked and wider.upper > first.upper
    assert (first.lower, first.upper) == (1, 12)
