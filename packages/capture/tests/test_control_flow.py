"""Control flow decided while tracing: branches on constants and tensor metadata, loops that
unroll, exceptions raised and caught by the traced code, `assert`, `is` and `in`.

PYTEST_DONT_REWRITE: the functions here are traced, and pytest's rewritten asserts would
trace into pytest's own reporting code.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers import captures, check, run_and_compare


def one():
    return (torch.randn(4, 5),)


def test_branch_on_shape_and_dtype():
    def fn(x):
        if x.shape[0] > 2 and x.dtype is torch.float32:
            x = x * 2
        elif x.dim() == 3:
            x = x + 100
        else:
            x = x - 1
        return x if x.is_floating_point() else x.float()

    compiled = check(fn, one)
    run_and_compare(compiled, fn, (torch.randn(1, 5),))
    assert captures(compiled) == 2, "a different size takes the other branch: a new capture"


def test_branch_on_optional_argument():
    def fn(x, mask=None):
        if mask is not None:
            x = x.masked_fill(mask, 0.0)
        return x

    compiled = check(fn, one)
    run_and_compare(compiled, fn, (torch.randn(4, 5), torch.rand(4, 5) > 0.5))
    assert captures(compiled) == 2


def test_for_loops():
    def fn(x):
        for i in range(3):
            x = x + i
        for t in [x, x * 2]:
            x = x - t.mean()
        for k, v in {"a": 1, "b": 2}.items():
            x = x * v
        for t in reversed((x, x + 1)):
            x = x + t
        return x

    check(fn, one)


def test_while_loop_with_break_and_continue():
    def fn(x):
        i = 0
        while True:
            i += 1
            if i % 2 == 0:
                continue
            x = x * 0.5
            if i > 5:
                break
        return x, i

    check(fn, one)


def test_loop_over_module_containers():
    layers = nn.ModuleList([nn.Linear(5, 5) for _ in range(3)])
    table = nn.ModuleDict({"a": nn.Linear(5, 5), "b": nn.Tanh()})

    def fn(x):
        for layer in layers:
            x = layer(x)
        for name in table:
            x = table[name](x)
        return x + len(layers)

    check(fn, one)


def test_exceptions_raised_and_caught_in_traced_code():
    def lookup(d, key):
        try:
            return d[key]
        except KeyError:
            return None
        finally:
            pass

    def fn(x):
        try:
            raise ValueError("inner")
        except (TypeError, ValueError) as e:
            message = e.args[0]
        y = lookup({}, "k")
        return x if y is None else y, message

    check(fn, one)


def test_raise_on_known_condition_propagates_like_eager():
    def fn(x):
        if x.dim() != 2:
            raise ValueError(f"expected 2 dims, got {x.dim()}")
        return x + 1

    compiled = check(fn, one)
    with pytest.raises(ValueError, match="expected 2 dims, got 3"):
        compiled(torch.randn(2, 2, 2))


def test_assert_on_metadata():
    def fn(x):
        assert x.shape[-1] == 5, "last dim must be 5"
        return x.sum(-1)

    compiled = check(fn, one)
    with pytest.raises(AssertionError, match="last dim must be 5"):
        compiled(torch.randn(2, 3))


def test_identity_and_membership():
    sentinel = object()

    def fn(x, option=sentinel):
        y = x
        flags = (y is x, option is sentinel, x is None, "a" in ("a", "b"), 3 not in [1, 2])
        return x * sum(flags)

    check(fn, one)


def test_conditional_expressions_and_boolean_operators():
    def fn(x):
        n = x.shape[0]
        scale = (n > 2 and 2) or 3
        other = (n < 2 or 5) and 7
        return x * scale + other + (1 if not n else 0)

    check(fn, one)


def test_with_statement_of_user_context_manager():
    class Recorder:
        def __init__(self):
            self.depth = 0

        def __enter__(self):
            return 10

        def __exit__(self, *exc):
            return False

    def fn(x):
        with Recorder() as value:
            x = x + value
        return x

    check(fn, one)


def test_generators_are_consumed():
    def pairs(items):
        for i, item in enumerate(items):
            if i % 2 == 0:
                yield i, item

    def fn(x):
        return [t * i for i, t in pairs([x, x + 1, x + 2])], sum(t.sum() for _, t in pairs([x, x]))

    check(fn, one)


def test_iteration_over_user_sequences():
    import collections.abc

    class Layers(collections.abc.Sequence):
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            if i >= self.n:
                raise IndexError(i)
            return i + 1

    layers = Layers(3)

    def fn(x):
        for factor in layers:
            x = x * factor
        return x, list(reversed(list(layers)))

    check(fn, one)


def test_caught_exception_carries_the_same_arguments_as_eager():
    def fn(x):
        try:
            {"a": 1}["missing"]
        except KeyError as e:
            key = e.args[0]
        try:
            [1][5]
        except IndexError as e:
            kind = type(e).__name__
        return x, key, kind

    check(fn, one)
