"""Exceptions the program itself raises on constants that capture evaluates while tracing
(sorting, slice assignment, `operator.index`, `dict.update`) are raised as eager raises them,
same type and message, never as an internal error of capture."""

from __future__ import annotations

import operator

import pytest
import torch

from helpers import check_across_sizes, compile_eager


@pytest.mark.parametrize(
    "body",
    [
        "sorted([1, 'a'])",
        "sorted([None, 1])",
        "sorted([3, 1], key=lambda v: 'a' if v == 1 else 2)",
        "operator.index(3.0)",
        "[0, 0, 0, 0, 0, 0].__setitem__(slice(None, None, 2), [1, 2])",
        "{}.update([(1, 2, 3)])",
        "dict([(1,)])",
        "[1, 2].index(9)",
        "['a'].index('b', 0)",
        "(1, 2).index(9)",
        "[1].pop(5)",
        "[1].pop(-2)",
        "[1].pop('a')",
        "max()",
        "min(key=len)",
    ],
)
@pytest.mark.parametrize("fullgraph", [False, True])
def test_program_error_is_raised_like_eager(body, fullgraph):
    fn = eval(f"lambda t: (t + 1, {body})", {"operator": operator})
    with pytest.raises(Exception) as eager:
        fn(torch.randn(3))
    with pytest.raises(type(eager.value)) as compiled:
        compile_eager(fn, fullgraph=fullgraph)(torch.randn(3))
    assert str(compiled.value) == str(eager.value)


def test_extended_slice_assignment_of_wrong_length():
    def fn(t):
        items = [0] * 6
        try:
            items[::2] = [1, 2]
        except ValueError:
            items[::2] = [7, 8, 9]
        return t + sum(items), items

    check_across_sizes(fn, lambda n: (torch.randn(n),))


def test_range_indexed_by_a_size():
    def fn(t):
        return t + range(100)[t.shape[0]]

    check_across_sizes(fn, lambda n: (torch.randn(n),))


@pytest.mark.parametrize("make", ["torch.tensor(2.5)", "torch.tensor([1, 2])"])
def test_operator_index_of_a_tensor_that_is_no_index_raises_like_eager(make):
    fn = eval(f"lambda t: t * operator.index({make})", {"operator": operator, "torch": torch})
    with pytest.raises(TypeError) as eager:
        fn(torch.randn(3))
    with pytest.raises(TypeError) as compiled:
        compile_eager(fn, fullgraph=True)(torch.randn(3))
    assert str(compiled.value) == str(eager.value)


def test_operator_index_of_a_one_element_integer_tensor():
    def fn(t, i):
        return t * operator.index(i), [10, 20, 30][operator.index(i)]

    compiled = compile_eager(fn)
    for n, i in ((4, 1), (4, 2), (7, 0)):
        t, index = torch.randn(n), torch.tensor(i)
        assert_same = torch.testing.assert_close
        expected, actual = fn(t, index), compiled(t, index)
        assert_same(actual[0], expected[0])
        assert actual[1] == expected[1]


class Index:
    def __init__(self, i):
        self.i = i

    def __index__(self):
        return self.i


def test_operator_index_of_a_user_class_runs_its_index():
    def fn(t):
        n = Index(t.shape[0] - 1)
        return t * operator.index(n), operator.index(Index(2))

    check_across_sizes(fn, lambda n: (torch.randn(n),))


@pytest.mark.parametrize("make", ["Index(2.5)", "object()"])
def test_operator_index_of_an_object_that_is_no_index_raises_like_eager(make):
    fn = eval(f"lambda t: t * operator.index({make})", {"operator": operator, "Index": Index})
    with pytest.raises(TypeError) as eager:
        fn(torch.randn(3))
    with pytest.raises(TypeError) as compiled:
        compile_eager(fn, fullgraph=True)(torch.randn(3))
    assert str(compiled.value) == str(eager.value)


@pytest.mark.parametrize(
    "body",
    [
        "n // 0", "n % 0", "n / 0", "n * 1.5 // 0", "n < 'a'", "'a' >= n", "x.shape[5]", "x.shape[-9]",
        "n + 'a'", "None ** n", "'a' - n", "n * 'ab'", "(1, 2) * n",
    ],
)
def test_errors_of_symbolic_sizes_read_like_eager(body):
    """On the new size the sizes are symbolic: the error (and its words) must still be
    CPython's, as for a plain int: not SymInt's name, not an internal error."""

    source = f"def fn(x):\n    n = x.shape[0]\n    try:\n        return x, {body}\n    except Exception as e:\n        return x, type(e).__name__, str(e)\n"
    namespace = {}
    exec(source, namespace)  # noqa: S102  (the body is this test's own table)
    check_across_sizes(namespace["fn"], lambda n: (torch.randn(n),))


def test_a_size_equals_no_other_kind_of_constant():
    def fn(x):
        n = x.shape[0]
        return x + (n == None), n != "a", n == (1,), (1.5,) != n  # noqa: E711

    check_across_sizes(fn, lambda n: (torch.randn(n),))


class InitReturnsValue:
    def __init__(self):
        return 5


def test_init_returning_a_value_raises_like_eager():
    def fn(x):
        InitReturnsValue()
        return x

    with pytest.raises(TypeError) as eager:
        fn(torch.randn(3))
    with pytest.raises(TypeError) as compiled:
        compile_eager(fn, fullgraph=True)(torch.randn(3))
    assert str(compiled.value) == str(eager.value)
