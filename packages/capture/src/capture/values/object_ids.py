"""`id(obj)` of an object capture tracks by its value rather than by a real object: a list or
dict passed in or made by the trace, an object made by the trace, a tensor, a constant.

The number itself is not known while tracing (the object of a later call is another one, or
does not exist yet), so it is never baked into the graph: it is an `ObjectIdValue` that answers
what programs use ids for without reading the number, namely dict keys (`copy.deepcopy`'s memo)
and `==` with another id, and that the compiled entry spells as `id(<the object>)` when it
escapes (returned, stored). Anything else (arithmetic, formatting) refuses with a reason.
"""

from __future__ import annotations

from typing import Any

from ..errors import Unsupported

from .base import Value


class ObjectId:
    """The dict key standing for `id(obj)`: equal only to the key of the same object. (`obj`
    is a value's `identity()`, the Python value of a constant, or a tensor's fake; `real`
    the input tensor a fake stands for.)

    It hashes as the real object's number, so a dict holding that number as a plain int (an
    `id()` stored by an earlier call: `cache[id(x)] = ...`) compares the two: eager would
    find the entry, and whether a later call's object is the same one no guard can say, so
    the trace stops there (the graph breaks; the lookup runs natively)."""

    __slots__ = ("obj", "real")

    def __init__(self, obj: Any, real: Any = None):
        self.obj = obj
        self.real = real

    def __eq__(self, other):
        if type(other) is int and other == hash(self):
            raise Unsupported("id() of an object looked up among the numbers of a dict or set holding ids from earlier calls")
        return isinstance(other, ObjectId) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj if self.real is None else self.real)

    def __repr__(self):
        return f"id({self.obj!r})"


class ObjectIdValue(Value):
    """`id(target)`. `key` identifies the target's object for as long as the trace runs (the
    session keeps what it names alive)."""

    def __init__(self, target: Value, key: ObjectId):
        super().__init__(None)
        self.target = target
        self.key = key

    def describe(self):
        return f"id() of {self.target.describe()}"

    def python_type(self):
        return int

    def same_object(self, other: ObjectIdValue) -> bool:
        return self.key == other.key

    def reconstruct(self, writer):
        return f"{writer.name_for(id, 'id')}({writer.value(self.target)})"

    def inner_values(self):
        return [self.target]
