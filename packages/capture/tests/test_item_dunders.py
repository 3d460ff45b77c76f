"""`obj[key] = value` and `del obj[key]` on objects whose class writes `__setitem__` /
`__delitem__` in Python (collections.UserDict, ChainMap, a user's mapping), made inside the
compiled function or passed in: the methods are traced; without one, refused."""

from __future__ import annotations

import collections

import pytest
import torch

import capture
from helpers import check_across_sizes, compile_eager


class Registry:
    def __init__(self):
        self.items = {}

    def __setitem__(self, key, value):
        self.items[key] = value * 2

    def __getitem__(self, key):
        return self.items[key]

    def __delitem__(self, key):
        del self.items[key]


class NoItems:
    pass


def user_dict(x):
    d = collections.UserDict(a=1)
    d["b"] = x
    del d["a"]
    return x + len(d) + d["b"], d.data


def chain_map_writes_first(x):
    a, b = {}, {"k": 1}
    c = collections.ChainMap(a, b)
    c["k"] = x
    return x + b["k"] + a["k"], a, b


def made_inside(x):
    r = Registry()
    r["t"] = x
    r["u"] = 1
    del r["u"]
    return r["t"], r.items


@pytest.mark.parametrize("fn", [user_dict, chain_map_writes_first, made_inside])
def test_item_dunders_traced(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n),))


def test_item_dunders_of_an_input():
    def fn(x, r):
        r["t"] = x
        return x + r["t"]

    compiled = compile_eager(fn, fullgraph=True)
    for n in (4, 4, 7):  # first call, cache hit with new values, new size
        x, eager_r, compiled_r = torch.randn(n), Registry(), Registry()
        torch.testing.assert_close(compiled(x, compiled_r), fn(x, eager_r))
        torch.testing.assert_close(compiled_r.items["t"], eager_r.items["t"])


def test_without_a_python_setitem_it_is_refused():
    def fn(x):
        o = NoItems()
        o["k"] = x
        return x

    with pytest.raises(capture.Unsupported, match="item assignment"):
        compile_eager(fn, fullgraph=True)(torch.randn(3))
