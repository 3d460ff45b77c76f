"""`==` between dicts, lists and tuples as CPython's: dicts equal by keys and values whatever
their identity (two OrderedDicts also by key order), and items compared like
PyObject_RichCompareBool, the same object equal without its __eq__ being asked."""

from __future__ import annotations

from collections import OrderedDict

import torch

from helpers import compile_eager


class Plain:
    pass


class RaisingEq:
    def __eq__(self, other):
        raise ValueError("compared")

    __hash__ = object.__hash__


def test_dicts_compare_by_contents():
    def fn(x):
        d1 = {"a": 1, "b": x}
        d2 = dict(d1)
        o = Plain()
        return (d1 == d2, d1 != d2, {1: o} == {1: o}, {"a": o} == {"b": o}, {"a": 1} == {"a": 2},
                OrderedDict(a=o, b=1) == OrderedDict(b=1, a=o), OrderedDict(a=o, b=1) == {"b": 1, "a": o})

    assert compile_eager(fn, fullgraph=True)(torch.ones(2)) == fn(torch.ones(2))


def test_same_item_is_equal_without_its_eq():
    def fn(x):
        v = RaisingEq()
        same = ({1: v} == {1: v}, [v] == [v], (v, 1) == (v, 1))
        try:
            other = {1: v} == {1: RaisingEq()}
        except ValueError:
            other = "raised"
        return same, other

    assert compile_eager(fn, fullgraph=True)(torch.ones(2)) == fn(torch.ones(2)) == ((True, True, True), "raised")
