"""A function's keyword defaults changed inside the compiled code, through the dict
`__kwdefaults__` hands out, are what its next call uses: the function made inside (the change
runs at a graph break, the call in the resume function) and one passed in."""

from __future__ import annotations

import torch

from helpers import compile_eager


def test_kwdefaults_of_a_nested_function_changed_then_called():
    def fn(x):
        def g(t, *, k=2):
            return t * k

        a = g(x)
        g.__kwdefaults__["k"] = 7
        return a, g(x)

    a, b = compile_eager(fn)(torch.ones(1))
    torch.testing.assert_close((a, b), (torch.full((1,), 2.0), torch.full((1,), 7.0)))


def scaled(t, *, k=2):
    return t * k


def test_kwdefaults_of_a_function_passed_in_changed_then_called():
    def fn(x, f):
        table = f.__kwdefaults__
        table["k"] = 5
        return f(x)

    try:
        torch.testing.assert_close(compile_eager(fn)(torch.ones(1), scaled), torch.full((1,), 5.0))
        assert scaled.__kwdefaults__ == {"k": 5}
    finally:
        scaled.__kwdefaults__ = {"k": 2}
