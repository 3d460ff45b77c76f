"""Classes whose metaclass defines `__eq__` (and so `__hash__`) of its own, used as CPython
runs them. Such a class's hash and == are user code: with `__eq__` alone the class is
unhashable, and a metaclass may call two different classes equal. Capture looked classes up
in tables of its own (rules, the sources of class attributes, guard sets, signatures) by hash:
an unhashable class raised CaptureInternalError while tracing, and two "equal" classes shared
one source, so a guard on `B.__init__` read `A.__init__` (failing on every call)."""

from __future__ import annotations

import warnings

import pytest
import torch

from helpers import compile_eager


class Unhashable(type):
    def __eq__(cls, other):
        return cls is other


class AllEqual(type):
    def __eq__(cls, other):
        return isinstance(other, AllEqual)

    def __hash__(cls):
        return 7


def _classes(meta):
    class Base(metaclass=meta):
        k = 2

        def __init__(self, v):
            self.v = v

        def go(self, x):
            return x * self.k + self.v

        @classmethod
        def make(cls, v):
            return cls(v)

        @property
        def twice(self):
            return self.v * 2

    class Sub(Base):
        k = 5

        def __init__(self, v, w=1):
            super().__init__(v)
            self.w = w

        def go(self, x):
            return super().go(x) - self.k * self.w

    class Slotted(metaclass=meta):
        __slots__ = ("a",)

        def __init__(self, a):
            self.a = a

    class Linear(torch.nn.Linear, metaclass=type("ModuleMeta", (meta, type(torch.nn.Linear)), {})):
        pass

    return Base, Sub, Slotted, Linear


@pytest.mark.parametrize("meta", [Unhashable, AllEqual], ids=lambda m: m.__name__)
def test_classes_of_a_metaclass_with_its_own_eq(meta):
    Base, Sub, Slotted, Linear = _classes(meta)
    linear = Linear(3, 3)

    def f(x, obj):
        b, s, slotted = Base(1), Sub.make(3), Slotted(4)
        out = b.go(x) + s.go(x) + s.twice + slotted.a + isinstance(s, Base) + (type(obj) is Sub)
        return out + obj.go(x) + type(obj).k + linear(x), Sub(2, w=3), slotted

    def check(x, obj):
        (out, made, slotted), (expected, made_eagerly, _) = compiled(x, obj), f(x, obj)
        torch.testing.assert_close(out, expected)
        assert type(made) is Sub and vars(made) == vars(made_eagerly)
        assert type(slotted) is Slotted and slotted.a == 4

    compiled = compile_eager(f, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a guard failing on its own inputs warns
        for n, obj in [(4, Sub(6)), (4, Sub(7)), (7, Sub(8)), (4, Base(5))]:
            check(torch.randn(n, 3), obj)
        Sub.k = 9  # a class attribute changed between calls
        check(torch.randn(4, 3), Sub(1))
