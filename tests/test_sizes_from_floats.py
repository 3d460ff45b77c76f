"""Sizes computed from a Python float that changes between calls (`int(lo - 1.0)`,
math.floor/ceil, round, `//`): after the float goes dynamic the graph recomputes the size
from it, a truncation or rounding of float arithmetic kept in the program's order
(`int(3.0 - f)` is `TruncToInt(FloatSub(3.0, f))`), which aot_autograd rebuilds. Against
eager at every value: the first, a cache hit, and values after the float went dynamic,
negatives included. tests/test_guards_of_sizes_from_floats.py checks the guards on such sizes."""

from __future__ import annotations

import math

import pytest
import torch

import compiler

SIZES = {
    "int_of_difference": lambda lo: int(lo - 1.0),
    "int_of_product": lambda lo: int(lo * 2.5),
    "int_plus_one": lambda lo: int(lo) + 1,
    "int_of_negated": lambda lo: int(3.0 - lo) + 6,
    "floor": lambda lo: math.floor(lo - 0.5),
    "ceil": lambda lo: math.ceil(lo * 0.5),
    "round": lambda lo: round(lo),
    "floor_division": lambda lo: int(lo // 1.5),
}


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("size", SIZES)
def test_size_from_a_changing_float_matches_eager(size, backend):
    size_of = SIZES[size]

    def fn(x, lo):
        n = max(size_of(lo), 0)
        return torch.arange(n, dtype=x.dtype) * x.sum(), n

    compiled = compiler.compile(fn, backend=backend)
    for lo in (4.5, 4.5, 5.5, 6.25, 3.0, 7.9, 0.5, -1.5):
        x = torch.randn(3)
        got, want = compiled(x, lo), fn(x, lo)
        assert got[1] == want[1]
        torch.testing.assert_close(got[0], want[0])


def _moonshine_mask(x, mask):
    # Moonshine's conv output lengths, int() of a float of the mask's (symbolic) length, three
    # times; the slice's guards compare them. As Piecewises of floor and ceiling, sympy folded
    # them into the relation (ITE(...)), which the guard function printed no Python for, which
    # aot_autograd could not rebuild, and which took sympy seconds to canonicalize.
    n = int((mask.shape[-1] - 127) / 64 + 1)
    n = int((n - 7) / 3 + 1)
    n = int((n - 3) / 2 + 1)
    return mask[..., ::384][..., :n] * x.sum()


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_sizes_truncated_from_a_symbolic_length_match_eager(backend):
    compiled = compiler.compile(_moonshine_mask, backend=backend)
    for length in (1600, 1600, 2400, 3200, 4000):
        x, mask = torch.randn(3), torch.rand(2, length)
        torch.testing.assert_close(compiled(x, mask), _moonshine_mask(x, mask))


# Sizes rounded from floats computed from a length, as a graph must compute them: in the
# program's order. sympy's form of (n - 7) / 3 + 1 is n/3 - 4/3, which at n = 10 is
# 1.9999999999999996 and truncates to 1 where the program gets 2.
TRUNCATED_LENGTHS = {
    "int_of_int_of_a_product": lambda n: int(int(n * 0.5)),
    "thirds": lambda n: int((n - 7) / 3 + 1),
    "thirds_of_a_half": lambda n: int((int(n * 0.5) - 7) / 3 + 1),
    "three_times": lambda n: int((int((int(n * 0.5) - 7) / 3 + 1) - 3) / 2 + 1),
    "rounded_then_floored": lambda n: math.floor(round(n / 3) * 0.7),
    # torch.sym_max/sym_min stay symbolic (Python's max and min compare, and guard).
    "at_least_three": lambda n: torch.sym_max(int((n - 7) / 3 + 1), 3),
    "at_most_a_half": lambda n: torch.sym_min(int((n - 7) / 3 + 1), n // 2),
}


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("size", TRUNCATED_LENGTHS)
def test_a_size_truncated_from_a_length_matches_eager(size, backend):
    size_of = TRUNCATED_LENGTHS[size]

    def fn(x):
        n = size_of(x.shape[-1])
        return x[..., :n] * 2, n

    compiled = compiler.compile(fn, backend=backend)
    # The first call, a cache hit, new lengths (symbolic from then on), some where sympy's
    # order of the float arithmetic truncates differently (769, 772).
    for length in (100, 100, 10, 130, 769, 772, 3073):
        x = torch.randn(2, length)
        got, want = compiled(x), fn(x)
        assert got[1] == want[1]
        torch.testing.assert_close(got[0], want[0])


def _size_compared_as_a_float(x):
    # `float(n) == 7` holds: n is the integer 7 from there on, not the float 7.0 (a C++ loop
    # bound `x0 < 7.0` failed to compile: "invalid controlling predicate").
    if float(x.shape[0]) == 7:
        return x - 0.5
    if float(x.shape[0]) == 5.0:
        return x.cumsum(0) * 2
    return x + 0.5


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_size_equal_to_an_integral_float_stays_an_int(backend):
    compiled = compiler.compile(_size_compared_as_a_float, backend=backend)
    for length in (4, 4, 7, 5, 9):
        x = torch.randn(length)
        torch.testing.assert_close(compiled(x), _size_compared_as_a_float(x))
