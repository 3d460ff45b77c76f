"""Guards on classes: what a class's own dict holds, and its method resolution order.

Python finds a class attribute (a method, a special method, a descriptor) as the first dict
along `cls.__mro__` that holds the name. A trace that looked a name up that way depends on
each dict before the one it was found in lacking the name, on that dict holding the very
object seen, and on the MRO itself (`__bases__` reassigned). `ClassDictMatch` checks one
class's dict for all names looked up through it (one dict read, then a `in` or an identity
test per name: no descriptor runs, no user code); `MroMatch` checks the MRO tuple (CPython
builds a new one whenever the bases of the class or of any ancestor change).
"""

from __future__ import annotations

import dataclasses

from ..codegen import Check, EmitContext, check, must_be, type_spelling
from .base import PRIORITY_OBJECT, Guard, emits


@dataclasses.dataclass(frozen=True, eq=False)
class ClassDictMatch(Guard):
    """`cls.__dict__` holds each name of `present` as the very object seen, and none of
    `absent`. Holds the class and the objects (no id reuse)."""

    cls: type
    present: tuple[tuple[str, object], ...]
    absent: tuple[str, ...]
    priority = PRIORITY_OBJECT

    def _key(self) -> tuple:
        return (id(self.cls), tuple((name, id(value)) for name, value in self.present), self.absent)

    def __eq__(self, other: object) -> bool:
        return type(other) is ClassDictMatch and other.cls is self.cls and other._key() == self._key()

    def __hash__(self) -> int:
        return hash((ClassDictMatch, self._key()))

    def __str__(self) -> str:
        parts = [f"{name!r} maps to {type(value).__qualname__} at {id(value):#x}" for name, value in self.present]
        if self.absent:
            parts.append(f"no {', '.join(map(repr, self.absent))}")
        return f"{type_spelling(self.cls)}.__dict__ holds {'; '.join(parts)}"


@emits(ClassDictMatch)
def _class_dict_match(guard: ClassDictMatch, ctx: EmitContext) -> list[Check]:
    # The proxy is made once and held: it is a live view of the class's one dict (a class's
    # dict is never replaced), and reading `cls.__dict__` on every call would make a new one.
    members = f"{type_spelling(guard.cls)}.__dict__"
    proxy = ctx.constant(guard.cls.__dict__, f"{guard.cls.__name__}_dict", members)
    tests, details = [], []
    for name in guard.absent:
        tests.append(f"{name!r} in {proxy}")
        details.append(check(tests[-1], f"{name!r} not in {members}", tests[-1]))
    for name, value in guard.present:
        # A subscript, not .get: a missing name raises, which the guard function reads as False.
        item = f"{proxy}[{name!r}]"
        expected = ctx.constant(value, f"{name.strip('_') or 'attr'}_seen", f"{type(value).__qualname__} at {id(value):#x}")
        tests.append(must_be(item, expected))
        details.append(check(tests[-1], f"{members}[{name!r}] is the object seen at capture", item))
    return [Check(" or ".join(tests), str(guard), ((None, proxy),), tuple(details))]


@dataclasses.dataclass(frozen=True, eq=False)
class MroMatch(Guard):
    """`cls.__mro__` is the very tuple seen: no class on it had its `__bases__` reassigned."""

    cls: type
    mro: tuple[type, ...]
    priority = PRIORITY_OBJECT

    def __eq__(self, other: object) -> bool:
        return type(other) is MroMatch and other.cls is self.cls and other.mro is self.mro

    def __hash__(self) -> int:
        return hash((MroMatch, id(self.cls)))

    def __str__(self) -> str:
        return f"{type_spelling(self.cls)}.__mro__ is ({', '.join(k.__qualname__ for k in self.mro)})"


@emits(MroMatch)
def _mro_match(guard: MroMatch, ctx: EmitContext) -> list[Check]:
    mro = f"{ctx.constant(guard.cls, guard.cls.__name__, type_spelling(guard.cls))}.__mro__"
    return [check(must_be(mro, ctx.constant(guard.mro, "mro_seen", "the MRO seen at capture")), str(guard), mro)]
