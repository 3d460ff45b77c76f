"""`repr()` of values that are not constants: a user class's Python `__repr__` traced (its
result checked to be a str, as CPython does), exceptions whose text CPython decides, tuples of
sizes; a tensor's repr (its data) refused."""

from __future__ import annotations

import pytest
import torch

import capture
from helpers import check_across_sizes, compile_eager


class Box:
    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Box({self.v!r})"


class BadRepr:
    def __repr__(self):
        return 5


class MyError(ValueError):
    pass


def user_repr(x):
    return x + len(repr(Box(3))), repr(Box("a")), repr([1, (2,)])


def exception_repr(x):
    try:
        raise MyError("msg", 2)
    except ValueError as e:
        return x, str(e), repr(e), repr(KeyError("k"))


def shape_repr(x):
    return x, repr(x.shape), repr(tuple(x.shape))


def repr_must_be_a_string(x):
    try:
        repr(BadRepr())
    except TypeError as e:
        return x - 1, str(e)
    return x


@pytest.mark.parametrize("fn", [user_repr, exception_repr, shape_repr, repr_must_be_a_string])
def test_repr(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n),))


def test_repr_of_a_tensor_is_refused():
    with pytest.raises(capture.Unsupported, match="repr"):
        compile_eager(lambda x: (x, repr(x)), fullgraph=True)(torch.randn(3))
