"""`SameObject`: the guard that two sources name one object, for inputs reached twice.

A tensor the trace reaches by two paths (`f(x, x)`, tied weights) becomes one graph input,
read from the first path; an entry is then valid only for calls where both paths lead to
the same tensor again, or the second one's value would be silently ignored. The `guards`
package has no kind for a relation between two sources, so capture registers this one
through its emitter registry (`guards.kinds.emits`).
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
