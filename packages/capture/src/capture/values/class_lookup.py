"""Looking names up on classes statically (through the MRO's dicts, running no descriptor):
what every kind of value asks before it decides to inline a method written in Python.

Every lookup made while a capture runs is recorded (`recording_lookups`), and the capture
guards each one as it was answered (`lookup_guards`): the trace took the path that answer
chose (the special method found, or the fallback taken for its absence), so a method added,
replaced or deleted on the class or a base later, or new `__bases__`, must not keep serving
that entry."""

from __future__ import annotations

import contextlib
import contextvars
import sys
import types
from typing import Any

from guards import ClassDictMatch, MroMatch

MISSING = object()
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: builtin types, whose dicts cannot change

# While a capture runs: id(cls) -> (cls, its MRO then, {name: (what was found, where)}).
_lookups: contextvars.ContextVar[dict | None] = contextvars.ContextVar("class_lookups", default=None)


def lookup_static(cls: type, name: str) -> tuple[Any, type | None]:
    """`name` as found in the dicts of `cls`'s MRO, without running descriptors."""
    found: tuple[Any, type | None] = (MISSING, None)
    for klass in cls.__mro__:
        if name in klass.__dict__:
            found = klass.__dict__[name], klass
            break
    recorded = _lookups.get()
    if recorded is not None and not cls.__flags__ & _IMMUTABLE_TYPE:
        entry = recorded.get(id(cls))
        if entry is None:
            entry = recorded[id(cls)] = (cls, cls.__mro__, {})
        entry[2].setdefault(name, found)
    return found


@contextlib.contextmanager
def recording_lookups():
    """Records the class lookups made inside the block; yields what `lookup_guards` takes."""
    recorded: dict = {}
    token = _lookups.set(recorded)
    try:
        yield recorded
    finally:
        _lookups.reset(token)


def lookup_guards(recorded: dict) -> list:
    """The guards under which every recorded lookup answers as it did: per class looked up
    through, its MRO; per class on those MROs, one check of its dict for all the names (found
    there: the same object; found further on, or nowhere: absent)."""
    guards: list = []
    present: dict[int, dict[str, Any]] = {}
    absent: dict[int, set[str]] = {}
    classes: dict[int, type] = {}
    for cls, mro, names in recorded.values():
        if len(mro) > 2 or mro[-1] is not object:  # `__bases__` of a class made on `object` alone cannot change
            guards.append(MroMatch(cls, mro))
        for name, (value, owner) in names.items():
            for klass in mro:
                if klass.__flags__ & _IMMUTABLE_TYPE:
                    if klass is owner:
                        break
                    continue
                classes[id(klass)] = klass
                if klass is owner:
                    present.setdefault(id(klass), {})[name] = value
                    break
                absent.setdefault(id(klass), set()).add(name)
    for key, klass in classes.items():
        guards.append(ClassDictMatch(klass, tuple(sorted(present.get(key, {}).items())), tuple(sorted(absent.get(key, ())))))
    return guards


def class_defines(cls: type, name: str) -> bool:
    """Whether `cls`'s MRO holds `name`, as special method lookup and an instance's attribute
    lookup see it (not the metaclass's attributes, which `hasattr(cls, name)` finds); recorded
    and guarded as every lookup_static is."""
    return lookup_static(cls, name)[0] is not MISSING


def has_python_getattribute(cls: type) -> bool:
    attribute, _ = lookup_static(cls, "__getattribute__")
    return isinstance(attribute, types.FunctionType)


def python_dunder(cls: type, name: str) -> types.FunctionType | None:
    """A special method of `cls` written in Python (which capture inlines), if any."""
    attribute, _ = lookup_static(cls, name)
    return attribute if isinstance(attribute, types.FunctionType) else None


def dunder_value(frame, instance, cls: type, name: str, method: types.FunctionType):
    """The special method `python_dunder(cls, name)` found, as a value read (and guarded)
    through the class (or `instance`'s type): a method patched on the class after capture
    must not keep running the one traced."""
    return frame.session.wrap(method, frame.session.class_attribute_source(instance.source, cls, name))


def abstract_instantiation_message(cls: type, abstract: list[str]) -> str:
    """CPython's TypeError for `cls()` while `abstract` methods lack an implementation."""
    if sys.version_info >= (3, 12):
        names = ", ".join(repr(name) for name in abstract)
        return f"Can't instantiate abstract class {cls.__name__} without an implementation for abstract method{'s' * (len(abstract) > 1)} {names}"
    return f"Can't instantiate abstract class {cls.__name__} with abstract method{'s' * (len(abstract) > 1)} {', '.join(abstract)}"
