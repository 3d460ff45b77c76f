"""Shape guards and the sympy printer: printed Python agrees with sympy's own evaluation."""

from __future__ import annotations

import pytest
import sympy
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from guards import GuardCompileError, GuardSet, LocalSource, ShapeGuard, TensorMatch, shape_guards
from guards.printer import python_expression
from guards.sources import ItemSource, ShapeSource, StrideSource

s0, s1, s2 = sympy.symbols("s0 s1 s2", integer=True, positive=True)
SYMBOLS = (s0, s1, s2)


class FloorDiv(sympy.Function):
    """Stands in for fake_tensor's FloorDiv: the printer knows it by name only."""

    is_integer = True

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(int(a) // int(b))
        return None


class PythonMod(sympy.Function):
    is_integer = True

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(int(a) % int(b))
        return None


def integer_expressions():
    leaves = st.one_of(st.sampled_from(SYMBOLS), st.integers(-5, 9).map(sympy.Integer))

    def extend(children):
        positive = st.integers(1, 7).map(sympy.Integer)
        return st.one_of(
            st.tuples(children, children).map(lambda ab: ab[0] + ab[1]),
            st.tuples(children, children).map(lambda ab: ab[0] - ab[1]),
            st.tuples(children, children).map(lambda ab: ab[0] * ab[1]),
            st.tuples(children).map(lambda a: -a[0]),
            st.tuples(children, st.integers(0, 3)).map(lambda ab: ab[0] ** ab[1]),
            st.tuples(children, positive).map(lambda ab: FloorDiv(*ab)),
            st.tuples(children, positive).map(lambda ab: PythonMod(*ab)),
            st.tuples(children, children).map(lambda ab: sympy.Max(*ab)),
            st.tuples(children, children).map(lambda ab: sympy.Min(*ab)),
        )

    return st.recursive(leaves, extend, max_leaves=6)


def conditions():
    relations = [sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge]
    # Built with sympy's evaluation on, as a ShapeEnv builds them: binding the symbols to
    # numbers then folds each one to true/false.
    atoms = st.tuples(st.sampled_from(relations), integer_expressions(), integer_expressions()).map(
        lambda r: r[0](r[1], r[2])
    )

    def extend(children):
        return st.one_of(
            st.lists(children, min_size=2, max_size=3).map(lambda cs: sympy.And(*cs)),
            st.lists(children, min_size=2, max_size=3).map(lambda cs: sympy.Or(*cs)),
            children.map(sympy.Not),
        )

    return st.recursive(atoms, extend, max_leaves=3)


NAMES = {s0: "a", s1: "b", s2: "c"}


@settings(max_examples=150, deadline=None)
@given(integer_expressions(), st.tuples(*[st.integers(2, 50)] * 3))
def test_printed_integer_expression_evaluates_like_sympy(expr, values):
    bindings = dict(zip(SYMBOLS, map(sympy.Integer, values)))
    expected = expr.xreplace(bindings)
    code = python_expression(expr, NAMES)
    assert eval(code, {}, dict(zip("abc", values))) == int(expected), code


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(conditions(), st.tuples(*[st.integers(2, 50)] * 3))
def test_printed_condition_evaluates_like_sympy(expr, values):
    bindings = dict(zip(SYMBOLS, map(sympy.Integer, values)))
    expected = bool(expr.xreplace(bindings))
    code = python_expression(expr, NAMES)
    assert eval(code, {}, dict(zip("abc", values))) == expected, code


@pytest.mark.parametrize(
    "expr, text",
    [
        (s0 + 2 * s1 <= 1024, "a + 2*b <= 1024"),
        (sympy.Eq(s0, 2 * s1, evaluate=False), "a == 2*b"),
        (sympy.Ne(FloorDiv(s0, 2), 3, evaluate=False), "a // 2 != 3"),
        (sympy.And(s0 >= 2, s1 < 8), "a >= 2 and b < 8"),
    ],
)
def test_printed_shape_guard_reads_like_python(expr, text):
    assert python_expression(expr, NAMES) == text


def test_unknown_sympy_function_is_a_clear_error():
    class Mystery(sympy.Function):
        pass

    with pytest.raises(GuardCompileError, match="no printer for sympy Mystery"):
        python_expression(Mystery(s0) > 2, NAMES)


def size_of(name: str, dim: int):
    return ItemSource(ShapeSource(LocalSource(name)), dim)


def test_shape_guard_relates_two_inputs():
    guard = GuardSet(
        [ShapeGuard.of(sympy.Eq(s0, 2 * s1), {s0: size_of("x", 0), s1: size_of("y", 0)})]
    ).compile(parameters=["x", "y"])
    n = int(torch.randint(2, 20, ()))
    assert guard(torch.randn(2 * n), torch.randn(n))
    assert not guard(torch.randn(2 * n + 1), torch.randn(n))
    assert guard.why(torch.randn(5), torch.randn(2)) == (
        "L['x'].size()[0] == 2*L['y'].size()[0] failed: got L['x'].size()[0] = 5, L['y'].size()[0] = 2"
    )


def test_shape_guards_from_shape_env_output():
    # The format of fake_tensor's ShapeEnv: produce_guards(), symbol_sources, place_checks().
    x, y = LocalSource("x"), LocalSource("y")
    symbol_sources = {s0: [(x, "size", 0), (y, "size", 0)], s1: [(x, "size", 1)]}
    place_checks = [((y, "size", 0), s0), ((x, "stride", 0), s1)]
    guards = shape_guards([s0 >= 2, s1 >= 2, s0 <= 64], symbol_sources, place_checks)
    texts = [str(g) for g in guards]
    assert texts == [
        "L['y'].size()[0] == L['x'].size()[0]",
        "L['x'].stride()[0] == L['x'].size()[1]",
        "L['x'].size()[0] >= 2",
        "L['x'].size()[1] >= 2",
        "L['x'].size()[0] <= 64",
    ]
    guard = GuardSet(guards).compile(parameters=["x", "y"])
    assert guard(torch.randn(7, 3), torch.randn(7))
    assert not guard(torch.randn(7, 3), torch.randn(6))
    assert not guard(torch.randn(7, 3)[:, :2], torch.randn(7))
    assert not guard(torch.randn(65, 3), torch.randn(65))
    assert guard.why(torch.randn(65, 3), torch.randn(65)) == "L['x'].size()[0] <= 64 failed: got L['x'].size()[0] = 65"


def test_each_size_is_read_once_across_tensor_and_shape_guards():
    x = torch.randn(6, 4)
    guards = [TensorMatch.of(LocalSource("x"), x, sizes=[None, 4])]
    guards += shape_guards([s0 >= 2, s0 <= 1024], {s0: [(LocalSource("x"), "size", 0)]})
    source = GuardSet(guards).compile(parameters=["x"]).source
    assert source.count("x.shape") == 1
    assert source.count("x_size[0]") == 1


def test_stride_source_reads_strides():
    guard = GuardSet(
        [ShapeGuard.of(sympy.Eq(s0, 1), {s0: ItemSource(StrideSource(LocalSource("x")), 1)})]
    ).compile(parameters=["x"])
    assert guard(torch.randn(3, 4))
    assert not guard(torch.randn(4, 3).t())
