"""The value an attribute write records for `del obj.name` (side_effects.py records it; the
object's value reads it back as "no such attribute"; the entry replays the deletion)."""

from __future__ import annotations

from .base import Value


class DeletedAttribute(Value):
    """The entry removes the attribute from the instance's __dict__ (object.__delattr__, the
    only deletion recorded) after the graph."""

    def describe(self):
        return "a deleted attribute"


DELETED = DeletedAttribute()
