"""Objects created while tracing: instances of user classes (their `__init__` inlined) and
HF-style `ModelOutput`s (dataclasses that are also ordered dicts of their non-None fields).

They live only as symbolic values; if one escapes (returned, stored on an input object) the
compiled entry rebuilds it after the graph runs.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any
from collections import OrderedDict
from collections.abc import MutableMapping

from ..errors import Unsupported
from ..type_keys import WeakTypeTable
from .base import Value
from .callables import NativeMethodValue
from .class_lookup import MISSING, dunder_value, lookup_static, python_dunder
from .constant import ConstantValue
from .containers import DictValue, ListValue, TupleValue
from .exceptions import raise_user_error
from .iterators import python_iterator
from .class_attributes import bind_class_attribute, call_item_dunder, class_data, python_descriptor_set
from .objects import dunder_length, dunder_truth, has_attr_by_reading, iterate_object, through_getattribute
from .tensor import TensorValue


class InstanceDictValue(DictValue):
    """`obj.__dict__` of an object the trace made: the very entries its attributes live in,
    so writes through either are seen through the other (`y.__dict__.update(state)` in
    `copy._reconstruct`). Spelled `<obj>.__dict__` when it escapes."""

    def __init__(self, owner: NewObjectValue):
        super().__init__({})
        self.owner = owner

    def describe(self):
        return f"__dict__ of {self.owner.describe()}"

    def reconstruct(self, writer):
        return f"{writer.value(self.owner)}.__dict__"

    def inner_values(self):
        return [self.owner]


class _Attributes(MutableMapping):
    """The attributes of a NewObjectValue by name: the values of its class's __slots__ held
    apart, the others stored in its InstanceDictValue (all that `vars(obj)` shows)."""

    def __init__(self, entries: dict[Any, tuple[Value, Value]], cls: type):
        self._entries = entries
        self._slots: dict[str, Value] = {}
        self._cls = cls

    def _is_slot(self, name) -> bool:
        return isinstance(lookup_static(self._cls, name)[0], types.MemberDescriptorType)

    def __getitem__(self, name):
        if name in self._slots:
            return self._slots[name]
        return self._entries[name][1]

    def __setitem__(self, name, value):
        if self._is_slot(name):
            self._slots[name] = value
        else:
            self._entries[name] = (ConstantValue(name), value)

    def __delitem__(self, name):
        if name in self._slots:
            del self._slots[name]
        else:
            del self._entries[name]

    def __iter__(self):
        return iter([*self._slots, *self._entries])

    def __len__(self):
        return len(self._slots) + len(self._entries)


class NewObjectValue(Value):
    """An instance of a user class constructed in the traced code."""

    def __init__(self, cls: type):
        super().__init__(None)
        self.cls = cls
        self.instance_dict = InstanceDictValue(self)
        self.attrs = _Attributes(self.instance_dict.entries, cls)

    def describe(self):
        return f"{self.cls.__name__} object (created in the traced code)"

    def python_type(self):
        return self.cls

    def identity(self):
        return self  # the value made while tracing stands for the object (`id(self)` made a new int each call)

    def get_attr(self, frame, name):
        if python_dunder(self.cls, "__getattribute__") is not None:
            return through_getattribute(frame, self, self.cls, name)
        return self.generic_get_attr(frame, name)

    def generic_get_attr(self, frame, name, *, getattr_hook: bool = True):
        """`object.__getattribute__(self, name)` (then `__getattr__`, unless `getattr_hook`
        is off, as when object.__getattribute__ is called by name)."""
        if name == "__class__":
            return frame.session.wrap(self.cls, None)
        if name == "__dict__" and self.cls.__dictoffset__ != 0:
            return self.instance_dict
        descriptor, _ = lookup_static(self.cls, name)
        is_data_descriptor = descriptor is not MISSING and hasattr(type(descriptor), "__set__")
        if not is_data_descriptor and name in self.attrs:
            return self.attrs[name]
        if isinstance(descriptor, types.MemberDescriptorType):  # a __slots__ entry: its value is stored here
            if name in self.attrs:
                return self.attrs[name]
            raise_user_error(frame, AttributeError, f"{self.cls.__name__!r} object has no attribute {name!r}")
        if descriptor is not MISSING:
            bound = bind_class_attribute(frame, self, self.cls, descriptor, name)
            if bound is not None:
                return bound
            return class_data(frame, self, self.cls, name, descriptor)
        hook = python_dunder(self.cls, "__getattr__")
        if hook is not None and getattr_hook:
            return dunder_value(frame, self, self.cls, "__getattr__", hook).call(frame, [self, ConstantValue(name)], {})

        raise_user_error(frame, AttributeError, f"{self.cls.__name__!r} object has no attribute {name!r}")

    def has_attr(self, frame, name):
        if python_dunder(self.cls, "__getattribute__") is None:
            if name in self.attrs:
                return True
            descriptor, _ = lookup_static(self.cls, name)
            if python_dunder(self.cls, "__getattr__") is None and _always_readable(descriptor):
                return descriptor is not MISSING
        return has_attr_by_reading(frame, self, name)

    def own_iterator(self, frame):
        return python_iterator(frame, self, self.cls)

    def set_attr(self, frame, name, value):
        setter = python_dunder(self.cls, "__setattr__")
        if setter is not None:
            dunder_value(frame, self, self.cls, "__setattr__", setter).call(frame, [self, ConstantValue(name), value], {})
            return
        descriptor, _ = lookup_static(self.cls, name)
        if isinstance(descriptor, property):
            if descriptor.fset is None:
                raise_user_error(frame, AttributeError, f"property {name!r} has no setter")
            frame.session.wrap(descriptor.fset, None).call(frame, [self, value], {})
            return
        if python_descriptor_set(frame, self, descriptor, value):
            return
        if self.cls.__dictoffset__ == 0 and not hasattr(type(descriptor), "__set__"):
            # An instance without a __dict__ (every class in its MRO has __slots__) stores only
            # into its slots; CPython words the error by whether the class has the name.

            has_name = descriptor is not None and descriptor is not MISSING
            reason = f"attribute {name!r} is read-only" if has_name else f"has no attribute {name!r}"
            raise_user_error(frame, AttributeError, f"'{self.cls.__name__}' object {reason}")
        self.store(name, value)

    def del_attr(self, frame, name):
        # As object.__delattr__ does (contextlib's context managers `del self.args` on entry).
        deleter = python_dunder(self.cls, "__delattr__")
        if deleter is not None:
            dunder_value(frame, self, self.cls, "__delattr__", deleter).call(frame, [self, ConstantValue(name)], {})
            return
        descriptor, _ = lookup_static(self.cls, name)
        if isinstance(descriptor, property) and descriptor.fdel is not None:
            frame.session.wrap(descriptor.fdel, None).call(frame, [self], {})
            return
        if hasattr(type(descriptor), "__delete__") and not isinstance(descriptor, types.MemberDescriptorType):
            raise Unsupported(f"deleting attribute {name!r} of {self.describe()}, a descriptor's")
        if name not in self.attrs:
            raise_user_error(frame, AttributeError, f"'{self.cls.__name__}' object has no attribute {name!r}" if descriptor is MISSING else name)
        del self.attrs[name]

    def store(self, name: str, value: Value) -> None:
        """Set an attribute without running `__setattr__` (object.__setattr__)."""
        if name == "__class__":
            # The object is traced as an instance of `cls`: its methods, isinstance, type().
            raise Unsupported(f"assigning __class__ of {self.describe()}")
        self.attrs[name] = value

    def call(self, frame, args, kwargs):
        method = python_dunder(self.cls, "__call__")
        if method is None:
            raise Unsupported(f"calling {self.describe()}")
        return dunder_value(frame, self, self.cls, "__call__", method).call(frame, [self, *args], kwargs)

    def truth(self, frame):
        for name in ("__bool__", "__len__"):
            method = python_dunder(self.cls, name)
            if method is not None:
                result = dunder_value(frame, self, self.cls, name, method).call(frame, [self], {})
                return dunder_truth(frame, result) if name == "__bool__" else dunder_length(frame, result).truth(frame)
        # Neither exists: true. Their absence is guarded with every lookup_static.
        return True

    def get_item(self, frame, key):
        method = python_dunder(self.cls, "__getitem__")
        if method is None:
            raise Unsupported(f"indexing {self.describe()}")
        return dunder_value(frame, self, self.cls, "__getitem__", method).call(frame, [self, key], {})

    def set_item(self, frame, key, value):
        call_item_dunder(frame, self, self.cls, "__setitem__", [key, value])

    def del_item(self, frame, key):
        call_item_dunder(frame, self, self.cls, "__delitem__", [key])

    def length(self, frame):
        method = python_dunder(self.cls, "__len__")
        if method is None:
            raise Unsupported(f"len() of {self.describe()}")
        return dunder_length(frame, dunder_value(frame, self, self.cls, "__len__", method).call(frame, [self], {}))

    def unpack(self, frame):
        return iterate_object(frame, self, self.cls)

    def reconstruct(self, writer):
        builder = writer.name_for(_new_object, "new_object")
        if writer.refers_to_itself(self):
            # Made empty and bound first, so that an attribute leading back to the object
            # (`o.me = o`, `o.fn = no_grad()(o.fn)`) names it; its attributes set after.
            name = writer.bind(self, f"{builder}({writer.constant(self.cls)}, {{}})")
            attrs = ", ".join(f"{k!r}: {writer.value(v)}" for k, v in self.attrs.items())
            writer.lines.append(f"{writer.name_for(_set_attributes, 'set_attributes')}({name}, {{{attrs}}})")
            return name
        attrs = ", ".join(f"{k!r}: {writer.value(v)}" for k, v in self.attrs.items())
        return writer.bind(self, f"{builder}({writer.constant(self.cls)}, {{{attrs}}})")

    def inner_values(self):
        return list(self.attrs.values())


def is_model_output(cls: type) -> bool:
    """HF `ModelOutput` and look-alikes: dataclasses that are ordered dicts of their fields."""
    return isinstance(cls, type) and issubclass(cls, OrderedDict) and dataclasses.is_dataclass(cls)


def _always_readable(descriptor) -> bool:
    """A class attribute that every instance reads without running code that may fail: not a
    slot (unset until written), `__dict__` (absent with __slots__), a property or any other
    descriptor computing the answer."""
    if descriptor is MISSING or isinstance(descriptor, (types.FunctionType, classmethod, staticmethod)):
        return True
    return not hasattr(type(descriptor), "__get__")


def _new_object(cls: type, attrs: dict) -> Any:
    """An instance of `cls` created while tracing, rebuilt without running `__init__` again
    (its slots, if it has any, written through their member descriptors)."""
    return _set_attributes(cls.__new__(cls), attrs)


def _set_attributes(obj: Any, attrs: dict) -> Any:
    """Write `attrs` onto `obj` as the trace recorded them, without running __setattr__."""
    cls = type(obj)
    mro, slotless = _SLOTLESS.get(cls, _UNSEEN)
    if mro is not cls.__mro__:
        slotless = _slotless(cls)
    if slotless:
        if attrs:  # a bare object() has no __dict__ to write
            obj.__dict__.update(attrs)
        return obj
    for name, value in attrs.items():
        slot, _ = lookup_static(cls, name)
        if isinstance(slot, types.MemberDescriptorType):
            slot.__set__(obj, value)
        else:
            obj.__dict__[name] = value
    return obj


# Class -> (its MRO when looked at, whether no class on it holds a member descriptor): then
# every attribute goes to the instance dict, without a lookup per name (rebuilding a KV
# cache's 13 objects on each call of a decoder took ~20 us that way). Member descriptors are
# made only by a class body's __slots__, so the answer holds while the MRO does: assigning
# __bases__ replaces the __mro__ tuple, which the identity check sees.
_SLOTLESS = WeakTypeTable()
_UNSEEN = (None, False)


def _slotless(cls: type) -> bool:
    mro = cls.__mro__
    slotless = not any(isinstance(v, types.MemberDescriptorType) for klass in mro for v in vars(klass).values())
    _SLOTLESS[cls] = (mro, slotless)
    return slotless


class ModelOutputValue(Value):
    """A ModelOutput: a dataclass that is also an ordered dict, indexable by key or by position
    among the keys. `fields` holds its attributes (the dataclass fields, and keys set by
    `out[key] = v`, which sets the attribute too); `keys` the dict's keys in insertion order,
    which is not field order once a key is set after construction."""

    def __init__(self, cls: type, fields: dict[str, Value], keys: list[str] | None = None):
        super().__init__(None)
        self.cls = cls
        self.fields = fields
        self.keys = [k for k, v in fields.items() if not _is_none(v)] if keys is None else keys

    @classmethod
    def construct(cls, frame, output_cls: type, args: list[Value], kwargs: dict[str, Value]) -> ModelOutputValue:
        names = [f.name for f in dataclasses.fields(output_cls)]
        values: dict[str, Value] = {name: ConstantValue(None) for name in names}
        if len(args) > len(names):
            raise Unsupported(f"{output_cls.__name__} called with too many positional arguments")
        for name, value in zip(names, args):
            values[name] = value
        for name, value in kwargs.items():
            if name not in values:
                raise_user_error(frame, TypeError, f"{output_cls.__name__}.__init__() got an unexpected keyword argument {name!r}")
            values[name] = value
        first, *rest = names
        others_none = all(_is_none(values[n]) for n in rest)
        if others_none and not _is_none(values[first]) and not _is_tensor(values[first]):
            raise Unsupported(
                f"{output_cls.__name__} built from a single non-tensor first field",
                hint="pass the fields as keyword arguments",
            )
        return cls(output_cls, values)

    def describe(self):
        return f"{self.cls.__name__}"

    def python_type(self):
        return self.cls

    def identity(self):
        return self  # the value made while tracing stands for the object (`id(self)` made a new int each call)

    def present(self) -> dict[str, Value]:
        """The dict view: its keys in insertion order, with their values."""
        return {k: self.fields[k] for k in self.keys}

    def _key(self, name: str) -> str:
        # ModelOutput._replace_old_cache_name: the old names of the `cache` field.
        return "cache" if name in ("past_key_values", "cache_params") and "cache" in self.fields else name

    def get_attr(self, frame, name):
        key = self._key(name)
        if key in self.fields:
            return self.fields[key]
        native = _MODEL_OUTPUT_METHODS.get(name)
        if native is not None:
            return NativeMethodValue(native, self, f"{self.cls.__name__}.{name}")
        descriptor, _ = lookup_static(self.cls, name)
        if descriptor is not MISSING:
            bound = bind_class_attribute(frame, self, self.cls, descriptor, name)
            if bound is not None:
                return bound
            return class_data(frame, self, self.cls, name, descriptor)

        raise_user_error(frame, AttributeError, f"{self.cls.__name__!r} object has no attribute {name!r}")

    def has_attr(self, frame, name):
        return self._key(name) in self.fields or hasattr(self.cls, name)

    def set_attr(self, frame, name, value):
        self._refuse_input_mutation()
        name = self._key(name)
        to_dict = _setattr_writes_dict(self.cls, self.keys, name, _is_none(value))
        if not to_dict and name in self.keys:
            # The dict keeps its old value under the attribute's new one (a None assigned).
            raise Unsupported(f"setting {self.cls.__name__}.{name} to {value.describe()}: its attribute and its "
                              "dict entry would part", hint="set it by key: out[name] = value")
        if to_dict and name not in self.keys:
            self.keys.append(name)
        self.fields[name] = value

    def _refuse_input_mutation(self) -> None:
        if self.source is not None:
            raise Unsupported(
                f"changing {self.describe()} {self.source}, which the compiled function received",
                hint="build a new output object instead of changing the one passed in",
            )

    def get_item(self, frame, key):
        k = key.as_python_constant()
        if isinstance(k, str):
            present = self.present()
            k = self._key(k)
            if k not in present:
                raise_user_error(frame, KeyError, k)
            return present[k]

        return TupleValue(list(self.present().values())).get_item(frame, key)

    def set_item(self, frame, key, value):
        self._refuse_input_mutation()
        name = self._key(key.as_python_constant())
        if _is_none(value):
            raise Unsupported(f"storing None under {self.cls.__name__}[{name!r}]", hint="leave the key out")
        # OrderedDict.__setitem__ keeps a key's place and appends a new one; the attribute follows.
        if name not in self.keys:
            self.keys.append(name)
        self.fields[name] = value

    def unpack(self, frame):
        return [ConstantValue(k) for k in self.present()]

    def length(self, frame):
        return ConstantValue(len(self.present()))

    def truth(self, frame):
        return bool(self.present())

    def reconstruct(self, writer):
        if self.source is not None:
            return writer.source(self.source)
        attrs = ", ".join(f"{k!r}: {writer.value(v)}" for k, v in self.fields.items())
        builder = writer.name_for(_new_model_output, "new_model_output")
        return writer.bind(self, f"{builder}({writer.constant(self.cls)}, {{{attrs}}}, {tuple(self.keys)!r})")

    def inner_values(self):
        return list(self.fields.values())


def _setattr_writes_dict(cls: type, keys: list[str], name: str, none: bool) -> bool:
    """Whether `out.name = value` also stores the value in the dict of a `cls` with these keys.
    ModelOutput.__setattr__ does for a non-None value of a field (transformers 5) or of a key
    already present (4.x); a look-alike may follow either or neither. Asked of the class's own
    __setattr__ on a blank instance holding the same keys."""
    probe = cls.__new__(cls)
    for key in keys:
        OrderedDict.__setitem__(probe, key, None)
    marker = None if none else object()
    setattr(probe, name, marker)
    return name in OrderedDict.keys(probe) and OrderedDict.__getitem__(probe, name) is marker and (
        not none or name not in keys)


def _new_model_output(cls: type, attrs: dict, keys: tuple) -> Any:
    """A ModelOutput made while tracing, rebuilt as it was left: its dict entries in their
    order, then its attributes (calling the class would put the keys in field order)."""
    out = cls.__new__(cls)
    for key in keys:
        OrderedDict.__setitem__(out, key, attrs[key])
    for name, value in attrs.items():
        object.__setattr__(out, name, value)
    return out


def _is_none(value: Value) -> bool:
    return isinstance(value, ConstantValue) and value.value is None


def _is_tensor(value: Value) -> bool:
    return isinstance(value, TensorValue)


def _to_tuple(frame, out):
    return TupleValue(list(out.present().values()))


def _keys(frame, out):
    return ListValue([ConstantValue(k) for k in out.present()])


def _values(frame, out):
    return ListValue(list(out.present().values()))


def _items(frame, out):
    return ListValue([TupleValue([ConstantValue(k), v]) for k, v in out.present().items()])


def _get(frame, out, key, default=None):
    present = out.present()
    k = out._key(key.as_python_constant())
    return present.get(k, default if default is not None else ConstantValue(None))


def _contains(frame, out, key):
    return ConstantValue(out._key(key.as_python_constant()) in out.present())


_MODEL_OUTPUT_METHODS = {
    "to_tuple": _to_tuple,
    "keys": _keys,
    "values": _values,
    "items": _items,
    "get": _get,
    "__contains__": _contains,
}
