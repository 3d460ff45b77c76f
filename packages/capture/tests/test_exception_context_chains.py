"""`__context__` chains of exceptions raised and caught inside the traced code are CPython's:
raising an exception that is already in the chain of the one being handled ends the chain
there (_PyErr_SetObject), instead of closing a cycle."""

from __future__ import annotations

import torch

from helpers import compile_eager


def test_reraising_an_earlier_exception_cuts_the_chain():
    def fn(x):
        try:
            try:
                raise AssertionError
            except AssertionError as a_:
                a = a_
                try:
                    raise BytesWarning
                except BytesWarning as b_:
                    b = b_
                    try:
                        raise ConnectionError
                    except ConnectionError as c_:
                        c = c_
                        raise a  # noqa: B904
        except AssertionError as e:
            exc = e
        return x + 1, exc is a, a.__context__ is c, c.__context__ is b, b.__context__ is None

    expected = fn(torch.zeros(1))
    actual = compile_eager(fn, fullgraph=True)(torch.zeros(1))
    assert actual[1:] == expected[1:] == (True, True, True, True)
