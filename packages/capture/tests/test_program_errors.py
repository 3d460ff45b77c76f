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
