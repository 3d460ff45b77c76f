"""Class attributes read and written through an instance: methods, class and static methods,
properties, C methods and descriptors written in Python, each guarded through the class that
holds it (a class patched after capture must not keep running what was traced)."""

from __future__ import annotations

import types
from typing import Any

from guards import AttrSource, IdentityMatch, ItemSource, KeyAbsent

from ..errors import Unsupported
from ..markers import is_disabled
from .base import Value
from .callables import BuiltinValue, MethodValue
from .class_lookup import dunder_value, python_dunder
from .functions import FunctionValue


def call_item_dunder(frame, instance: Value, cls: type, name: str, args: list[Value]) -> None:
    """`obj[key] = value` / `del obj[key]` of an object whose class writes the method in
    Python (UserDict, ChainMap, a user's mapping): the method traced, else refused."""
    method = python_dunder(cls, name)
    if method is None:
        raise Unsupported(f"{'item assignment' if name == '__setitem__' else 'item deletion'} on {instance.describe()}")
    dunder_value(frame, instance, cls, name, method).call(frame, [instance, *args], {})


def bind_class_attribute(frame, instance: Value, cls: type, descriptor: Any, name: str | None, *, readable: bool = False) -> Value | None:
    """What reading a class attribute through an instance gives, for descriptors capture
    models; None for plain class data (the caller wraps it, with `class_attribute_source`).
    `readable`: the instance is a real object whose attribute the caller reads natively when
    this gives None (a slot, a C-computed field of an `inspect.Signature`), rather than
    wrapping the descriptor.

    What the class holds under `name` is guarded (read through the class, see
    `CaptureSession.class_attribute_source`): a method, property or descriptor replaced on the
    class after capture must not keep running the one traced (`name` None: the caller guards
    where the descriptor was found, as `super()` does)."""
    session = frame.session
    source = session.class_attribute_source(instance.source, cls, name) if name is not None else None
    if isinstance(descriptor, types.FunctionType):
        if is_disabled(descriptor):
            # Runs natively (a graph break), never traced: `Optimizer.zero_grad`.
            _guard_class_attribute(session, source, descriptor)
            return MethodValue(BuiltinValue(descriptor), instance)
        if source is not None:
            session.guard_function(descriptor, source)
        return MethodValue(FunctionValue(descriptor, source), instance)
    if isinstance(descriptor, classmethod):
        # `cls.name` is a new bound method on every read: what it binds is guarded, and read
        # through it (its defaults).
        function_source = source and AttrSource(source, "__func__")
        _guard_class_attribute(session, function_source, descriptor.__func__)
        return MethodValue(session.wrap(descriptor.__func__, function_source), session.wrap(cls, None))
    if isinstance(descriptor, staticmethod):
        _guard_class_attribute(session, source, descriptor.__func__)
        return session.wrap(descriptor.__func__, source)
    if isinstance(descriptor, property):
        if descriptor.fget is None:
            raise Unsupported("reading a property without a getter")
        _guard_class_attribute(session, source, descriptor)
        return session.wrap(descriptor.fget, None).call(frame, [instance], {})
    if isinstance(descriptor, (types.MethodDescriptorType, types.WrapperDescriptorType, types.BuiltinMethodType)):
        _guard_class_attribute(session, source, descriptor)
        return MethodValue(BuiltinValue(descriptor), instance)
    if isinstance(descriptor, types.GetSetDescriptorType) and descriptor.__name__ == "__class__":
        return session.wrap(instance.python_type(), None)
    getter = python_dunder(type(descriptor), "__get__")
    if getter is not None and not readable and not isinstance(descriptor, type):
        # A descriptor class written in Python (a validated field, a unit conversion): traced.
        # Reading it through the class would run its __get__: its place in the class's MRO
        # dicts is guarded instead.
        if name is not None:
            guard_static_lookup(session, cls.__mro__, name, descriptor)
        owner = session.wrap(cls, None)
        return session.wrap(getter, None).call(frame, [descriptor_value(frame, descriptor), instance, owner], {})
    if not readable and not isinstance(descriptor, type) and hasattr(type(descriptor), "__get__"):
        # Any other descriptor computes the attribute (`__dict__`, a C struct member, a
        # cached_property): the descriptor object itself is not the answer.
        raise Unsupported(f"reading the attribute {getattr(descriptor, '__name__', '?')!r} of {instance.describe()}, which its class computes ({type(descriptor).__name__})")
    return None


def _guard_class_attribute(session, source, expected: Any) -> None:
    """`cls.name is expected`, where reading `cls.name` gives the class's object itself (a
    function, property, C method, or the function of a static or class method)."""
    if source is not None:
        session.add_guard(IdentityMatch(source, expected))


def class_data(frame, instance: Value, cls: type, name: str, value: Any) -> Value:
    """`instance.name` for plain data its class holds (no descriptor): read, and guarded,
    through the class (a class-level flag or table changed after capture)."""
    return frame.session.wrap(value, frame.session.class_attribute_source(instance.source, cls, name))


def guard_static_lookup(session, mro: tuple[type, ...], name: str, descriptor: Any) -> None:
    """`name` is still found first in the same class of `mro`, and is `descriptor` there: the
    class dicts read as `lookup_static` reads them, running no descriptor (where reading
    `cls.name` would run a descriptor's `__get__`)."""
    for klass in mro:
        source = session.class_attribute_source(None, klass, name)
        klass_dict = AttrSource(source.base, "__dict__") if source is not None else None  # None: an immutable type
        if name in klass.__dict__:
            if klass_dict is not None:
                session.add_guard(IdentityMatch(ItemSource(klass_dict, name), descriptor))
            return
        if klass_dict is not None:
            session.add_guard(KeyAbsent(klass_dict, name))


def descriptor_value(frame, descriptor: Any) -> Value:
    """A descriptor found on a class, as the `self` of its traced `__get__`/`__set__`: its own
    attributes (the private name `__set_name__` chose) are read, and guarded, on the object
    the entry holds."""
    from guards import HeldObjectSource

    source = HeldObjectSource(f"descriptor {type(descriptor).__qualname__}", id(descriptor), descriptor)
    return frame.session.wrap(descriptor, source)


def python_descriptor_set(frame, instance: Value, descriptor: Any, value: Value) -> bool:
    """`instance.name = value` through a data descriptor whose `__set__` is written in Python
    (traced); False where the descriptor has no such method."""
    setter = python_dunder(type(descriptor), "__set__")
    if setter is None:
        return False
    frame.session.wrap(setter, None).call(frame, [descriptor_value(frame, descriptor), instance, value], {})
    return True
