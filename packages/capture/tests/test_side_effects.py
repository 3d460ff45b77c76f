"""Side effects on objects that outlive the call: attribute writes, mutated input containers,
objects created by the traced code and returned. Capture records them and the compiled entry
replays them after the graph runs, so the caller sees what eager would leave behind."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import capture
from helpers import assert_same, captures, check, compile_eager


class State:
    def __init__(self):
        self.calls = 0
        self.last = None


@dataclasses.dataclass
class Output:
    value: torch.Tensor
    extra: int = 0


def test_attribute_writes_on_objects_are_replayed():
    def fn(state, x):
        state.calls += 1
        state.last = x * 2
        return x + state.calls

    compiled = compile_eager(fn)
    state, reference = State(), State()
    for _ in range(5):
        x = torch.randn(3)
        assert_same(compiled(state, x), fn(reference, x))
        assert state.calls == reference.calls
        torch.testing.assert_close(state.last, reference.last)
    # The second call sees a new `calls` value and recaptures; from then on the counter is a
    # number that changes between calls, kept out of the graph (no capture per value).
    assert captures(compiled) == 2


def test_input_list_mutation_is_replayed():
    def fn(items, x):
        items.append(x * 2)
        items[0] = x
        return len(items)

    compiled = compile_eager(fn)
    x = torch.randn(3)
    mine, theirs = [torch.zeros(3)], [torch.zeros(3)]
    assert compiled(mine, x) == fn(theirs, x)
    assert_same(mine, theirs)


def test_input_dict_mutation_is_replayed():
    def fn(cache, x):
        cache["seen"] = x + 1
        cache.pop("old")
        return x

    compiled = compile_eager(fn)
    x = torch.randn(2)
    mine, theirs = {"old": 1}, {"old": 1}
    compiled(mine, x)
    fn(theirs, x)
    assert_same(mine, theirs)


def test_new_objects_are_returned():
    def fn(x):
        out = Output(x * 2, extra=x.shape[0])
        out.extra += 1
        return out

    check(fn, lambda: (torch.randn(4),))


def test_new_user_object_attributes():
    def fn(x):
        state = State()
        state.last = x.sin()
        return state.last, state.calls

    check(fn, lambda: (torch.randn(4),))


def test_writes_visible_to_later_reads_in_the_same_call():
    def fn(state, x):
        state.last = x
        return state.last * 2

    compiled = compile_eager(fn)
    x = torch.randn(3)
    state = State()
    assert_same(compiled(state, x), x * 2)
    assert state.last is x


def test_replayed_writes_read_the_values_the_call_saw():
    # Each write's value and target is read before any write runs: o.a <- `o.b` must not see
    # the new o.b, nor `d['a']` the new items[0], and `old.k` goes to the object o.inner was.
    def fn(o, items, d, x):
        o.a, o.b = o.b, o.a
        old = o.inner
        o.inner = State()
        old.last = x * 2
        items[0], d["a"] = d["a"], items[0]
        return o.a - o.b

    def make():
        o = State()
        o.a, o.b, o.inner = torch.ones(3), torch.zeros(3), State()
        return o, [torch.ones(2)], {"a": torch.zeros(2)}, torch.randn(3)

    compiled = compile_eager(fn)
    mine, theirs = make(), make()
    theirs[3].copy_(mine[3])
    old_mine, old_theirs = mine[0].inner, theirs[0].inner
    assert_same(compiled(*mine), fn(*theirs))
    assert_same(mine[1:3], theirs[1:3])
    assert_same((mine[0].a, mine[0].b, old_mine.last), (theirs[0].a, theirs[0].b, old_theirs.last))
    assert mine[0].inner is not old_mine and mine[0].inner.last is None


class Renamed(State):
    def label(self):
        return 2


def test_class_assignment_breaks_the_graph():
    # `o.__class__ = C` would leave the rest of the trace on the old class (its methods,
    # isinstance): capture refuses it, and the graph breaks there.
    def fn(o, x):
        made = State()
        made.__class__ = Renamed
        o.__class__ = Renamed
        return x + made.label() + o.label(), isinstance(o, Renamed), type(made).__name__

    compiled = compile_eager(fn)
    for _ in range(2):
        mine, theirs = State(), State()
        x = torch.randn(3)
        assert_same(compiled(mine, x), fn(theirs, x))
        assert type(mine) is Renamed
    with pytest.raises(capture.Unsupported, match="__class__"):
        compile_eager(fn, fullgraph=True)(State(), torch.randn(3))


def test_module_attribute_write():
    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.steps = 0

        def forward(self, x):
            self.steps = self.steps + 1
            return x * self.steps

    module, reference = Counter(), Counter()
    compiled = compile_eager(module)
    for _ in range(2):
        x = torch.randn(2)
        assert_same(compiled(x), reference(x))
    assert module.steps == reference.steps == 2


@dataclasses.dataclass(frozen=True)
class Frozen:
    scale: float
    shift: float = 0.0

    def apply(self, t):
        return t * self.scale + self.shift


def test_frozen_dataclass_created_in_traced_code():
    def fn(x):
        config = Frozen(2.0, shift=x.shape[0])
        return config.apply(x), config

    check(fn, lambda: (torch.randn(3),))


class Box:
    def __init__(self, value):
        self._value = value
        self.log = []

    @property
    def value(self):
        return self._value

    @value.setter
    def value(self, new):
        self.log.append("set")
        self._value = new

    def __getattr__(self, name):
        if name == "doubled":
            return self._value * 2
        raise AttributeError(name)


def test_properties_setters_and_getattr_on_new_objects():
    def fn(x):
        box = Box(x)
        box.value = box.value + 1
        return box.doubled, box.log

    check(fn, lambda: (torch.randn(3),))


def test_property_setter_on_existing_object_is_replayed():
    def fn(box, x):
        box.value = x * 3
        return box.value + 1

    compiled = compile_eager(fn)
    box, reference = Box(0), Box(0)
    x = torch.randn(2)
    assert_same(compiled(box, x), fn(reference, x))
    torch.testing.assert_close(box.value, reference.value)
    assert box.log == reference.log


class Base:
    def __init__(self, scale):
        super().__init__()
        self.scale = scale


class Scaled(Base):
    def __init__(self, scale, shift):
        super().__init__(scale)
        self.shift = shift

    def __call__(self, t):
        return t * self.scale + self.shift


def test_user_class_hierarchy_constructed_in_traced_code():
    def fn(x):
        op = Scaled(2.0, x.shape[0])
        return op(x), op

    compiled = compile_eager(fn)
    x = torch.randn(3)
    out, op = compiled(x)
    torch.testing.assert_close(out, fn(x)[0])
    assert type(op) is Scaled and (op.scale, op.shift) == (2.0, 3)


def test_input_list_that_holds_itself():
    """An input list holding itself is one value reached twice (wrapping it once recursed
    without end)."""

    def fn(items):
        items[0] = items[0] * 2
        items[1].append(items[0] + 1)
        return len(items), items[1] is items, items[-1] - 1

    compiled = compile_eager(fn)
    for n in (4, 4, 7):
        eager_items, compiled_items = [torch.ones(n)], [torch.ones(n)]
        eager_items.append(eager_items)
        compiled_items.append(compiled_items)
        expected, actual = fn(eager_items), compiled(compiled_items)
        assert actual[:2] == expected[:2]
        torch.testing.assert_close(actual[2], expected[2])
        assert len(compiled_items) == len(eager_items) and compiled_items[1] is compiled_items
