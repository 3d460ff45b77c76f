"""The `match` statement's opcodes (CPython 3.11 and 3.12, the same except where noted):
structural tests on the subject traced through the operations eager runs (isinstance, len,
one `mapping.get(key, <missing>)` per key, attribute reads), so their guards come with them.
PEP 634 gives the semantics; Python/ceval.c's match_class / match_keys the details."""

from __future__ import annotations

from ..guard_kinds import AbcRegistryUnchanged
from ..interpreter.registry import handles
from ..operators import identical
from ..values.base import NotConstant
from ..values.constant import ConstantValue
from ..values.containers import TupleValue
from ..values.exceptions import raise_user_error
from ..values.new_objects import NewObjectValue
from ..errors import Unsupported

# Type flags CPython sets on sequences and mappings (Include/object.h); ABCs pass them on to
# the classes they register, hence the guard on the ABC registry.
_TPFLAGS_SEQUENCE = 1 << 5
_TPFLAGS_MAPPING = 1 << 6

# Classes whose single positional sub-pattern matches the subject itself (`case int(n)`).
_MATCH_SELF = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)


def _has_flag(frame, subject, flag: int) -> ConstantValue:
    frame.session.add_guard(AbcRegistryUnchanged.now())
    return ConstantValue(bool(subject.python_type().__flags__ & flag))


@handles("MATCH_SEQUENCE")
def _match_sequence(frame, inst):
    frame.push(_has_flag(frame, frame.peek(), _TPFLAGS_SEQUENCE))


@handles("MATCH_MAPPING")
def _match_mapping(frame, inst):
    frame.push(_has_flag(frame, frame.peek(), _TPFLAGS_MAPPING))


@handles("GET_LEN")
def _get_len(frame, inst):
    frame.push(frame.peek().length(frame))


def _constant_names(value, what: str) -> tuple:
    try:
        return value.as_python_constant()
    except NotConstant:
        raise Unsupported(f"a match statement whose {what} are not constants") from None


@handles("MATCH_KEYS")
def _match_keys(frame, inst):
    # Leaves subject and keys; pushes the values found under the keys, or None if one is missing.
    # CPython's match_keys asks `subject.get(key, dummy)` for each key in turn and stops at the
    # first that answers its dummy (a fresh object): a Mapping's __contains__ and __getitem__
    # are never called, and `get` is looked up once.
    keys, subject = frame.peek(1), frame.peek(2)
    get = subject.get_attr(frame, "get")
    missing = NewObjectValue(object)
    values = []
    for key in keys.unpack(frame):
        value = get.call(frame, [key, missing], {})
        if identical(frame, value, missing):
            frame.push(ConstantValue(None))
            return
        values.append(value)
    frame.push(TupleValue(values))


@handles("MATCH_CLASS")
def _match_class(frame, inst):
    keywords = _constant_names(frame.pop(), "keyword patterns")
    cls = frame.pop()
    subject = frame.pop()
    matched = frame.call_builtin(isinstance, [subject, cls], {})
    if not matched.truth(frame):
        frame.push(ConstantValue(None))
        return
    names: list[str] = []
    if inst.arg:
        cls_obj = cls.as_python_constant()
        if cls.has_attr(frame, "__match_args__"):
            match_args = _constant_names(cls.get_attr(frame, "__match_args__"), "__match_args__")
            if not isinstance(match_args, tuple):
                raise_user_error(frame, TypeError, f"{cls_obj.__name__}.__match_args__ must be a tuple (got {type(match_args).__name__})")
            if inst.arg > len(match_args):
                raise_user_error(frame, TypeError, f"{cls_obj.__name__}() accepts {len(match_args)} positional sub-patterns ({inst.arg} given)")
            names = list(match_args[: inst.arg])
        elif issubclass(cls_obj, _MATCH_SELF) and inst.arg == 1:
            names = [None]  # the subject itself
        else:
            raise_user_error(frame, TypeError, f"{cls_obj.__name__}() accepts 0 positional sub-patterns ({inst.arg} given)")
    names.extend(keywords)
    attributes = []
    for index, name in enumerate(names):
        if name is not None and name in names[:index]:
            raise_user_error(frame, TypeError, f"{cls.as_python_constant().__name__}() got multiple sub-patterns for attribute {name!r}")
        if name is None:
            attributes.append(subject)
        elif subject.has_attr(frame, name):
            attributes.append(subject.get_attr(frame, name))
        else:
            frame.push(ConstantValue(None))
            return
    frame.push(TupleValue(attributes))
