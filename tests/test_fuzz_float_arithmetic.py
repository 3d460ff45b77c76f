"""Differential fuzzing of Python float arithmetic on symbolic numbers, through every backend:
floats passed as arguments (symbolic once they change between calls), sizes, and int
arguments, combined with + - * / and powers, then used as a tensor op's scalar and returned.
Compiled results must equal eager's bit for bit: the arithmetic is the program's own, in
double precision, so there is no tolerance to hide behind. Some calls pass NaN, an infinity or
-0.0, and some expressions branch on a comparison.

The class of bug this guards: a backend rebuilt a float from its sympy expression, which
orders the operands its own way (`a * n / 7` became a Mul of 1/7, a and n), and the result
came back 1 ulp off eager in about half the cases (fake_tensor's SymNode.derivation now
keeps the program's order; aot_autograd and inductor rebuild from it); and an entry made for
a symbolic float served a NaN, for which sympy's `a == a` and `a - a == 0` do not hold (symbolic
floats are guarded finite now).

Sizes rounded from float arithmetic on the length (`int((n - 7) / 3 + 1)`, math.floor, math.ceil
and math.trunc of it, which stay symbolic too) are fuzzed too, sliced
by and branched on, at lengths where sympy's algebra for the same arithmetic rounds otherwise:
guards computed the size as sympy's rearrangement, so an entry served a length where the program
branches otherwise, or failed its own guards (fake_tensor keeps float arithmetic in the program's
order now, functions.FloatOperation).

CI runs a fixed budget; `FUZZ_FLOAT_ARITHMETIC_EXAMPLES=300` runs more.
"""

from __future__ import annotations

import math
import os
import types

import pytest
import sympy
import torch

import compiler
from fake_tensor.symbolic import print_python

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("FUZZ_FLOAT_ARITHMETIC_EXAMPLES", "6"))
BACKENDS = ["eager", "aot_eager", "inductor"]

# Leaves: two float arguments, the input's length, an int argument, and constants that do not
# round trivially. `k + 2` keeps divisors away from 0 (k is drawn from 1..9).
LEAVES = ["a", "b", "n", "k", "7", "0.1", "3.3", "(k + 2)"]
OPERATORS = ["+", "-", "*", "/"]


COMPARISONS = ["==", "!=", "<", ">="]


@st.composite
def expressions(draw, depth=3):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(LEAVES))
    left, right = draw(expressions(depth - 1)), draw(expressions(depth - 1))
    if draw(st.integers(0, 4)) == 0:
        # A branch on a comparison: decided by a guard (or, for a == a, by nothing at all).
        compared = draw(expressions(depth - 1))
        return f"({left} if {compared} {draw(st.sampled_from(COMPARISONS))} {right} else {right})"
    operator = draw(st.sampled_from(OPERATORS))
    if operator == "/" and right in ("n", "a", "b"):  # a divisor that cannot be 0 at any call
        right = f"({right} + 100.5)" if right != "n" else "n"
    return f"({left} {operator} {right})"


def _float_argument(g: torch.Generator) -> float:
    """Mostly an ordinary float; sometimes NaN, an infinity or a signed zero, which a symbol
    of the ShapeEnv (a finite real) does not stand for."""
    special = int(torch.randint(0, 12, (), generator=g))
    if special < len(SPECIAL_FLOATS):
        return SPECIAL_FLOATS[special]
    return float(torch.rand((), generator=g, dtype=torch.float64) * 10 - 5)


SPECIAL_FLOATS = [math.nan, math.inf, -math.inf, -0.0]


def _program(expression: str, use: str, a_from_item: bool):
    source = (
        "def program(x, a, b, k):\n"
        + ("    a = a.item()\n" if a_from_item else "")
        + "    n = x.shape[0]\n"
        f"    v = {expression}\n"
        f"    return {use}, v\n"
    )
    scope: dict = {"torch": torch}
    exec(compile(source, "<fuzzed program>", "exec"), scope)  # noqa: S102  (a program we generated)
    return scope["program"], source


USES = ["x * v", "x.float() * v", "(x.float() - v) * 2", "x + v", "x.double() / (v + 1000.25)", "torch.full((3,), v, dtype=torch.float64)"]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(expression=expressions(), use=st.sampled_from(USES), a_from_item=st.booleans(), seed=st.integers(0, 2**16))
@pytest.mark.parametrize("backend", BACKENDS)
def test_float_arithmetic_on_symbolic_numbers_matches_eager_exactly(backend, expression, use, a_from_item, seed):
    """`a_from_item`: a is read with `.item()` from a 0-d tensor (capture_scalar_outputs: an
    unbacked symbol, which may be NaN or infinite whatever the guards say)."""
    program, source = _program(expression, use, a_from_item)
    with compiler.config.patch(capture_scalar_outputs=a_from_item):
        _check_calls(program, source, backend, a_from_item, seed)


def _check_calls(program, source, backend, a_from_item, seed):
    compiled = compiler.compile(program, backend=backend)
    g = torch.Generator().manual_seed(seed)
    # first call, new numbers (a and b become symbolic), a cache hit, a new size
    for n in (6, 6, 6, 9, 13):
        a, b = _float_argument(g), _float_argument(g)
        k = int(torch.randint(1, 10, (), generator=g))
        x = torch.randn(n, generator=g, dtype=torch.float64)
        a = torch.tensor(a, dtype=torch.float64) if a_from_item else a
        try:
            expected = program(x, a, b, k)
        except ZeroDivisionError:
            continue
        got = compiled(x, a, b, k)
        where = f"backend={backend} n={n} a={a!r} b={b!r} k={k}\n{source}"
        same = got[1] == expected[1] or (got[1] != got[1] and expected[1] != expected[1])  # NaN is NaN
        assert type(got[1]) is type(expected[1]) and same, f"{got[1]!r} != {expected[1]!r}\n{where}"
        assert torch.equal(got[0], expected[0]) or torch.allclose(got[0], expected[0], rtol=0, atol=0, equal_nan=True), \
            f"{got[0]} != {expected[0]}\n{where}"


# Length arithmetic as models write it, one step after another, each maybe truncated before
# the next (moonshine's conv lengths): a conv or pool's output length, a scale and its inverse,
# a division and its multiple, a scale.
SIZE_STEPS = [
    "({v} - {k}) / {d} + 1",
    "({v} + {k}) / {d} - 1",
    "{v} * {f} / {f}",
    "{v} / {d} * {d}",
    "{v} * {f}",
]


# How a step's float becomes a size again, or stays a float (the empty name: a parenthesis).
ROUNDINGS = ["int", "", "math.floor", "math.ceil", "math.trunc", "round"]


@st.composite
def size_arithmetic(draw):
    expression = "n"
    for _ in range(draw(st.integers(1, 3))):
        step = draw(st.sampled_from(SIZE_STEPS)).format(
            v=expression, k=draw(st.sampled_from([1, 3, 7])), d=draw(st.sampled_from([2, 3, 7, 49])),
            f=draw(st.sampled_from([0.1, 0.3, 0.7, 1.5])))
        rounding = draw(st.sampled_from(ROUNDINGS))
        expression = f"{rounding}({step})"
    return expression


def _lengths_where_algebra_rounds_otherwise(expression: str, count: int = 2) -> list[int]:
    """Lengths where int() of sympy's form of the arithmetic, printed as guards print it and run
    with Python floats, differs from the program's."""
    n = sympy.Symbol("n", integer=True, positive=True)
    truncated = lambda e: sympy.Piecewise((sympy.floor(e), e >= 0), (sympy.ceiling(e), True))  # noqa: E731
    symbolic_math = types.SimpleNamespace(floor=sympy.floor, ceil=sympy.ceiling, trunc=truncated)
    # Half to even, as Python's round: sympy has no such function, so exact halves are left out.
    half_even = lambda e: sympy.floor(e + sympy.Rational(1, 2))  # noqa: E731
    form = sympy.sympify(eval(expression, {"n": n, "int": truncated, "math": symbolic_math, "round": half_even}))  # noqa: S307  (an expression we generated)
    algebra = eval(f"lambda n: {print_python(form)}", {"math": math})  # noqa: S307
    program = eval(f"lambda n: {expression}", {"math": math})  # noqa: S307  (an expression we generated)
    return [length for length in range(2, 2000) if int(algebra(length)) != int(program(length))][:count]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(expression=size_arithmetic())
@pytest.mark.parametrize("backend", BACKENDS)
def test_sizes_rounded_from_float_arithmetic_match_eager(backend, expression):
    source = (
        "def program(x):\n"
        "    n = x.shape[0]\n"
        f"    v = {expression}\n"
        "    m = int(v)\n"
        "    y = x[:m] * 2 if m % 2 == 0 else x[:m] - 1\n"
        "    return (y * 3 if v >= n else y), m\n"
    )
    scope: dict = {"math": math}
    exec(compile(source, "<fuzzed program>", "exec"), scope)  # noqa: S102  (a program we generated)
    program = scope["program"]
    compiled = compiler.compile(program, backend=backend, dynamic=True)
    crossings = _lengths_where_algebra_rounds_otherwise(expression)
    # first call, a cache hit, lengths where sympy's algebra rounds otherwise, other lengths
    for n in (50, 50, *crossings, *(c + 1 for c in crossings), 97):
        x = torch.randn(n, dtype=torch.float64)
        got, expected = compiled(x), program(x)
        where = f"backend={backend} n={n}\n{source}"
        assert got[1] == expected[1], f"{got[1]!r} != {expected[1]!r}\n{where}"
        assert torch.equal(got[0], expected[0]), f"{got[0]} != {expected[0]}\n{where}"
    for n in crossings:  # an entry for such a length serves it again (its guards hold there)
        captures = len(compiled._capture_cache.entries)
        compiled(torch.randn(n, dtype=torch.float64))
        assert len(compiled._capture_cache.entries) == captures, f"captured again at n={n}\n{source}"
