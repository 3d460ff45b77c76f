"""Sequence repetition (`seq * n`, `n * seq`) with the counts CPython takes: ints, sizes, an
object whose class defines __index__ (unless its own __mul__/__rmul__ answers first), and the
program's TypeError for any other type."""

from __future__ import annotations

import pytest
import torch

from helpers import compile_eager, run_and_compare


class Count:
    def __init__(self, n):
        self.n = n

    def __index__(self):
        return self.n


class Repeater(Count):
    """Its own __rmul__ answers `seq * obj` before the repetition."""

    def __rmul__(self, other):
        return ("rmul", len(other), self.n)

    def __mul__(self, other):
        return ("mul", len(other), self.n)


def index_counts(x):
    c = Count(x.shape[0] - 2)
    return [x] * c, c * (1, 2), "ab" * Count(2), len([0] * c)


def own_methods_first(x):
    r = Repeater(x.shape[0])
    return x, [1, 2] * r, r * (1,)


def float_count_is_type_error(x):
    try:
        return [x] * 2.0
    except TypeError as e:
        return x, str(e)


@pytest.mark.parametrize("fn", [index_counts, own_methods_first, float_count_is_type_error])
def test_sequence_repeat_counts_like_cpython(fn):
    # Before: CaptureInternalError (NotConstant: Count object) for the __index__ counts and
    # the user's own __rmul__; a TypeError raised inside the tracer for the float.
    compiled = compile_eager(fn)
    for size in (4, 4, 6):
        run_and_compare(compiled, fn, (torch.randn(size),))
