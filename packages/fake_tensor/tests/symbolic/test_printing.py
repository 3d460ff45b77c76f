"""The one sympy printer (symbolic/printing.py): Python printed from the integer functions,
min/max, rounding, relations and piecewise evaluates like sympy's own substitution."""

from __future__ import annotations

import math

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from fake_tensor.symbolic import FloorDiv, PythonMod, RoundToInt, print_python

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
NAMES = {s0: "a", s1: "b"}


def integer_expressions():
    leaves = st.one_of(st.sampled_from((s0, s1)), st.integers(-5, 9).map(sympy.Integer))
    positive = st.integers(1, 7).map(sympy.Integer)

    def extend(children):
        pairs = st.tuples(children, children)
        return st.one_of(
            pairs.map(lambda ab: ab[0] + ab[1]),
            pairs.map(lambda ab: ab[0] - ab[1]),
            pairs.map(lambda ab: ab[0] * ab[1]),
            st.tuples(children, positive).map(lambda ab: FloorDiv(*ab)),
            st.tuples(children, positive).map(lambda ab: PythonMod(*ab)),
            st.tuples(children, positive).map(lambda ab: RoundToInt(ab[0] / ab[1])),
            st.tuples(children, positive).map(lambda ab: sympy.floor(ab[0] / ab[1])),
            st.tuples(children, positive).map(lambda ab: sympy.ceiling(ab[0] / ab[1])),
            pairs.map(lambda ab: sympy.Max(*ab)),
            pairs.map(lambda ab: sympy.Min(*ab)),
            pairs.map(lambda ab: sympy.Abs(ab[0] - ab[1])),
            pairs.map(lambda ab: sympy.Piecewise((ab[0], s0 > s1), (ab[1], True))),
        )

    return st.recursive(leaves, extend, max_leaves=5)


@settings(max_examples=80, deadline=None)
@given(integer_expressions(), st.integers(1, 40), st.integers(1, 40))
def test_printed_expression_evaluates_like_sympy(expr, a, b):
    code = print_python(expr, NAMES)
    assert eval(code, {"math": math}, {"a": a, "b": b}) == expr.subs({s0: a, s1: b}), code


@settings(max_examples=100, deadline=None)
@given(integer_expressions(), integer_expressions(), st.integers(1, 40), st.integers(1, 40))
def test_printed_condition_evaluates_like_sympy(left, right, a, b):
    condition = sympy.Or(sympy.Le(left, right), sympy.And(sympy.Ne(left, 3), sympy.Not(sympy.Gt(right, 2))))
    code = print_python(condition, NAMES)
    assert eval(code, {"math": math}, {"a": a, "b": b}) == bool(condition.subs({s0: a, s1: b})), code


def test_rational_coefficients_divide_once():
    # `(1/3)*a` rounds twice and can floor to one less than `a/3` does.
    code = print_python(sympy.floor(s0 / 3) + RoundToInt(2 * s1 / 3), NAMES)
    assert "math.floor(a/3)" in code and "round(2*b/3)" in code


def test_a_subexpression_repeated_in_one_expression_is_ordered_once(monkeypatch):
    """Padded stage sizes (DaViT, Swin) repeat the same nested `%` and `//` terms many times in
    one guard; ordering every occurrence's terms again was a sixth of a new-size capture."""
    size = s0
    for window in (4, 7, 7, 7):  # each stage pads the one before to a multiple of its window
        size = FloorDiv(size + PythonMod(-size, window) - 1, 2) + 1
    expr = size * (size + 1) + PythonMod(size, 3) * size
    orderings = []
    ordered_terms = sympy.Add.as_ordered_terms
    monkeypatch.setattr(sympy.Add, "as_ordered_terms",
                        lambda self, *a, **k: orderings.append(self) or ordered_terms(self, *a, **k))
    text = print_python(expr, NAMES)
    assert len(orderings) < 20  # 14 (10 distinct sums; sympy orders some itself); 97 printing each occurrence
    assert eval(text, {}, {"a": 23}) == expr.subs(s0, 23)
