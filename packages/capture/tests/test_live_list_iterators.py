"""Iterators over lists as CPython's: reversed(lst) reads the list at each step, a list
iterator that ran out stays exhausted when the list grows later, and unpacking an iterator
asks for one item past the count at most, with CPython's messages."""

from __future__ import annotations

import torch

from helpers import compile_eager


def same_as_eager(fn):
    expected = fn(torch.ones(2))
    actual = compile_eager(fn, fullgraph=True)(torch.ones(2))
    assert actual[1:] == expected[1:]
    return actual


def test_reversed_list_sees_items_set_after_it_was_made():
    def fn(x):
        items = [1, 2, 3]
        r = reversed(items)
        items[0] = 9
        first = next(r)
        items.pop()
        return x, first, list(r)

    assert same_as_eager(fn)[1:] == (3, [2, 9])


def test_exhausted_list_iterator_stays_exhausted():
    def fn(x):
        items = [1]
        it = iter(items)
        list(it)
        items.append(2)
        return x, list(it), next(iter(items), None)

    assert same_as_eager(fn)[1:] == ([], 1)


def test_unpacking_too_many_stops_after_one_more_item():
    def fn(x):
        log = []

        def gen():
            for i in range(5):
                log.append(i)
                yield i

        try:
            a, b = gen()
        except ValueError as e:
            return x, str(e), log
        return x, a + b, log

    assert same_as_eager(fn)[1:] == ("too many values to unpack (expected 2)", [0, 1, 2])


def test_unpacking_too_few_message():
    def fn(x):
        try:
            a, b, c = [1, 2]
        except ValueError as e:
            return x, str(e)
        return x, a + b + c

    assert same_as_eager(fn)[1] == "not enough values to unpack (expected 3, got 2)"


def test_starred_unpacking_too_few_message_counts_what_it_got():
    def fn(x):
        try:
            a, *b, c = x[: x.shape[0] - 1]
        except ValueError as e:
            return x, str(e)
        return x, a + c

    for n in (2, 2, 1):
        x = torch.ones(n)
        expected = fn(x)
        assert compile_eager(fn)(x)[1] == expected[1]
