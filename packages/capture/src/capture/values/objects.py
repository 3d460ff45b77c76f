"""Python objects that are not tensors, constants, containers, classes (values/classes.py) or
Python modules (values/py_modules.py): user objects, weak references, the NULL of the call
protocol.

Attribute lookup follows Python's own order (data descriptors of the type, then the instance
dict, then other class attributes, then `__getattr__`), looking at types statically so that
properties and methods written in Python are inlined rather than run.
"""

from __future__ import annotations

import sys

import types
from typing import Any

from guards import AttrSource, GenericAttrSource, ItemSource, KeyAbsent

from ..errors import Unsupported, UserException
from ..sources import HeldSource
from .base import Value
from .callables import MethodValue
from .class_attributes import bind_class_attribute, call_item_dunder, python_descriptor_set
from .class_lookup import MISSING, class_defines, dunder_value, has_python_getattribute, lookup_static, python_dunder
from .constant import ConstantValue
from .deferred import logger_method
from .deleted import DELETED
from .exceptions import ExceptionValue, raise_user_error
from .factory import evaluate_constant_operation
from .iterators import python_iterator

def dunder_truth(frame, result: Value) -> bool:
    """The truth of what a Python `__bool__` returned, as CPython's truth test takes it: a
    bool, anything else is the program's TypeError."""
    cls = result.python_type()
    if cls is not bool:
        raise_user_error(frame, TypeError, f"__bool__ should return bool, returned {cls.__name__}")
    return result.truth(frame)


def dunder_length(frame, result: Value) -> Value:
    """What a Python `__len__` returned, as len() takes it: an int >= 0, else the program's
    TypeError or ValueError."""
    cls = result.python_type()
    if not issubclass(cls, int):
        if hasattr(cls, "__index__"):
            raise Unsupported(f"__len__ returning {result.describe()} (converted with __index__)")
        raise_user_error(frame, TypeError, f"'{cls.__name__}' object cannot be interpreted as an integer")
    if result.is_python_constant():
        length = result.as_python_constant()
        if length < 0:
            raise_user_error(frame, ValueError, "__len__() should return >= 0")
        if length > sys.maxsize:
            raise_user_error(frame, OverflowError, "cannot fit 'int' into an index-sized integer")
        return ConstantValue(int(length))
    if frame.compare("<", result, ConstantValue(0)).truth(frame):
        raise_user_error(frame, ValueError, "__len__() should return >= 0")
    if frame.compare(">", result, ConstantValue(sys.maxsize)).truth(frame):
        raise_user_error(frame, OverflowError, "cannot fit 'int' into an index-sized integer")
    return result


def type_of(frame, value: Value) -> Value:
    """`type(value)`, read through `type(<source>)` when the value has one: attributes of the
    class (a class-level flag or counter) are then guarded like any other input."""
    from guards.sources import TypeSource

    source = value.source if value.source is not None and not isinstance(value.source, HeldSource) else None
    return frame.session.wrap(value.python_type(), TypeSource(source) if source is not None else None)


def _is_module(obj: Any) -> bool:
    import torch

    return issubclass(type(obj), torch.nn.Module)  # not isinstance: it reads __class__ through a Python __getattribute__


class NullValue(Value):
    """The NULL that CALL's stack protocol places below a callable (PUSH_NULL and the low bit
    of LOAD_GLOBAL / LOAD_ATTR)."""

    def describe(self):
        return "NULL"


NULL = NullValue()


class ObjectValue(Value):
    """An object that existed before tracing. Attribute reads go to the real object and are
    guarded through their source; writes are recorded and replayed after the graph runs."""

    def __init__(self, obj: Any, source=None):
        super().__init__(source)
        self.obj = obj

    def describe(self):
        return f"{type(self.obj).__name__} object"

    def python_type(self):
        return type(self.obj)

    def identity(self):
        return self.obj

    def attribute_source(self, name: str):
        """Where a guard reads attribute `name` as the trace found it. Of an object whose class
        has a Python `__getattr__` or `__getattribute__` (which the trace runs itself), as
        object's own lookup finds it: reading it plainly would run the hook in the guard, once
        more per call than the program does, and answer through it what object's lookup lacks."""
        if self.source is None:
            return None
        if _python_attribute_hooks(type(self.obj)) and not _is_module(self.obj):
            return GenericAttrSource(self.source, name)
        return AttrSource(self.source, name)

    def get_attr(self, frame, name):
        session = frame.session
        pending = session.side_effects.pending_attr(self.obj, name)
        if pending is DELETED:
            if class_defines(type(self.obj), name) or class_defines(type(self.obj), "__getattr__"):
                raise Unsupported(f"reading attribute {name!r} of {self.describe()} after deleting it")
            raise_user_error(frame, AttributeError, _no_attribute(self.obj, name))
        if pending is not None:
            return pending
        cls = type(self.obj)
        if name == "__class__":
            return type_of(frame, self)
        if name == "__dict__":
            return self._instance_dict(frame)
        if _read_instance_dict(session, self.obj, mutated=True) is not None:
            raise Unsupported(f"reading attribute {name!r} of {self.describe()} after changing its __dict__")
        if has_python_getattribute(cls):
            if _is_module(self.obj):
                return self._concrete_attr(frame, name)
            return through_getattribute(frame, self, cls, name)
        deferred = logger_method(frame, self, name)
        if deferred is not None:
            return deferred
        descriptor, _ = lookup_static(cls, name)
        is_data_descriptor = descriptor is not MISSING and hasattr(type(descriptor), "__set__")
        if is_data_descriptor and isinstance(descriptor, property):
            return bind_class_attribute(frame, self, cls, descriptor, name)
        instance_dict = getattr(self.obj, "__dict__", None)
        if not is_data_descriptor and instance_dict is not None and name in instance_dict:
            return session.wrap(instance_dict[name], self.attribute_source(name))
        if not is_data_descriptor and instance_dict is not None and descriptor is not MISSING:
            # What the class holds (a method) answers only while the instance dict lacks the
            # name: `obj.method = f` later shadows it.
            self.guard_absent_from_instance_dict(session, name)
        if descriptor is not MISSING:
            # A descriptor whose __get__ is Python code is traced, as for an object made in
            # the trace: its answer may rest on writes this trace made (its __set__'s, not
            # replayed yet), and running it here would run it again in the guard that reads
            # the attribute on every call (a counting or caching __get__ ran more often than
            # in eager). Other descriptors (slots, C fields) are read natively.
            readable = python_dunder(type(descriptor), "__get__") is None
            bound = bind_class_attribute(frame, self, cls, descriptor, name, readable=readable)
            if bound is not None:
                return bound
        hook = python_dunder(cls, "__getattr__")
        if hook is not None and descriptor is MISSING and not _is_module(self.obj):
            # Found nowhere else: the class's __getattr__ answers, traced (what it reads is
            # guarded, what it writes replayed) rather than run here and again by a guard.
            # nn.Module's (parameters, buffers, submodules) is read from its registries.
            if instance_dict is not None:
                self.guard_absent_from_instance_dict(session, name)
            return dunder_value(frame, self, cls, "__getattr__", hook).call(frame, [self, ConstantValue(name)], {})
        return self._concrete_attr(frame, name)

    def guard_absent_from_instance_dict(self, session, name: str) -> None:
        if self.source is not None and not isinstance(self.source, HeldSource):
            session.add_guard(KeyAbsent(self.attribute_source("__dict__"), name))

    def _instance_dict(self, frame):
        """`obj.__dict__`, read (and guarded, key by key) as the dict it is: what
        `copy.deepcopy` copies. Attribute writes recorded earlier in the trace are not in the
        real dict yet, and a write after this read would leave this dict stale: both refused."""
        effects = frame.session.side_effects
        if effects.attribute_writes.get(id(self.obj)) is not None:
            raise Unsupported(f"reading __dict__ of {self.describe()} after setting its attributes in the compiled function")
        try:
            instance_dict = object.__getattribute__(self.obj, "__dict__")
        except AttributeError as err:
            raise UserException(ExceptionValue.from_real(err)) from None
        return frame.session.wrap(instance_dict, self.attribute_source("__dict__"))

    def _refuse_write_after_dict_read(self, frame, name):
        if _read_instance_dict(frame.session, self.obj) is not None:
            raise Unsupported(f"changing attribute {name!r} of {self.describe()} after reading its __dict__")

    def _concrete_attr(self, frame, name):
        try:
            # Runs the class's own __getattr__ too (nn.Module's finds parameters and children).
            result = getattr(self.obj, name)
        except AttributeError as err:
            if self.source is not None:
                # `getattr(o, "w", default)` answered the default: o must still lack it.
                frame.session.add_guard(self.absent_attribute_guard(name))
            raise UserException(ExceptionValue.from_real(err)) from None
        if isinstance(result, types.MethodType) and result.__self__ is self.obj:
            return MethodValue(frame.session.wrap(result.__func__, None), self)
        return frame.session.wrap(result, self.attribute_source(name))

    def has_attr(self, frame, name):
        pending = frame.session.side_effects.pending_attr(self.obj, name)
        if pending is DELETED and class_defines(type(self.obj), "__getattr__"):
            raise Unsupported(f"hasattr on attribute {name!r} of {self.describe()} after deleting it")
        if pending is not None:
            return pending is not DELETED or class_defines(type(self.obj), name)
        if _python_attribute_hooks(type(self.obj)) and not _is_module(self.obj):
            return has_attr_by_reading(frame, self, name)  # through the hook, traced
        present = hasattr(self.obj, name)
        if self.source is not None:
            from guards import HasAttr

            frame.session.add_guard(HasAttr(self.source, name, True) if present else self.absent_attribute_guard(name))
        return present

    def absent_attribute_guard(self, name):
        """The guard that the object still lacks attribute `name` (needs a source)."""
        from guards import HasAttr

        return HasAttr(self.source, name, False)

    def del_attr(self, frame, name):
        """`del obj.name`: a Python __delattr__ or property deleter is traced; object's own
        deletion from the instance __dict__ is recorded and replayed after the graph."""
        cls = type(self.obj)
        deleter = python_dunder(cls, "__delattr__")
        if deleter is not None:
            dunder_value(frame, self, cls, "__delattr__", deleter).call(frame, [self, ConstantValue(name)], {})
            return
        descriptor, _ = lookup_static(cls, name)
        if isinstance(descriptor, property) and descriptor.fdel is not None:
            frame.session.wrap(descriptor.fdel, None).call(frame, [self], {})
            return
        if cls.__delattr__ is not object.__delattr__:
            raise Unsupported(f"deleting attribute {name!r} of {self.describe()}")
        self.delete_from_instance_dict(frame, name)

    def delete_from_instance_dict(self, frame, name):
        """`object.__delattr__(obj, name)` (what a class's own `__delattr__`, nn.Module's among
        them, ends in): the instance `__dict__` entry goes, recorded and replayed after the graph."""
        descriptor, _ = lookup_static(type(self.obj), name)
        self._refuse_write_after_dict_read(frame, name)
        if hasattr(type(descriptor), "__delete__") or self.source is None:
            raise Unsupported(f"deleting attribute {name!r} of {self.describe()}")
        effects = frame.session.side_effects
        pending = effects.pending_attr(self.obj, name)
        if pending is None:
            present = name in getattr(self.obj, "__dict__", {})
            from guards import HasAttr

            # Whether the instance has it decides between deleting it and AttributeError.
            frame.session.add_guard(HasAttr(self.source, name, hasattr(self.obj, name)))
            if not present:
                raise_user_error(frame, AttributeError, _no_attribute(self.obj, name))
        elif pending is DELETED:
            raise_user_error(frame, AttributeError, _no_attribute(self.obj, name))
        effects.store_attr(self, name, DELETED)

    def set_attr(self, frame, name, value):
        cls = type(self.obj)
        setter = python_dunder(cls, "__setattr__")
        if setter is not None and not _is_module(self.obj):
            # A class's own __setattr__ (validation, attribute aliases) is traced, so that reads
            # later in the call see what it did; what it writes through object.__setattr__ is
            # replayed past it. nn.Module's (registries of parameters and children) runs for
            # real when the entry replays the write.
            dunder_value(frame, self, cls, "__setattr__", setter).call(frame, [self, ConstantValue(name), value], {})
            return
        descriptor, _ = lookup_static(cls, name)
        if isinstance(descriptor, property):
            if descriptor.fset is None:
                raise_user_error(frame, AttributeError, f"property {name!r} of {self.describe()} has no setter")
            frame.session.wrap(descriptor.fset, None).call(frame, [self, value], {})
            return
        if setter is None and python_descriptor_set(frame, self, descriptor, value):
            return
        if not hasattr(self.obj, "__dict__") and not isinstance(descriptor, types.MemberDescriptorType):
            # Neither an instance __dict__ nor a slot of that name (__slots__): object's setattr
            # raises here, not when the entry replays the write (past the program's except).
            raise_user_error(frame, AttributeError, f"{type(self.obj).__name__!r} object has no attribute {name!r}")
        self._refuse_write_after_dict_read(frame, name)
        frame.session.side_effects.store_attr(self, name, value)

    def call(self, frame, args, kwargs):
        method = python_dunder(type(self.obj), "__call__")
        if method is None:
            raise Unsupported(f"calling {self.describe()}")
        return dunder_value(frame, self, type(self.obj), "__call__", method).call(frame, [self, *args], kwargs)

    def truth(self, frame):
        for name in ("__bool__", "__len__"):
            method = python_dunder(type(self.obj), name)
            if method is not None:
                result = dunder_value(frame, self, type(self.obj), name, method).call(frame, [self], {})
                return dunder_truth(frame, result) if name == "__bool__" else dunder_length(frame, result).truth(frame)
        if class_defines(type(self.obj), "__bool__"):
            if self.source is not None:
                # No guard says what a C __bool__ will answer on the next call.
                raise Unsupported(f"the truth value of {self.describe()} (its __bool__ is not Python code)")
            return bool(self.obj)
        if class_defines(type(self.obj), "__len__"):
            return self.length(frame).truth(frame)
        # Neither exists: true. Their absence is guarded with every lookup_static.
        return True

    def get_item(self, frame, key):
        method = python_dunder(type(self.obj), "__getitem__")
        if method is not None:
            return dunder_value(frame, self, type(self.obj), "__getitem__", method).call(frame, [self, key], {})
        if key.is_python_constant() and isinstance(self.obj, (dict, list, tuple)):
            k = key.as_python_constant()
            source = ItemSource(self.source, k) if self.source is not None else None
            return frame.session.wrap(self.obj[k], source)
        raise Unsupported(f"indexing {self.describe()}")

    def set_item(self, frame, key, value):
        call_item_dunder(frame, self, type(self.obj), "__setitem__", [key, value])

    def del_item(self, frame, key):
        call_item_dunder(frame, self, type(self.obj), "__delitem__", [key])

    def length(self, frame):
        method = python_dunder(type(self.obj), "__len__")
        if method is not None:
            return dunder_length(frame, dunder_value(frame, self, type(self.obj), "__len__", method).call(frame, [self], {}))

        length = evaluate_constant_operation(frame, len, (self.obj,))
        if self.source is not None:
            from guards import LengthMatch

            frame.session.add_guard(LengthMatch(self.source, length.as_python_constant()))
        return length

    def unpack(self, frame):
        return iterate_object(frame, self, type(self.obj))

    def own_iterator(self, frame):
        # Items one `__next__` (or generator step) at a time: a loop that breaks, or an
        # unpacking (which asks one past its count), reads no further than in eager.
        return python_iterator(frame, self, type(self.obj))

    def reconstruct(self, writer):
        return writer.existing(self, self.obj)


def _no_attribute(obj, name: str) -> str:
    """CPython's AttributeError message for reading or deleting an instance attribute it lacks."""
    return f"'{type(obj).__name__}' object has no attribute {name!r}"


def has_attr_by_reading(frame, value: Value, name: str) -> bool:
    """`hasattr` as Python runs it: getattr, with AttributeError answered False (a `__getattr__`
    hook may answer names the class lacks, and a property may raise AttributeError itself)."""
    try:
        value.get_attr(frame, name)
    except UserException as exc:
        if issubclass(exc.value.python_type(), AttributeError):
            return False
        raise
    return True


def _python_attribute_hooks(cls: type) -> bool:
    return python_dunder(cls, "__getattr__") is not None or has_python_getattribute(cls)


def through_getattribute(frame, instance: Value, cls: type, name: str) -> Value:
    """`instance.name` where `cls` has its own Python `__getattribute__` (PreTrainedConfig's
    maps attribute aliases), traced, then its `__getattr__` if that raises AttributeError, as
    CPython's slot does."""
    getattribute = python_dunder(cls, "__getattribute__")
    try:
        return dunder_value(frame, instance, cls, "__getattribute__", getattribute).call(frame, [instance, ConstantValue(name)], {})
    except UserException as exc:
        hook = python_dunder(cls, "__getattr__")
        if hook is None or not issubclass(exc.value.python_type(), AttributeError):
            raise
    return dunder_value(frame, instance, cls, "__getattr__", hook).call(frame, [instance, ConstantValue(name)], {})


def _read_instance_dict(session, obj: Any, *, mutated: bool = False) -> Value | None:
    """The value of `obj.__dict__` when the trace has read it (and, with `mutated`, changed
    it), else None."""
    try:
        instance_dict = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return None
    known = session.wrapped.get(id(instance_dict))
    if known is None or known[0] is not instance_dict:
        return None
    if mutated and id(known[1]) not in session.side_effects.mutated_containers:
        return None
    return known[1]


def iterate_object(frame, value: Value, cls: type) -> list[Value]:
    """The items of `iter(value)` for an object whose class defines iteration in Python:
    `__iter__` (a generator, or returning an iterable), else the old protocol of
    `__getitem__` with 0, 1, ... until IndexError."""
    iterator = python_iterator(frame, value, cls)
    if iterator is None:
        raise Unsupported(f"iterating over {value.describe()}")
    return iterator.unpack(frame)


class WeakReferenceValue(ObjectValue):
    """A `weakref.ref` that existed before tracing: calling it gives its referent (or None),
    wrapped by `referent()` with the source `ref()`."""

    def __init__(self, obj, referent, source=None):
        super().__init__(obj, source)
        self._referent = referent

    def call(self, frame, args, kwargs):
        if args or kwargs:
            return super().call(frame, args, kwargs)
        return self._referent()
