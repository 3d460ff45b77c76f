"""Sizes computed from a Python float that changes between calls (`int(lo - 1.0)`,
math.floor/ceil, round, `//`): after the float goes dynamic the graph recomputes the size
from it, a truncation or rounding sympy writes as floor/ceiling inside a Piecewise, which
aot_autograd rebuilds whatever form sympy gave it (`int(3.0 - f)` is
`Piecewise((floor(-f) + 3, f - 3.0 <= 0), ...)`). Against eager at every value: the first,
a cache hit, and values after the float went dynamic, negatives included."""

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
    # times; the slice's guards compare them, and sympy folds the truncations' Piecewise into
    # the relation (ITE(s0/64 - 0.98 >= 0, floor(...)/3 - 1.33 >= 0, ceiling(...)/3 - 1.33 >= 0)),
    # which the guard function printed no Python for.
    n = int((mask.shape[-1] - 127) / 64 + 1)
    n = int((n - 7) / 3 + 1)
    n = int((n - 3) / 2 + 1)
    return mask[..., ::384][..., :n] * x.sum()


def test_sizes_truncated_from_a_symbolic_length_match_eager():
    # On the eager backend only: aot_autograd refuses to rebuild this size in its graph (it
    # would recompute it from sympy's expression, whose float rounding is not the program's).
    compiled = compiler.compile(_moonshine_mask, backend="eager")
    for length in (1600, 2400, 3200, 4000):
        x, mask = torch.randn(3), torch.rand(2, length)
        torch.testing.assert_close(compiled(x, mask), _moonshine_mask(x, mask))
