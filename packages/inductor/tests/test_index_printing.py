"""Index and size expressions printed for the wrapper (Python), Triton and C++ by fake_tensor's
one printer with each target's spelling: the Python-syntax ones evaluate like sympy; every
target refuses what it cannot spell with NotImplementedError, which compile_aten_graph reads."""

from __future__ import annotations

import types

import pytest
import sympy
from fake_tensor.symbolic import FloorDiv, PythonMod
from hypothesis import given, settings
from hypothesis import strategies as st

from inductor.codegen.cpp import expressions as cpp
from inductor.codegen.triton import expressions as triton
from inductor.codegen.wrapper import pyexpr

x0, x1, s0 = sympy.symbols("x0 x1 s0", integer=True, nonnegative=True)
TL = types.SimpleNamespace(maximum=max, minimum=min)


def index_expressions():
    """Non-negative index arithmetic, as lowering builds it."""
    leaves = st.one_of(st.sampled_from((x0, x1, s0)), st.integers(0, 9).map(sympy.Integer))
    positive = st.integers(1, 7).map(sympy.Integer)

    def extend(children):
        pairs = st.tuples(children, children)
        return st.one_of(
            pairs.map(lambda ab: ab[0] + ab[1]),
            pairs.map(lambda ab: ab[0] * ab[1]),
            st.tuples(children, positive).map(lambda ab: FloorDiv(*ab)),
            st.tuples(children, positive).map(lambda ab: PythonMod(*ab)),
            pairs.map(lambda ab: sympy.Max(*ab)),
            pairs.map(lambda ab: sympy.Min(*ab)),
            st.tuples(children, st.integers(1, 3)).map(lambda ab: ab[0] ** ab[1]),
        )

    return st.recursive(leaves, extend, max_leaves=5)


@settings(max_examples=60, deadline=None)
@given(index_expressions(), st.tuples(*[st.integers(0, 50)] * 3))
def test_python_and_triton_indices_evaluate_like_sympy(expr, values):
    scope = dict(zip(("x0", "x1", "s0"), values))
    expected = expr.subs(dict(zip((x0, x1, s0), values)))
    assert eval(pyexpr(expr), {}, scope) == expected
    assert eval(triton.index(expr), {"tl": TL}, scope) == expected


@pytest.mark.parametrize("printer", [cpp.index, triton.index])
@pytest.mark.parametrize("expr", [x0 / 2, sympy.floor(x0 * 1.5)], ids=["rational", "float"])
def test_what_a_target_cannot_spell_is_not_implemented(printer, expr):
    with pytest.raises(NotImplementedError):
        printer(expr)


@pytest.mark.parametrize("expr", [
    sympy.floor(x0 * 1.5), sympy.ceiling(x0 / 4), sympy.Abs(x0 - 10), x0 >= 3, sympy.Ne(x0, 3),
], ids=["floor", "ceiling", "abs", "ge", "ne"])
@pytest.mark.parametrize("value", [0, 3, 7, 12])
def test_wrapper_spells_sizes_the_program_computed(expr, value):
    """The wrapper returns sizes a program computed from sizes (`int(n * 1.5)`, `n >= 3`):
    its Python, without `math`, evaluates like sympy."""
    assert eval(pyexpr(expr), {}, {"x0": value}) == expr.subs(x0, value)


@pytest.mark.parametrize("printer", [cpp.index, triton.index])
def test_kernels_refuse_reciprocals(printer):
    with pytest.raises(NotImplementedError):
        printer(x0**-1)


def test_cpp_spells_a_symbolic_power_through_the_prelude():
    assert cpp.index(3**s0) == "ptc_pow<int64_t>(3, s0)"
    with pytest.raises(NotImplementedError):  # a negative exponent makes a Python float
        cpp.index(3 ** (s0 - 5))


def test_cpp_spells_integer_division_and_wide_literals():
    assert cpp.index(FloorDiv(x0, 4) + PythonMod(x1, 3)) == "(x0 / 4 + x1 % 3)"
    assert cpp.index(2**33 * x0) == "(8589934592L*x0)"
    assert cpp.index(sympy.Max(x0, s0, 3)).startswith("ptc_max<int64_t>(ptc_max<int64_t>(")
