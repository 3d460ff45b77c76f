"""Guards on sizes computed through float arithmetic (`int((n - 7) / 3 + 1)`,
`n / 7 * 7 == n`) hold exactly where the program's own arithmetic says so.

Guards evaluated such a size as sympy's expression for it, and sympy reorders and folds float
arithmetic as exact real algebra: `(n - 7) / 3 + 1` was `n/3 - 1.3333333333333335`,
2.9999999999999996 at n = 13 where the program gets 3.0; `n / 7 * 7` was `n`, where the
program gets 60.99999999999999 at n = 61; `n * 0.7 / 0.7 >= n` was True, statically, where at
n = 3 the program gets False. So an entry made at one length served another where the program
branches otherwise (a wrong result), and an entry made at such a length failed its own guards
(a capture at every call). fake_tensor keeps float arithmetic on sizes in the program's order
now (functions.FloatOperation), and guards compute it so.

Each case is a float computed from the length; the lengths where sympy's algebra rounds
otherwise are found here, by running sympy's form of the same arithmetic with Python floats.
Against eager on each backend: the first call, a cache hit, those lengths and their
neighbours, and a first call at such a length (one capture, not one per call).
"""

from __future__ import annotations

import pytest
import sympy
import torch

import compiler
from fake_tensor.symbolic import print_python

# Float arithmetic on a length n; the size is int() of it.
FLOATS = {
    "thirds": lambda n: (n - 7) / 3 + 1,
    "sevenths": lambda n: n / 7 * 7,
    "scaled_and_back": lambda n: n * 0.7 / 0.7,
}


def lengths_where_algebra_rounds_otherwise(float_of, count: int = 3) -> list[int]:
    """The first lengths where int() of sympy's form of the arithmetic (`n/3 - 4/3` for
    `(n - 7) / 3 + 1`), printed as guards print and run with Python floats, differs from the
    program's."""
    n = sympy.Symbol("n", integer=True, positive=True)
    algebra = eval(f"lambda n: {print_python(float_of(n))}")  # noqa: S307  (printed by us, from sympy)
    found = [length for length in range(2, 10_001) if int(algebra(length)) != int(float_of(length))]
    assert found, "sympy's form rounds as the program does at every length: not a case for this file"
    return found[:count]


def _branch_on_value(float_of, target):
    def fn(x):
        m = int(float_of(x.shape[-1]))
        return x * 2 if m == target else x * 3

    return fn


def _branch_on_bound(float_of, target):
    def fn(x):
        m = int(float_of(x.shape[-1]))
        return x * 2 if m >= target else x * 3

    return fn


def _branch_on_parity(float_of, target):
    # A divisibility guard on the size (`int(...) % 2 == 0`), and a view by it.
    def fn(x):
        m = int(float_of(x.shape[-1]))
        if m % 2 == 0:
            return x[..., :m].reshape(x.shape[0], m // 2, 2).sum(-1)
        return x[..., :m] * 3

    return fn


def _float_compared_with_length(float_of, target):
    def fn(x):
        n = x.shape[-1]
        return x * 2 if float_of(n) >= n else x * 3

    return fn


USES = {
    "branch_on_value": _branch_on_value,
    "branch_on_bound": _branch_on_bound,
    "branch_on_parity": _branch_on_parity,
    "float_compared_with_length": _float_compared_with_length,
}


def _check(fn, lengths, backend) -> int:
    compiled = compiler.compile(fn, backend=backend, dynamic=True)
    for length in lengths:
        x = torch.arange(2.0 * length).reshape(2, length)
        torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0, msg=lambda m: f"length {length}: {m}")
    return len(compiled._capture_cache.entries)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("use", USES)
@pytest.mark.parametrize("arithmetic", FLOATS)
def test_guards_on_a_size_from_float_arithmetic_follow_the_program(arithmetic, use, backend):
    float_of = FLOATS[arithmetic]
    crossings = lengths_where_algebra_rounds_otherwise(float_of)
    # The branch's value is the program's at the first such length (sympy's is one less or more).
    fn = USES[use](float_of, int(float_of(crossings[0])))
    neighbours = [length + step for length in crossings for step in (0, -1, 1)]
    _check(fn, [100, 100, *neighbours, 100], backend)
    # A first call at such a length: the entry's guards hold for the inputs it was made for.
    assert _check(fn, [crossings[0]] * 3, backend) == 1
