"""Descriptors written in Python and classes' own `__setattr__`, on objects made in the traced
code and on objects passed in: `__get__`/`__set__` are traced (a later read in the same call
sees what `__set__` stored), a class's `__setattr__` is traced on an input (its validation log
is up to date when read back), and writes made with `object.__setattr__` are replayed past the
class's own `__setattr__` (a frozen dataclass changed in place). Compared with eager on fresh
inputs, a cache hit and a new size."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from helpers import assert_same, captures, check_across_sizes, compile_eager


class Scaled:
    """Stores under a private name the value plus one, reads back `factor` times it."""

    factor = 2

    def __set_name__(self, owner, name):
        self.private = "_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return getattr(obj, self.private) * self.factor

    def __set__(self, obj, value):
        setattr(obj, self.private, value + 1)


class Box:
    width = Scaled()

    def __init__(self, w):
        self.width = w


class Validated:
    def __init__(self):
        object.__setattr__(self, "log", [])

    def __setattr__(self, name, value):
        if isinstance(value, int) and value < 0:
            raise ValueError(f"{name} must be non-negative")
        self.log.append(name)
        object.__setattr__(self, name, value)


@dataclasses.dataclass(frozen=True)
class Frozen:
    n: int


def sizes(n):
    return (torch.randn(n),)


def check_with_own_objects(fn, make_object):
    """Like check_across_sizes, but eager and compiled each get their own object (the
    helpers share objects other than tensors, and these calls change theirs); the objects'
    attributes afterwards are compared too."""
    compiled = compile_eager(fn, fullgraph=True)
    for n in (4, 4, 7):
        x = torch.randn(n)
        expected_object, actual_object = make_object(), make_object()
        assert_same(compiled(x.clone(), actual_object), fn(x.clone(), expected_object))
        assert_same(vars(actual_object), vars(expected_object), "object afterwards")
    assert captures(compiled) == 2


def test_descriptor_on_an_object_made_in_the_function():
    def fn(x):
        b = Box(x)
        b.width = b.width + 1
        return b.width, b._width, vars(b)

    check_across_sizes(fn, sizes)


def test_descriptor_on_an_input_object_read_after_a_write():
    def fn(x, box):
        box.width = x
        return box.width + 1, box._width

    check_with_own_objects(fn, lambda: Box(1.0))


def test_descriptor_state_is_guarded():
    def fn(x):
        return Box(x).width

    compiled = compile_eager(fn, fullgraph=True)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), (x + 1) * 2)
    Box.width.factor = 3  # on the descriptor object itself: the entry's guard sees it
    try:
        torch.testing.assert_close(compiled(x), (x + 1) * 3)
    finally:
        del Box.width.factor
    torch.testing.assert_close(compiled(x), (x + 1) * 2)


def test_setattr_of_an_input_is_traced_so_its_log_is_current():
    def fn(x, v):
        v.n = x.shape[0]
        v.t = x * 2
        return v.t + v.n, list(v.log)

    check_with_own_objects(fn, Validated)


def test_setattr_of_an_input_raising_is_the_program_error():
    def fn(x, v):
        v.n = -x.shape[0]
        return x

    with pytest.raises(ValueError, match="must be non-negative"):
        compile_eager(fn, fullgraph=True)(torch.randn(3), Validated())


def test_object_setattr_on_a_frozen_dataclass_input_is_replayed_past_its_setattr():
    def fn(x, f):
        object.__setattr__(f, "n", x.shape[0])
        return x + f.n

    check_with_own_objects(fn, lambda: Frozen(1))


class CountingReads:
    """An input whose __getattribute__ counts every read of its attributes but `reads`."""

    def __init__(self, w):
        object.__setattr__(self, "reads", 0)
        object.__setattr__(self, "w", w)

    def __getattribute__(self, name):
        if name != "reads":
            object.__setattr__(self, "reads", object.__getattribute__(self, "reads") + 1)
        return object.__getattribute__(self, name)


def test_an_inputs_getattribute_runs_for_the_programs_reads_only():
    """Capture's own type checks read no attribute through the input's __getattribute__ (each
    isinstance that missed read `__class__` through it: 26 reads on the first call where eager
    makes 1). The hook is traced, its count replayed; guards read `c.w` past it
    (object.__getattribute__), so the first call's check of the new entry's guards adds none."""

    def scaled(x, c):
        return x * c.w

    compiled = compile_eager(scaled)
    ours, theirs = CountingReads(2.0), CountingReads(2.0)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x, ours), scaled(x, theirs))
    assert ours.reads == theirs.reads
    first = ours.reads
    for _ in range(3):
        x = torch.randn(3)
        torch.testing.assert_close(compiled(x, ours), scaled(x, theirs))
    assert ours.reads - first == 3
