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
