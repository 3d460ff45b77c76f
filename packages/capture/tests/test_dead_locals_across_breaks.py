"""Objects held only by a local that is no longer read live, across a graph break, as long as
eager's frame holds them: until the name is rebound or the function returns.

A break used to hand the resume function the locals it reads, so such an object died when the
compiled entry returned: weak references went dead, WeakKeyDictionary entries vanished and
`__del__` ran early (capture.runtime.held_locals). Every case compares what the function sees
with eager, on fresh objects and values each call, at a cache hit and at a new size.
"""

from __future__ import annotations

import gc
import weakref

import pytest
import torch

import capture

pytestmark = pytest.mark.usefixtures("frozen_heap")


class Tracked:
    """Counts its live instances."""

    alive = 0

    def __init__(self, t):
        self.t = t
        Tracked.alive += 1

    def __del__(self):
        Tracked.alive -= 1


def weak_key_dictionary(x):
    d = weakref.WeakKeyDictionary()
    a = Tracked(x)
    b = Tracked(x * 2)
    d[a] = 1
    d[b] = 2
    y = a.t * d[a] + b.t * d[b]
    print(end="")
    return y, len(d)


def weak_ref_of_a_dead_local(x):
    a = Tracked(x + 1)
    r = weakref.ref(a)
    y = a.t * 2
    print(end="")
    return y, r() is not None


def alive_after_two_breaks(x):
    a = Tracked(x)
    r = weakref.ref(a)
    y = a.t.sin()
    print(end="")
    z = y + 1
    print(end="")
    return z, r() is not None


def _callee(x):
    keep = Tracked(x)
    r = weakref.ref(keep)
    y = keep.t * 3
    print(end="")
    return y, r() is not None


def break_in_a_callee(x):
    a = Tracked(x)
    r = weakref.ref(a)
    y = a.t + 1
    z, callee_alive = _callee(y)
    return z, callee_alive, r() is not None


def data_dependent_branch(x):
    a = Tracked(x)
    r = weakref.ref(a)
    y = a.t.sum()
    if y.item() > 0:
        return y + 1, r() is not None
    return y - 1, r() is not None


def input_object_no_longer_read(o, x):
    held = o
    o = None
    y = held.t + x
    print(end="")
    return y, o


CASES = [weak_key_dictionary, weak_ref_of_a_dead_local, alive_after_two_breaks, break_in_a_callee, data_dependent_branch]


def _observe(fn, *args):
    """The result, and how many Tracked objects outlive the call (none, once it returns)."""
    gc.collect()
    Tracked.alive = 0
    result = fn(*args)
    gc.collect()
    return result, Tracked.alive


def _assert_same(actual, expected):
    assert type(actual) is type(expected)
    if isinstance(expected, torch.Tensor):
        torch.testing.assert_close(actual, expected)
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _assert_same(a, e)
    else:
        assert actual == expected


@pytest.mark.parametrize("fn", CASES, ids=lambda fn: fn.__name__)
def test_dead_locals_live_as_long_as_in_eager(fn):
    compiled = capture.optimize(fn, capture.backends.eager)
    for size in (4, 4, 7):
        x = torch.randn(size)
        _assert_same(_observe(compiled, x), _observe(fn, x))


def test_an_input_object_lives_while_its_dead_local_does():
    compiled = capture.optimize(input_object_no_longer_read, capture.backends.eager)
    for size in (3, 3, 5):
        x = torch.randn(size)
        expected = input_object_no_longer_read(Tracked(torch.randn(size)), x)
        o = Tracked(torch.randn(size))
        reference = weakref.ref(o)
        actual = compiled(o, x)
        _assert_same(actual[1], expected[1])
        torch.testing.assert_close(actual[0], o.t + x)
        del o
        gc.collect()
        assert reference() is None  # nothing compiled keeps the caller's object


def test_each_loop_iteration_object_dies_when_the_name_is_rebound():
    """Held dead locals do not pile up in a loop whose body breaks: the resume function drops
    each when the next iteration rebinds the name."""

    def loop(x):
        refs = []
        for i in range(4):
            o = Tracked(x + i)
            refs.append(weakref.ref(o))
            print(end="")
        return [r() is None for r in refs]

    compiled = capture.optimize(loop, capture.backends.eager)
    # The capturing call's objects also live in the capture's reference cycles, until the
    # garbage collector runs: compare the calls after it.
    compiled(torch.randn(3))
    for size in (3, 3):
        x = torch.randn(size)
        assert _observe(compiled, x) == _observe(loop, x)
