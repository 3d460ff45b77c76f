"""Tuples, lists, dicts, dict views and slices of symbolic values (sets: sets.py; iterators:
iterators.py).

Lists, dicts and sets read from the frame's inputs remember their source; when the traced code
mutates one, the side-effect log replays its final contents onto the real object after the
graph runs. Containers created while tracing are plain Python data rebuilt by the compiled
entry when they escape.
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import Unsupported, UserException
from .base import Value, cycle_safe_constant
from .class_lookup import MISSING, dunder_value, lookup_static, python_dunder
from .constant import ConstantValue
from .exceptions import ExceptionValue, raise_user_error
from .factory import program_errors
from .key_hashes import guard_hash
from .object_ids import ObjectIdValue
from .symbolic import SlicedBy, SymValue, sequence_index
from .tensor import TensorValue, tensor_key


def key_of(frame, value: Value) -> Any:
    """The hashable Python object standing for `value` as a dict key or set member."""
    if isinstance(value, SymValue):
        return value.specialize()
    if isinstance(value, TensorValue):
        return tensor_key(frame, value)
    if isinstance(value, ObjectIdValue):
        if not isinstance(value.target, ConstantValue):
            # Keys by identity: another call may bring one object where this one had two.
            # (Constants are guarded by value; copy.deepcopy's memo keys every atomic value.)
            frame.session.keep_distinct(value.target)
        return value.key
    if value.is_python_constant():
        key = value.as_python_constant()
        try:
            hash(key)
        except TypeError as err:  # the program's own error: a list as a dict key
            raise UserException(ExceptionValue.from_real(err)) from None
        return key
    if isinstance(value, TupleValue):
        # A tuple of sizes (specialized, guarded) or of tensors (by identity), like its items.
        return tuple(key_of(frame, item) for item in value.items)
    if getattr(value, "python_cls", None) is frozenset:
        # A frozenset hashes by its members, as a tuple does (a SetValue's entries are keyed
        # by their members' keys already): two made apart are one key.
        return frozenset(value.entries)
    identity = getattr(value, "identity", None)
    if identity is not None:
        _refuse_value_keys(frame, value)
        if not issubclass(value.python_type(), type):
            # An object passed in, keyed by identity: another call may bring it twice. (Classes
            # read from the frame are guarded to be the very objects seen; functions only by
            # their code, so two closures of one code may be one object on a later call.)
            frame.session.keep_distinct(value)
        key = identity()
        if key is not value:  # the object itself, looked up under its hash now
            guard_hash(frame.session, key, value.source)
        return key
    raise Unsupported(f"{value.describe()} used as a dict key or set member")


def _refuse_value_keys(frame, value: Value) -> None:
    """Objects made in the traced code are keyed by identity here (the value stands for the
    object), which is right only for classes that keep object's `__hash__`: a class without
    one (`__eq__` alone, a plain dataclass) is the program's TypeError, and one hashing by
    value in Python (`Key(1)` twice is one key, a frozen dataclass) is refused rather than
    keyed by identity. Objects passed in are keyed by the real object, which hashes itself."""
    cls = value.python_type()
    if issubclass(cls, type):
        return
    if cls.__hash__ is None:
        raise_user_error(frame, TypeError, f"unhashable type: '{cls.__name__}'")
    if value.identity() is value and python_dunder(cls, "__hash__") is not None:
        raise Unsupported(f"{value.describe()} used as a dict key or set member: its class hashes by value in Python (__hash__)")


class SequenceValue(Value):
    python_cls: type

    def __init__(self, items: list[Value], source=None):
        super().__init__(source)
        self.items = list(items)

    def python_type(self):
        return self.python_cls

    @cycle_safe_constant
    def as_python_constant(self):
        return self.python_cls(item.as_python_constant() for item in self.items)

    def as_fake(self):
        return self.python_cls(item.as_fake() for item in self.items)

    def as_node_arg(self):
        return self.python_cls(item.as_node_arg() for item in self.items)

    def unpack(self, frame):
        return list(self.items)

    def truth(self, frame):
        return bool(self.items)

    def length(self, frame):
        return ConstantValue(len(self.items))

    def get_item(self, frame, key):
        index = self.index_of(frame, key)
        if isinstance(index, slice):
            if index.step == 0:
                raise_user_error(frame, ValueError, "slice step cannot be zero")
            if self.python_cls is tuple and index.indices(len(self.items)) == (0, len(self.items), 1):
                return self  # CPython hands back the tuple itself: `t[:] is t`
            return self.with_items(self.items[index])
        try:
            return self.items[index]
        except IndexError:
            raise_user_error(frame, IndexError, f"{self.base_name()} index out of range")

    def base_name(self) -> str:
        """A tuple's subclasses (torch.Size, namedtuples) and a list's speak as their base."""
        return next((kind for kind in (tuple, list) if issubclass(self.python_cls, kind)), self.python_cls).__name__

    def index_of(self, frame, key) -> int | slice:
        """`sequence_index`, with CPython's TypeError for a key that is no int or slice of ints
        (a float, a string), which the list operation would raise inside capture."""
        index = sequence_index(frame, key)
        if isinstance(index, slice):
            if any(part is not None and not isinstance(part, int) for part in (index.start, index.stop, index.step)):
                raise_user_error(frame, TypeError, "slice indices must be integers or None or have an __index__ method")
        elif not isinstance(index, int):
            raise_user_error(frame, TypeError, f"{self.base_name()} indices must be integers or slices, not {type(index).__name__}")
        return index

    def with_items(self, items: list[Value]) -> Value:
        return type(self)(items)

    def get_attr(self, frame, name):
        return class_attribute(frame, self, self.python_cls, name)

    def has_attr(self, frame, name):
        return hasattr(self.python_cls, name)

    def inner_values(self):
        return list(self.items)


def class_attribute(frame, instance: Value, cls: type, name: str) -> Value:
    """`instance.name` for containers, whose instances carry no attributes of their own:
    methods of the (possibly user-defined sub)class, bound to the container."""
    descriptor, _ = lookup_static(cls, name)
    if descriptor is MISSING:
        raise_user_error(frame, AttributeError, f"{cls.__name__!r} object has no attribute {name!r}")
    bound = frame.bind_class_attribute(instance, cls, descriptor, name)
    if bound is None:
        return frame.session.wrap(descriptor, frame.session.class_attribute_source(instance.source, cls, name))
    return bound


def field_names(cls: type) -> tuple[str, ...]:
    """Names of a namedtuple's or struct sequence's (torch.return_types) fields."""
    return getattr(cls, "_fields", None) or getattr(cls, "__match_args__", ())


class TupleValue(SequenceValue):
    def __init__(self, items, source=None, python_cls: type = tuple, real: tuple | None = None):
        super().__init__(items, source)
        self.python_cls = python_cls
        # The tuple itself, where it existed before the trace: some struct sequences
        # (sys.version_info, sys.float_info) cannot be made again from their items.
        self.real = real

    def describe(self):
        return "tuple" if self.python_cls is tuple else self.python_cls.__name__

    @cycle_safe_constant
    def as_python_constant(self):
        items = [item.as_python_constant() for item in self.items]
        if self.python_cls is tuple:
            return tuple(items)
        if hasattr(self.python_cls, "_fields"):  # namedtuple
            return self.python_cls(*items)
        if self.real is not None:
            return self.real
        return self.python_cls(items)  # torch.Size, struct sequences

    def as_fake(self):
        return tuple(item.as_fake() for item in self.items)

    def as_node_arg(self):
        return tuple(item.as_node_arg() for item in self.items)

    def with_items(self, items):
        # Slicing a torch.Size gives a torch.Size; a namedtuple or struct sequence
        # (torch.return_types: `torch.linalg.lstsq(a, b)[:2]`), a plain tuple.
        return TupleValue(items, python_cls=torch.Size if issubclass(self.python_cls, torch.Size) else tuple)

    def get_attr(self, frame, name):
        fields = field_names(self.python_cls)
        if name in fields:
            return self.items[fields.index(name)]
        return super().get_attr(frame, name)

    def reconstruct(self, writer):
        if self.source is not None:
            return writer.source(self.source)  # the very object the caller passed
        # Bound once, as lists are: a tuple held in two places (`return t, t`, two locals at a
        # graph break) is one object afterwards, as it was in the program.
        items = "".join(writer.value(v) + ", " for v in self.items)
        cls = self.python_cls
        if cls is tuple:
            return writer.bind(self, f"({items})")
        if hasattr(cls, "_fields"):
            return writer.bind(self, f"{writer.constant(cls)}({items})")
        return writer.bind(self, f"{writer.constant(cls)}(({items}))")


class ListValue(SequenceValue):
    python_cls = list

    def __init__(self, items, source=None):
        super().__init__(items, source)

    def describe(self):
        return "list"

    def mutated(self, frame) -> None:
        """Record that this list's contents changed (replayed onto the real list)."""
        frame.session.side_effects.mutated_container(self)

    def identity(self):
        return self  # the value made while tracing stands for the object (`id(self)` made a new int each call)

    def set_item(self, frame, key, value):
        index = self.index_of(frame, key)
        if isinstance(index, slice):
            items = value.unpack(frame)
            with program_errors(frame):  # an extended slice given another number of items: ValueError
                self.items[index] = items
        else:
            try:
                self.items[index] = value
            except IndexError:
                raise_user_error(frame, IndexError, "list assignment index out of range")
        self.mutated(frame)

    def del_item(self, frame, key):
        try:
            del self.items[self.index_of(frame, key)]
        except IndexError:
            raise_user_error(frame, IndexError, "list assignment index out of range")
        self.mutated(frame)

    def reconstruct(self, writer):
        if self.source is not None:
            # The very object the caller passed (mutations were replayed onto it).
            return writer.source(self.source)
        if writer.refers_to_itself(self):
            name = writer.bind(self, "[]")  # bound first: the items mention it by this name
            writer.lines.append(f"{name}.extend((" + "".join(writer.value(v) + ", " for v in self.items) + "))")
            return name
        return writer.bind(self, "[" + ", ".join(writer.value(v) for v in self.items) + "]")


class DictEntries(dict):
    """A dict's entries while tracing: key object -> (key value, value). As in CPython, storing
    under a key already present replaces the value and keeps the key first stored: `{1: 'a',
    1.0: 'b', True: 'c'}` is `{1: 'c'}`, and `d[1.0] = v` leaves d's key 1."""

    def __setitem__(self, k, pair):
        current = self.get(k)
        if current is not None:
            pair = (current[0], pair[1])
        super().__setitem__(k, pair)

    def update(self, other=(), /):
        for k, pair in dict(other).items():
            self[k] = pair


class DictValue(Value):
    """A dict (or OrderedDict) whose keys are known: key object -> (key value, value)."""

    def __init__(self, entries: dict[Any, tuple[Value, Value]], source=None, python_cls: type = dict):
        super().__init__(source)
        self.entries = DictEntries(entries)
        self.python_cls = python_cls
        self.namespace_of = None  # the module whose __dict__ this is (values.py_modules.PyModuleValue)

    @classmethod
    def from_str_keys(cls, items: dict[str, Value]) -> DictValue:
        return cls({k: (ConstantValue(k), v) for k, v in items.items()})

    def describe(self):
        return self.python_cls.__name__

    def python_type(self):
        return self.python_cls

    def identity(self):
        return self  # the value made while tracing stands for the object (`id(self)` made a new int each call)

    @cycle_safe_constant
    def as_python_constant(self):
        # From a mapping, not pairs: Counter counts the items of any other iterable.
        return self.python_cls({k: v.as_python_constant() for k, (_, v) in self.entries.items()})

    def as_fake(self):
        return {k: v.as_fake() for k, (_, v) in self.entries.items()}

    def as_node_arg(self):
        return {k: v.as_node_arg() for k, (_, v) in self.entries.items()}

    def str_items(self) -> dict[str, Value]:
        """The entries as keyword arguments (`f(**d)`)."""
        result = {}
        for key, (_, value) in self.entries.items():
            if not isinstance(key, str):
                raise Unsupported(f"keywords must be strings, got {key!r}")
            result[key] = value
        return result

    def mutated(self, frame) -> None:
        if self.namespace_of is not None:
            # Reads of the module's attributes and globals do not look here: changing the
            # namespace through its dict runs natively, where they see the change.
            raise Unsupported(f"changing the globals of module {self.namespace_of.__name__} through its __dict__",
                              hint="the graph breaks at the change, which runs natively")
        frame.session.side_effects.mutated_container(self)

    def get_item(self, frame, key):
        """`d[key]`: through a dict subclass's own `__getitem__` when it has one."""
        override = python_dunder(self.python_cls, "__getitem__")
        if override is not None:
            return dunder_value(frame, self, self.python_cls, "__getitem__", override).call(frame, [self, key], {})
        return self.lookup(frame, key)

    def lookup(self, frame, key):
        """dict.__getitem__ itself (what `super().__getitem__` does): the entry, else the
        class's `__missing__`, else KeyError."""
        k = key_of(frame, key)
        if k not in self.entries:
            # A subclass's own __missing__ (Counter's gives 0) answers, as dict.__getitem__ asks it.
            missing = python_dunder(self.python_cls, "__missing__")
            if missing is not None:
                return dunder_value(frame, self, self.python_cls, "__missing__", missing).call(frame, [self, key], {})
            raise_user_error(frame, KeyError, k)
        return self.entries[k][1]

    def set_item(self, frame, key, value):
        """`d[key] = value`: through a dict subclass's own `__setitem__` when it has one."""
        override = python_dunder(self.python_cls, "__setitem__")
        if override is not None:
            dunder_value(frame, self, self.python_cls, "__setitem__", override).call(frame, [self, key, value], {})
            return
        self.store_item(frame, key, value)

    def store_item(self, frame, key, value):
        """dict.__setitem__ itself (what `super().__setitem__` and `dict.__init__` do)."""
        k = key_of(frame, key)
        current = self.entries.get(k)
        if current is not None and current[1] is value:
            # Storing back what the key holds (SGD's `state["momentum_buffer"] = buf` each
            # step) changes nothing: no replay after the graph.
            return
        self.entries[k] = (key, value)
        self.mutated(frame)

    def del_item(self, frame, key):
        k = key_of(frame, key)
        if k not in self.entries:
            raise_user_error(frame, KeyError, k)
        del self.entries[k]
        self.mutated(frame)

    def unpack(self, frame):
        return [key for key, _ in self.entries.values()]

    def truth(self, frame):
        return bool(self.entries)

    def length(self, frame):
        return ConstantValue(len(self.entries))

    def get_attr(self, frame, name):
        return class_attribute(frame, self, self.python_cls, name)

    def has_attr(self, frame, name):
        return hasattr(self.python_cls, name)

    def reconstruct(self, writer):
        if self.source is not None:
            return writer.source(self.source)  # the very object the caller passed
        if self.python_cls is dict and writer.refers_to_itself(self):
            name = writer.bind(self, "{}")  # bound first: the values mention it by this name
            pairs = ", ".join(f"{writer.value(k)}: {writer.value(v)}" for k, v in self.entries.values())
            writer.lines.append(f"{name}.update({{{pairs}}})")
            return name
        pairs = ", ".join(f"{writer.value(k)}: {writer.value(v)}" for k, v in self.entries.values())
        if self.python_cls is dict:
            return writer.bind(self, "{" + pairs + "}")
        return writer.bind(self, f"{writer.constant(self.python_cls)}({{{pairs}}})")

    def inner_values(self):
        return [v for pair in self.entries.values() for v in pair]


class DictViewValue(Value):
    """`d.keys()`, `d.values()` or `d.items()`: a live view of a dict's entries (later changes
    to the dict show through it). Keys and items views are set-like (`==` with sets, `&`, `|`,
    `-`, `^`: capture.operators); a values view compares by identity only."""

    def __init__(self, mapping: DictValue, kind: str):
        super().__init__(None)
        self.mapping = mapping
        self.kind = kind

    def describe(self):
        return f"{self.mapping.describe()}.{self.kind}()"

    def python_type(self):
        return type(getattr(self.mapping.python_cls(), self.kind)())

    def identity(self):
        return self  # the value made while tracing stands for the object (`id(self)` made a new int each call)

    @property
    def set_like(self) -> bool:
        return self.kind != "values"

    def unpack(self, frame):
        entries = self.mapping.entries.values()
        if self.kind == "keys":
            return [key for key, _ in entries]
        if self.kind == "values":
            return [value for _, value in entries]
        return [TupleValue([key, value]) for key, value in entries]

    def truth(self, frame):
        return bool(self.mapping.entries)

    def length(self, frame):
        return ConstantValue(len(self.mapping.entries))

    def get_attr(self, frame, name):
        return class_attribute(frame, self, self.python_type(), name)

    def reconstruct(self, writer):
        return f"{writer.value(self.mapping)}.{self.kind}()"

    def inner_values(self):
        return [self.mapping]


class SliceValue(SlicedBy):
    """A slice whose bounds are not all constants (symbolic sizes)."""

    def __init__(self, start: Value, stop: Value, step: Value):
        super().__init__(None)
        self.parts = (start, stop, step)

    def python_type(self):
        return slice

    def as_python_constant(self):
        return slice(*(p.as_python_constant() for p in self.parts))

    def as_fake(self):
        return slice(*(p.as_fake() for p in self.parts))

    def as_node_arg(self):
        return slice(*(p.as_node_arg() for p in self.parts))

    def reconstruct(self, writer):
        return "slice(" + ", ".join(writer.value(p) for p in self.parts) + ")"

    def inner_values(self):
        return list(self.parts)
