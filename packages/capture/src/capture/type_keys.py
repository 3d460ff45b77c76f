"""Tables keyed by class, looked up without running user code.

A class's hash and `==` are its metaclass's: a user metaclass defining `__eq__` alone makes
its classes unhashable (`{C: 1}` raises TypeError), one defining both may call two different
classes equal. Looking a user class up in a table of our own rules (keyed by builtin and torch
types) must neither raise nor match by a user's `==`, so such classes are compared by identity.
"""

from __future__ import annotations

import weakref
from typing import Any


def plainly_hashed(cls: type) -> bool:
    """Whether `cls` hashes and compares as `type` does: by identity."""
    meta = type(cls)
    return meta.__hash__ is type.__hash__ and meta.__eq__ is type.__eq__


def get_by_type(table: dict, cls: type, default: Any = None) -> Any:
    """`table.get(cls, default)`, by identity for a class whose metaclass hashes its own way."""
    if plainly_hashed(cls):
        return table.get(cls, default)
    return next((value for key, value in table.items() if key is cls), default)


class WeakTypeTable:
    """A weak-keyed table of classes by identity (a WeakKeyDictionary hashes its keys)."""

    def __init__(self):
        self._entries: dict[int, tuple[weakref.ref, Any]] = {}

    def get(self, cls: type, default: Any = None) -> Any:
        entry = self._entries.get(id(cls))
        return entry[1] if entry is not None and entry[0]() is cls else default

    def __setitem__(self, cls: type, value: Any) -> None:
        key = id(cls)

        def forget(ref, key=key, entries=self._entries):
            if entries.get(key, (None,))[0] is ref:
                del entries[key]

        self._entries[key] = (weakref.ref(cls, forget), value)
