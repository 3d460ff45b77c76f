"""Forms of builtins and container methods capture once refused under fullgraph=True:
`iter(callable, sentinel)`, `index(value, start, stop)`, `deque.insert`, set symmetric
difference, `int(text, base)`, class methods of immutable types (`float.fromhex`) and
`slice.indices`. Each compared with eager: first call, cache hit with new values, new size."""

from __future__ import annotations

import collections

import pytest
import torch

from helpers import assert_same, check_across_sizes, compile_eager


def iter_callable_sentinel(x):
    values = [3, 2, 1, 0, 5]
    it = iter(values.pop, 0)
    first = next(it)
    rest = list(it)
    return x + first, rest, values, list(it)


def iter_callable_sentinel_of_tensors(x):
    parts = [x, x * 2, None, x * 3]
    taken = list(iter(lambda: parts.pop(0), None))
    return sum(taken), parts


def iter_sentinel_with_zip(x):
    stack = [0, 9, 8, 0, 3, 2, 1]
    return x, list(zip(iter(stack.pop, 0), "abcdef")), list(zip("ab", iter(stack.pop, 0))), stack


def index_with_bounds(x):
    items = [5, 6, 7, 6]
    t = (1, 2, 1, 2)
    return x + items.index(6, 2) + t.index(2, 2, 4) + items.index(6, -3) + t.index(1, -2)


def index_with_bounds_missing(x):
    try:
        [5, 6, 7].index(5, 1)
    except ValueError:
        return x - 1
    return x


def deque_insert(x):
    d = collections.deque([x, x * 3])
    d.insert(1, x * 2)
    d.insert(-10, x * 0)
    full = collections.deque([1], maxlen=1)
    try:
        full.insert(0, 2)
    except IndexError:
        return list(d), list(full)
    return d


def set_symmetric_difference(x):
    s = {1, 2}
    s.symmetric_difference_update([2, 3, 3])
    return x + len(s), sorted(s), sorted({1, 2}.symmetric_difference((2, 4))), sorted(frozenset({1}).symmetric_difference({1, 5}))


def constant_methods_of_immutable_types(x):
    return x + float.fromhex("0x1.8p1") + int.from_bytes(b"\x01\x00", "little") + int("ff", 16) + int("0b101", 0), slice(1, None, 2).indices(10)


def zip_strict_lazily(x):
    # Pairs are made as asked; the error names the argument that ran out (or was left over)
    # once reached, and a generator is read no further than eager reads it.
    log = []

    def gen(n):
        for i in range(n):
            log.append(i)
            yield i

    results = []
    for args in ([x, x[1:]], [range(2), gen(x.shape[0])], [x, x, x[:1]], [x, range(x.shape[0])]):
        try:
            for pair in zip(*args, strict=True):
                results.append(len(pair))
        except ValueError as e:
            results.append(str(e))
    return x, results, log


@pytest.mark.parametrize(
    "fn",
    [zip_strict_lazily, iter_callable_sentinel, iter_callable_sentinel_of_tensors, iter_sentinel_with_zip, index_with_bounds, index_with_bounds_missing,
     deque_insert, set_symmetric_difference, constant_methods_of_immutable_types],
)  # fmt: skip
def test_builtin_form(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n),))


def sentinel_iterator_across_a_break(x):
    values = [3, 2, 1, 0, 5]
    it = iter(values.pop, 0)
    first = next(it)
    print("a graph break")
    return x + first + sum(it), values


def sentinel_iterator_returned(x):
    values = [3, 2, 1, 0, 5]
    return iter(values.pop, 0), x


def test_sentinel_iterator_is_never_handed_on_wrongly():
    # Across a break or returned, the iterator is not rebuilt (its callable's state is its
    # position): the frame runs eagerly around it instead.
    for fn in (sentinel_iterator_across_a_break, sentinel_iterator_returned):
        compiled = compile_eager(fn)
        for n in (4, 4, 7):
            x = torch.randn(n)
            actual, expected = compiled(x), fn(x)
            if fn is sentinel_iterator_returned:
                actual, expected = (list(actual[0]), actual[1]), (list(expected[0]), expected[1])
            torch.testing.assert_close(actual, expected)


NUMBER = int | float


def test_isinstance_with_a_union_of_types():
    # `int | str` made in the function is a constant; a global union is guarded by identity.
    global NUMBER

    def fn(x, v):
        n = x.shape[0]
        flags = isinstance(n, int | str), isinstance(x, torch.Tensor | None), issubclass(bool, int | float)
        return (x * 2 if isinstance(v, NUMBER) else x), flags, (int | None).__args__

    compiled = compile_eager(fn, fullgraph=True)
    try:
        for v in (1, "a", 2.5):
            assert_same(compiled(torch.ones(3), v), fn(torch.ones(3), v))
        NUMBER = str | bytes
        assert_same(compiled(torch.ones(3), "a"), fn(torch.ones(3), "a"))
    finally:
        NUMBER = int | float
