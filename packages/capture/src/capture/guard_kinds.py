"""Guard kinds capture adds to the `guards` ones, registered through its emitter registry
(`guards.kinds.emits`): relations `guards` has no kind for.

`SameObject`: two sources name one object. A tensor the trace reaches by two paths
(`f(x, x)`, tied weights) becomes one graph input, read from the first path; an entry is then
valid only for calls where both paths lead to the same object again, or the second one's
value would be silently ignored.

`NotInInstanceDict`: an attribute is not set on the instance itself. A module guarded by its
type (capture.wrap) runs its class's `forward`; another instance may carry a `forward` of its
own (a patched or hooked instance), which must not be served by that entry.
"""

from __future__ import annotations

import dataclasses

from guards.codegen import EmitContext, check, must_be
from guards.kinds.base import PRIORITY_OBJECT, Guard, emits
from guards.sources import Source


@dataclasses.dataclass(frozen=True)
class SameObject(Guard):
    """`source is other`: both paths lead to one object."""

    source: Source
    other: Source
    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return f"{self.source} is {self.other}"


@emits(SameObject)
def _same_object(guard: SameObject, ctx: EmitContext) -> list:
    value = ctx.read(guard.source)
    return [check(must_be(value, ctx.read(guard.other)), str(guard), value)]


@dataclasses.dataclass(frozen=True)
class NotInInstanceDict(Guard):
    """`name not in source.__dict__`."""

    source: Source
    name: str
    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return f"{self.name!r} not in {self.source}.__dict__"


@emits(NotInInstanceDict)
def _not_in_instance_dict(guard: NotInInstanceDict, ctx: EmitContext) -> list:
    test = f"{guard.name!r} in {ctx.read(guard.source)}.__dict__"
    return [check(test, str(guard), test)]
