"""Looking names up on classes statically (through the MRO's dicts, running no descriptor):
what every kind of value asks before it decides to inline a method written in Python."""

from __future__ import annotations

import sys
import types
from typing import Any

from guards import HasAttr

MISSING = object()


def lookup_static(cls: type, name: str) -> tuple[Any, type | None]:
    """`name` as found in the dicts of `cls`'s MRO, without running descriptors."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name], klass
    return MISSING, None


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


def guard_no_dunders(frame, instance, cls: type, names: tuple[str, ...]) -> None:
    """The class (or `instance`'s type) still defines none of `names`: the trace took the path
    of their absence (an object with neither `__bool__` nor `__len__` is true), which one
    added to the class later changes."""
    for name in names:
        source = frame.session.class_attribute_source(instance.source, cls, name)
        if source is not None:
            frame.session.add_guard(HasAttr(source.base, name, False))


def abstract_instantiation_message(cls: type, abstract: list[str]) -> str:
    """CPython's TypeError for `cls()` while `abstract` methods lack an implementation."""
    if sys.version_info >= (3, 12):
        names = ", ".join(repr(name) for name in abstract)
        return f"Can't instantiate abstract class {cls.__name__} without an implementation for abstract method{'s' * (len(abstract) > 1)} {names}"
    return f"Can't instantiate abstract class {cls.__name__} with abstract method{'s' * (len(abstract) > 1)} {', '.join(abstract)}"
