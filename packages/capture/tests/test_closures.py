"""Closures, nested functions, lambdas, decorators, and the globals and free variables of the
compiled function (read through guards: changing them recaptures)."""

from __future__ import annotations

import functools

import torch

from helpers import captures, check, compile_eager, run_and_compare

SCALE = 2.0
OFFSETS = [1.0, 2.0]


def one():
    return (torch.randn(3, 4),)


def test_nested_function_reads_enclosing_locals():
    def fn(x):
        bias = x.mean()

        def add_bias(t):
            return t + bias

        return add_bias(x * 2)

    check(fn, one)


def test_nonlocal_rebinding_inside_traced_code():
    def fn(x):
        count = 0

        def bump():
            nonlocal count
            count += 1

        bump()
        bump()
        return x * count

    check(fn, one)


def test_lambdas_and_defaults():
    def fn(x):
        shift = lambda t, by=3: t + by  # noqa: E731
        return shift(x), shift(x, by=1), list(map(lambda t: t * 2, [x, x]))

    check(fn, one)


def test_decorated_function():
    def logged(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs) + 1

        return wrapper

    @logged
    def inner(t, scale=1):
        return t * scale

    check(lambda x: inner(x, scale=3), one)


def test_closure_of_the_compiled_function_is_guarded():
    factor = 2

    def fn(x):
        return x * factor

    compiled = check(fn, one)
    factor = 5  # noqa: F841  (read by fn through its cell)
    run_and_compare(compiled, fn, one())
    assert captures(compiled) == 2


def test_global_reads_are_guarded():
    global SCALE

    def fn(x):
        return x * SCALE + OFFSETS[1]

    compiled = check(fn, one)
    old = SCALE
    try:
        SCALE = 3.0
        run_and_compare(compiled, fn, one())
        assert captures(compiled) == 2
    finally:
        SCALE = old


def test_global_writes_are_replayed():
    def fn(x):
        global COUNTER
        COUNTER = x.shape[0]
        return x + 1

    compiled = compile_eager(fn)
    compiled(torch.randn(7, 2))
    assert COUNTER == 7  # noqa: F821  (set by fn)


def test_functions_stored_in_containers():
    ops = {"double": lambda t: t * 2, "neg": torch.neg}

    def fn(x):
        return [ops[name](x) for name in ("double", "neg")]

    check(fn, one)


def test_partial_of_user_function():
    def affine(t, weight, bias=0.0):
        return t * weight + bias

    scaled = functools.partial(affine, weight=3.0)
    check(lambda x: scaled(x, bias=1.0), one)


def test_recursive_local_function_survives_a_graph_break():
    """A local function in its own closure (it calls itself), alive across a graph break:
    rebuilt with its cell made before its contents, not recursing forever."""

    def fn(x):
        def fib(n, memo={}):
            if n < 2:
                return n
            if n not in memo:
                memo[n] = fib(n - 1) + fib(n - 2)
            return memo[n]

        y = x * fib(6)
        print("graph break")
        return y + fib(x.shape[0]), fib(3)

    compiled = compile_eager(fn)
    for n in (4, 4, 7):
        run_and_compare(compiled, fn, (torch.randn(n),))
