"""`int(t)` / `float(t)` of a one-element tensor or ndarray under fullgraph=True: an unbacked
number computed in the graph (as torch.compile's fullgraph does through `.item()`), converted
as Python converts it; refused (a graph break) without fullgraph, and for tensors of more
than one element."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import capture
from helpers import check_across_sizes, compile_eager


def float_of_sum(x):
    return x * float(x.sum())


def int_of_int_sum(x):
    return x + int((x > 0).sum())


def int_truncates_a_float(x):
    return x + int(x.abs().max() * 3) + int(-x.abs().max() * 3) * 10


def float_of_bool(x):
    return x - float(x.sum() > 0), float((x > 5).any())


def float_of_ndarray_reduction(x):
    a = x.numpy()
    return x + float(np.sum(a)), float(a.std() >= 0)


def int_of_ndarray_input(x, a):
    return x + int(a.sum())


@pytest.mark.parametrize("fn", [float_of_sum, int_of_int_sum, int_truncates_a_float, float_of_bool, float_of_ndarray_reduction])
def test_number_of_one_element_tensor(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n),))


def test_int_of_ndarray_input():
    compiled = compile_eager(int_of_ndarray_input, fullgraph=True)
    for n in (4, 4, 7):  # first call, cache hit with new values, new size
        x, a = torch.randn(n), np.random.randint(-5, 5, size=n)
        torch.testing.assert_close(compiled(x, a), int_of_ndarray_input(x, a))


def test_more_than_one_element_is_refused():
    def fn(x):
        return x + float(x)

    with pytest.raises(capture.Unsupported, match="reads its data"):
        compile_eager(fn, fullgraph=True)(torch.randn(3))


def test_without_fullgraph_the_conversion_breaks_the_graph():
    compiled = compile_eager(float_of_sum)
    x = torch.randn(4)
    torch.testing.assert_close(compiled(x), float_of_sum(x))
    from helpers import cache_of

    assert cache_of(compiled).compilation.breaks
