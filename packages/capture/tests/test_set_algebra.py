"""Set algebra (union, intersection, difference, issubset, issuperset) over members that are
not all constants: dict views, sets of tensors (by identity), generators; member objects kept
as CPython keeps them."""

from __future__ import annotations

import pytest
import torch

from helpers import check_across_sizes, compile_eager, run_and_compare


def subset_of_dict_keys(x):
    d = {"a": x, "b": 2}
    return x + {"a"}.issubset(d.keys()) + {"a", "b", "c"}.issuperset(d.keys())


def tensors_by_identity(x):
    y = x * 2
    s = {x, y}
    t = s.union([x + 1])
    both = s.intersection({y}, [y, x])
    rest = s.difference([x])
    return len(t), sum(both), sum(rest), s.issubset(t), frozenset({x}).union({y}) == {x, y}


def with_generator(x):
    y = x + 1
    s = {x, y}
    return len(s.intersection(v for v in (y, y))) + x


@pytest.mark.parametrize("fn", [subset_of_dict_keys, tensors_by_identity, with_generator])
def test_set_algebra(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n),))


def frozensets_of_sizes_as_keys(x):
    cache = {frozenset(x.shape): "seen"}
    members = {frozenset([x.shape[0]]), frozenset(x.shape)}
    return x + 1, cache.get(frozenset([x.shape[0]])), len(members), frozenset([x.shape[0]]) in members


def test_frozensets_made_apart_are_one_key():
    # A frozenset hashes by its members. Before: one holding a symbolic size (the third call,
    # at a new size) was keyed by identity, so the lookup missed: (None, 2, False) where eager
    # has ('seen', 1, True).
    compiled = compile_eager(frozensets_of_sizes_as_keys)
    for size in (3, 3, 5, 6):
        run_and_compare(compiled, frozensets_of_sizes_as_keys, (torch.randn(size),))
