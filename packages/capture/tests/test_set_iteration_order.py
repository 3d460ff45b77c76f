"""Sets iterate in their hash-table order, which depends on their history (deleted slots, when
the table grew, what operation made them), not only on their members: a set made or changed
in the traced code iterates as the real one would. Members are strings and sizes (symbolic
ints specialized by their use as members), compared with eager on fresh inputs, a cache hit and
a new size."""

from __future__ import annotations

import pytest
import torch

import capture
from helpers import check_across_sizes, compile_eager


def grown_past_a_resize(x):
    n = x.shape[0]
    s = {n * 8, 3, n, 64, -1}
    s.add(n * 16)
    return list(s)


def discard_then_add(x):
    n = x.shape[0]
    s = {"b", "a", f"k{n}", "c"}
    s.discard("a")
    s.add("z")
    return list(s), [v for v in s.copy()]


def operators_between_sets(x):
    n = x.shape[0]
    a = {"p", "q", f"r{n}", "s"}
    b = {f"r{n}", "t", "u", "p"}
    a.discard("q")
    return list(a | b), list(a & b), list(a - b), list(a ^ b), list(frozenset(b) | a)


def methods_with_other_iterables(x):
    n = x.shape[0]
    a = {"p", "q", f"r{n}", "s", "v"}
    u = a.union(["w", "p", f"x{n}"], {"y": 1})
    i = a.intersection(["s", f"r{n}", "zz"])
    a.symmetric_difference_update(["q", "new"])
    d = a.symmetric_difference({"new", "other"})
    a.intersection_update({"p", "s", "new", f"r{n}"})
    a.difference_update(["s"])
    return list(u), list(i), list(d), list(a)


def in_place_operators_change_the_set_itself(x):
    n = x.shape[0]
    s = {1, 2, n}
    alias = s
    s |= {n + 1}
    s -= {1}
    s &= {2, n, n + 1, 99}
    s ^= {2, 50}
    return sorted(alias), s is alias, list(s)


def methods_consume_an_iterator_once(x):
    s = {"a", "b", "c", f"d{x.shape[0]}"}
    i = s.intersection(v for v in ["b", "c", "zz"])
    u = s.union(iter(["q", "a"]))
    t = set(v for v in ("p", "a", "p"))
    return list(i), list(u), list(t), sorted(i)


@pytest.mark.parametrize(
    "fn",
    [
        grown_past_a_resize, discard_then_add, operators_between_sets, methods_with_other_iterables,
        in_place_operators_change_the_set_itself, methods_consume_an_iterator_once,
    ],
)
def test_sets_iterate_in_the_order_of_the_real_set(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n),), dynamic=True)


def set_with_history(members, churn=0):
    """A set of `members` whose table went through `churn` other members first."""
    s = set()
    for i in range(churn):
        s.add(f"tmp{i}")
    for i in range(churn):
        s.discard(f"tmp{i}")
    for member in members:
        s.add(member)
    return s


def test_a_set_passed_in_iterates_as_it_does_and_its_order_is_guarded():
    def fn(x, s):
        return [x * len(k) for k in s], list(s), list(s | {"z"}), list(s & {"a", "c", "q"})

    compiled = compile_eager(fn, fullgraph=True)
    for churn in (0, 0, 20):
        # Equal contents, another history: the order differs, so the entry must not be reused.
        s = set_with_history(["a", "b", "c", "d", "e"], churn)
        x = torch.randn(3)
        expected, actual = fn(x, s), compiled(x, s)
        assert actual[1:] == expected[1:]
        for a, e in zip(actual[0], expected[0]):
            torch.testing.assert_close(a, e)


def test_a_set_passed_in_and_changed_then_iterated_is_refused():
    def fn(x, s):
        s.discard("b")
        s.add(f"k{x.shape[0]}")
        return x + len(s), list(s)

    with pytest.raises(capture.Unsupported, match="iterating a set passed in after changing"):
        compile_eager(fn, fullgraph=True)(torch.randn(3), {"a", "b", "c"})
    compiled = compile_eager(fn)
    for n in (4, 4, 7):
        x = torch.randn(n)
        eager_set, compiled_set = set_with_history("abcde"), set_with_history("abcde")
        expected, actual = fn(x, eager_set), compiled(x, compiled_set)
        torch.testing.assert_close(actual[0], expected[0])
        assert actual[1] == expected[1] and list(compiled_set) == list(eager_set)


def test_changes_to_a_set_passed_in_are_replayed_in_order():
    """The changes are replayed one by one (not as new contents), so the set ends laid out
    as eager leaves it: the caller iterating it afterwards sees eager's order."""

    def fn(x, s):
        s.discard("b")
        s.add(f"k{x.shape[0]}")
        s.discard("d")
        s.add("zz")
        return x * len(s)

    compiled = compile_eager(fn, fullgraph=True)
    for n in (4, 4, 7):
        x = torch.randn(n)
        eager_set, compiled_set = set_with_history("abcdef", 12), set_with_history("abcdef", 12)
        torch.testing.assert_close(compiled(x, compiled_set), fn(x, eager_set))
        assert list(compiled_set) == list(eager_set)
