"""Loops whose body breaks the graph, and what runs eagerly.

A loop whose body breaks reaches the same resume function every iteration. Python state the
loop advances (a list it appends to, a dict it fills) is pinned by that resume function's
guards, so each iteration used to capture again, up to the recompile limit. Now a miss inside
the loop that makes nothing symbolic runs the rest of the call eagerly after two entries
(torch.compile runs such a frame eagerly from the start). A counter the loop advances still
becomes symbolic (automatic dynamic numbers) and stays compiled.

A function that runs eagerly (recompile limit, a break leaving nothing to compile) still has
its callees compiled, as under torch.compile, whose frame hook sees them.
"""

from __future__ import annotations

import sys
import warnings

import pytest
import torch

import capture
from helpers import assert_same, cache_of, compile_eager

N = 20


def appends_each_iteration(x):
    out = []
    for i in range(N):
        out.append(x * i)
        print(end="")
    return torch.stack(out)


def fills_a_dict(x):
    d = {}
    for i in range(N):
        d[f"k{i}"] = x + i
        print(end="")
    return sum(d.values()), len(d)


def counts(x):
    total = 0
    for i in range(N):
        x = x * 1.5 + i
        total += 1
        print(end="")
    return x, total


def appends_to_an_argument(x, out):
    for i in range(N):
        out.append(x - i)
        print(end="")
    return len(out)


@pytest.mark.parametrize("fn", [appends_each_iteration, fills_a_dict, counts], ids=lambda fn: fn.__name__)
def test_a_loop_that_breaks_captures_a_bounded_number_of_times(fn):
    compiled = compile_eager(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no recompile-limit warning
        for size in (4, 4, 6):
            x = torch.randn(size)
            assert_same(compiled(x), fn(x))
    compilation = cache_of(compiled).compilation
    # The function and each resume function: a first entry, and at most one more when the
    # loop's first iteration differs or a size becomes symbolic; not one per iteration.
    assert len(compilation.graphs) <= 6, [g.function for g in compilation.graphs]


def test_a_list_passed_in_keeps_growing_as_in_eager():
    compiled = compile_eager(appends_to_an_argument)
    for size in (3, 3, 5):
        x = torch.randn(size)
        mine, theirs = [], []
        assert compiled(x, mine) == appends_to_an_argument(x, theirs)
        assert_same(mine, theirs)


def helper(x):
    return x.sin() * 2


def varies(x, k):
    y = helper(x)
    return y + k


def test_callees_of_a_function_past_its_recompile_limit_are_still_compiled(monkeypatch):
    monkeypatch.setattr(capture.config, "recompile_limit", 2)
    compiled = compile_eager(varies, dynamic=False)
    with pytest.warns(UserWarning, match="recompile limit"):
        for k in range(4):  # a constant guard on `k` fails each call
            x = torch.randn(3)
            assert_same(compiled(x, k), varies(x, k))
    helper_cache = cache_of(compiled).compilation.cache(helper)
    assert helper_cache.entries, "the eager frame's callee ran uncompiled"
    graphs = cache_of(compiled).compilation.graphs
    assert any(g.function == "helper" for g in graphs)


def recurse(x, n):
    if n == 0:
        return x
    return recurse(x, n - 1) + 1


def _deepest(fn) -> int:
    """The largest n for which fn(x, n) does not overflow Python's stack."""
    low, high = 1, sys.getrecursionlimit()
    while low < high:
        middle = (low + high + 1) // 2
        try:
            fn(torch.ones(1), middle)
            low = middle
        except RecursionError:
            high = middle - 1
    return low


def test_recursion_through_compiled_callees_reaches_eagers_depth():
    """A compiled callee is entered straight from the caller's entry, without its dispatcher's
    frame: one Python frame per level, as in eager (two halved the reachable depth)."""
    compiled = compile_eager(recurse)
    compiled(torch.ones(1), 5)  # captures every entry the recursion needs (n == 0, 1, symbolic)
    eager_depth = _deepest(recurse)
    x = torch.randn(1)
    depth = eager_depth * 9 // 10
    assert_same(compiled(x, depth), recurse(x, depth))
