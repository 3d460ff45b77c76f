"""Classes as values: attributes read statically, calls construct (capture.calls), and
`super()`, whose lookup starts after a class in an object's MRO."""

from __future__ import annotations

import enum

from guards import AttrSource, HasAttr, IdentityMatch

from ..errors import Unsupported, UserException
from .base import Value
from .callables import BuiltinValue, MethodValue
from .class_attributes import bind_class_attribute, guard_static_lookup
from .class_lookup import class_defines, lookup_static
from .constant import ConstantValue
from .exceptions import ExceptionValue


class ClassValue(Value):
    """A class: calling it constructs (capture.calls), attributes are read statically."""

    def __init__(self, cls: type, source=None):
        super().__init__(source)
        self.cls = cls

    def describe(self):
        return f"class {self.cls.__qualname__}"

    def python_type(self):
        return type(self.cls)

    def as_python_constant(self):
        return self.cls

    def identity(self):
        return self.cls

    def truth(self, frame):
        # A class is true unless its metaclass says otherwise (`if exc_type:` in __exit__).
        if any(class_defines(type(self.cls), name) for name in ("__bool__", "__len__")):
            return super().truth(frame)
        return True

    def get_attr(self, frame, name):
        session = frame.session
        descriptor, _ = lookup_static(self.cls, name)
        if isinstance(descriptor, (classmethod, staticmethod)):
            # `C.name` gives the function itself (static) or a new method bound to C: the
            # function is guarded, read through the class.
            # Read through that source too, so that its defaults are guarded.
            is_classmethod = isinstance(descriptor, classmethod)
            read = None
            if self.source is not None:
                read = AttrSource(self.source, name)
                read = AttrSource(read, "__func__") if is_classmethod else read
                session.add_guard(IdentityMatch(read, descriptor.__func__))
            function = session.wrap(descriptor.__func__, read)
            return MethodValue(function, self) if is_classmethod else function
        try:
            value = getattr(self.cls, name)
        except AttributeError as err:
            if self.source is not None:
                session.add_guard(HasAttr(self.source, name, False))
            raise UserException(ExceptionValue.from_real(err)) from None
        # Enum members cannot be rebound (EnumType.__setattr__ refuses): no guard needed.
        guarded = self.source is not None and not isinstance(self.cls, enum.EnumMeta)
        return session.wrap(value, AttrSource(self.source, name) if guarded else None)

    def has_attr(self, frame, name):
        present = hasattr(self.cls, name)
        if self.source is not None:
            frame.session.add_guard(HasAttr(self.source, name, present))
        return present

    def get_item(self, frame, key):
        # `list[Tensor]`, `dict[str, int]` (a types.GenericAlias, as in `typing.cast(list[T],
        # x)`), a user generic's `C[int]`, an enum's `Color['RED']`: with constant arguments
        # the subscript is evaluated now, as annotations are, and its result is a constant.
        # (A metaclass's own `__getitem__` may do anything: not evaluated, except Enum's.)
        if not key.is_python_constant() or not (hasattr(self.cls, "__class_getitem__") or isinstance(self.cls, enum.EnumMeta)):
            return super().get_item(frame, key)
        try:
            result = self.cls[key.as_python_constant()]
        except Exception as err:
            raise UserException(ExceptionValue.from_real(err)) from None
        return frame.session.wrap(result, None)

    def call(self, frame, args, kwargs):
        return frame.construct(self, args, kwargs)

    def _plain_enum(self) -> bool:
        # An enum's members are fixed when its class is made (EnumType refuses new ones), so
        # the class, already guarded by identity, says what iterating it gives.
        meta = type(self.cls)
        return isinstance(self.cls, enum.EnumMeta) and meta.__iter__ is enum.EnumMeta.__iter__ and meta.__len__ is enum.EnumMeta.__len__

    def unpack(self, frame):
        if self._plain_enum():
            return [frame.session.wrap(member, None) for member in self.cls]
        return super().unpack(frame)

    def length(self, frame):
        if self._plain_enum():
            return ConstantValue(len(self.cls))
        return super().length(frame)

    def reconstruct(self, writer):
        return writer.existing(self, self.as_python_constant())


class SuperValue(Value):
    """`super(cls, obj)`: attribute lookup starts after `cls` in `obj`'s MRO."""

    def __init__(self, cls: type, obj: Value):
        super().__init__(None)
        self.cls = cls
        self.obj = obj

    def describe(self):
        return f"super({self.cls.__name__})"

    def get_attr(self, frame, name):
        # Python's rule: super(C, obj) walks obj's MRO where obj is a subclass of C, else
        # type(obj)'s; a metaclass's method calling super() has the class as obj.
        of_class = isinstance(self.obj, ClassValue) and issubclass(self.obj.cls, self.cls)
        mro = self.obj.cls.__mro__ if of_class else self.obj.python_type().__mro__
        start = mro.index(self.cls) + 1
        for klass in mro[start:]:
            if name in klass.__dict__:
                descriptor = klass.__dict__[name]
                break
        else:
            raise Unsupported(f"super().{name} not found")
        guard_static_lookup(frame.session, mro[start:], name, descriptor)
        # Plain data the class holds (a table, a list) is read through that class, so that its
        # contents are guarded too (guard_static_lookup pins only which object it is).
        data_source = frame.session.class_attribute_source(None, klass, name)
        if of_class:
            if isinstance(descriptor, classmethod):
                return MethodValue(frame.session.wrap(descriptor.__func__, None), self.obj)
            if isinstance(descriptor, staticmethod):
                return frame.session.wrap(descriptor.__func__, None)
            return frame.session.wrap(descriptor, data_source if not hasattr(type(descriptor), "__get__") else None)
        bound = bind_class_attribute(frame, self.obj, self.obj.python_type(), descriptor, None)
        if bound is not None:
            return bound
        if callable(descriptor):
            return MethodValue(BuiltinValue(descriptor), self.obj)
        return frame.session.wrap(descriptor, data_source if not hasattr(type(descriptor), "__get__") else None)
