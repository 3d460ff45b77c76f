"""list.extend (and `+=`), deque.extend, deque.extendleft, set.update and dict.update take an
iterator's items one at a time, each added before the next is asked for, as CPython does: a
generator that reads the container sees the items added before it."""

from __future__ import annotations

import collections

import torch

from helpers import check


def vec():
    return (torch.randn(3),)


def test_list_extend_from_a_generator_reading_the_list():
    def fn(x):
        y = [1]
        y.extend(y[-1] + z for z in range(3))
        return x + 1, y

    check(fn, vec)


def test_deque_extend_and_extendleft_from_generators_reading_the_deque():
    def fn(x):
        left = collections.deque([1])
        left.extendleft(left[0] + z for z in range(3))
        right = collections.deque([1])
        right.extend(right[-1] * 2 for _ in range(3))
        return x * len(left), list(left), list(right)

    check(fn, vec)


def test_list_extend_by_itself_copies_first():
    def fn(x):
        y = [x, x + 1]
        y.extend(y)
        return y

    check(fn, vec)


def test_set_update_dict_update_and_list_iadd_from_generators_reading_the_target():
    def fn(x):
        s = {0}
        s.update(len(s) + i for i in range(3))
        d = {"a": 0}
        d.update((f"k{len(d)}", len(d)) for _ in range(3))
        y = [1]
        y += (y[-1] + 1 for _ in range(3))
        return x * len(s), sorted(s), d, y

    check(fn, vec)
