"""Objects made in the traced code whose classes have __slots__ or abstract methods behave as
CPython's: an unset slot is missing (hasattr False, AttributeError on read), a slotted object
has no __dict__ and comes back out of the graph with its slots set, and constructing a class
with abstract methods raises the program's TypeError."""

from __future__ import annotations

import abc

import pytest
import torch

from helpers import check_across_sizes, compile_eager


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a):
        self.a = a


class SlottedBase:
    __slots__ = ("a",)


class WithDict(SlottedBase):
    """A slot from its base, every other attribute in its instance dict."""

    def __init__(self, a, b):
        self.a, self.b = a, b


class Shape(abc.ABC):
    @abc.abstractmethod
    def area(self): ...

    @abc.abstractmethod
    def name(self): ...


class HalfDone(Shape):
    def area(self):
        return 1


def sizes(n):
    return (torch.randn(n),)


def test_unset_slot_is_missing_until_written():
    def fn(x):
        s = Slotted(x)
        before = hasattr(s, "b")
        s.b = x * 2
        return x + before + hasattr(s, "b"), hasattr(s, "__dict__"), hasattr(s, "a"), s.a + s.b

    check_across_sizes(fn, sizes)


def test_reading_an_unset_slot_raises_attribute_error():
    def fn(x):
        return Slotted(x).b

    with pytest.raises(AttributeError, match="'Slotted' object has no attribute 'b'"):
        compile_eager(fn, fullgraph=True)(torch.randn(3))


def test_slotted_object_made_in_the_graph_is_returned_with_its_slots():
    def fn(x):
        s = Slotted(x + 1)
        s.b = x.shape[0]
        return s

    compiled = compile_eager(fn, fullgraph=True)
    for n in (4, 4, 7):
        x = torch.randn(n)
        out = compiled(x)
        assert type(out) is Slotted and not hasattr(out, "__dict__")
        torch.testing.assert_close(out.a, x + 1)
        assert out.b == n



def test_object_with_a_base_slot_and_a_dict_is_returned_as_eager_makes_it():
    def fn(x):
        return WithDict(x + 1, x * 2)

    compiled = compile_eager(fn, fullgraph=True)
    for n in (4, 4, 7):
        x = torch.randn(n)
        out = compiled(x)
        assert type(out) is WithDict and set(vars(out)) == {"b"}
        torch.testing.assert_close(out.a, x + 1)
        torch.testing.assert_close(out.b, x * 2)


@pytest.mark.parametrize("cls", [Shape, HalfDone])
def test_constructing_an_abstract_class_raises_type_error(cls):
    def fn(x):
        cls()
        return x

    with pytest.raises(TypeError, match=f"Can't instantiate abstract class {cls.__name__}") as eager:
        fn(torch.randn(3))
    with pytest.raises(TypeError, match=f"Can't instantiate abstract class {cls.__name__}") as compiled:
        compile_eager(fn, fullgraph=True)(torch.randn(3))
    assert str(compiled.value) == str(eager.value)


class SlotBase:
    __slots__ = ("a",)


class SlotChildWithDict(SlotBase):
    pass  # no __slots__ of its own: its instances have a __dict__ besides slot `a`


class SlotsAndDict:
    __slots__ = ("a", "__dict__")


@pytest.mark.parametrize("cls", [SlotChildWithDict, SlotsAndDict], ids=lambda c: c.__name__)
def test_vars_of_object_with_slots_and_dict_shows_only_the_dict(cls):
    def fn(x):
        o = cls()
        o.a = x
        o.extra = x.shape[0]
        return o.a * o.extra, sorted(vars(o))

    check_across_sizes(fn, lambda n: (torch.randn(n),))
