"""Building and unpacking tuples, lists, dicts, sets, slices and f-strings."""

from __future__ import annotations

from guards import kinds
from guards.sources import ItemSource

from ..calls.container_builtins import dict_entries
from ..calls.python_builtins import _slice
from ..errors import Unsupported
from ..interpreter.registry import handles
from ..values.base import NotConstant
from ..values.constant import ConstantValue
from ..values.symbolic import SymValue, specialized_constant
from ..values.containers import DictEntries, DictValue, ListValue, TupleValue, key_of
from ..values.sets import SetValue, update_set
from ..values.exceptions import raise_user_error
from ..values.iterators import IteratorValue
from ..values.lazy import LazyInput, realized


@handles("BUILD_TUPLE")
def _build_tuple(frame, inst):
    frame.push(TupleValue(frame.popn(inst.arg)))


@handles("BUILD_LIST")
def _build_list(frame, inst):
    frame.push(ListValue(frame.popn(inst.arg)))


@handles("BUILD_SET")
def _build_set(frame, inst):
    result = SetValue({})
    for item in frame.popn(inst.arg):
        result.entries.setdefault(key_of(frame, item), item)
    frame.push(result)


@handles("BUILD_MAP")
def _build_map(frame, inst):
    items = frame.popn(2 * inst.arg)
    entries = DictEntries()
    for key, value in zip(items[::2], items[1::2]):
        entries[key_of(frame, key)] = (key, value)
    frame.push(DictValue(entries))


@handles("BUILD_CONST_KEY_MAP")
def _build_const_key_map(frame, inst):
    keys = frame.pop().as_python_constant()
    values = frame.popn(inst.arg)
    entries = DictEntries()
    for k, v in zip(keys, values):
        entries[k] = (ConstantValue(k), v)
    frame.push(DictValue(entries))


@handles("BUILD_SLICE")
def _build_slice(frame, inst):
    frame.push(_slice(frame, slice, frame.popn(inst.arg), {}))


@handles("LIST_APPEND")
def _list_append(frame, inst):
    item = frame.pop()
    frame.peek(inst.arg).items.append(item)


@handles("LIST_EXTEND")
def _list_extend(frame, inst):
    items = frame.pop()
    kind = not_iterable(items)
    if kind is not None:
        # `[*n]`, `g(a, *n)`: CPython's LIST_EXTEND message, not iter()'s.
        raise_user_error(frame, TypeError, f"Value after * must be an iterable, not {kind.__name__}")
    frame.peek(inst.arg).items.extend(items.unpack(frame))


def not_iterable(value) -> type | None:
    """The type of a number or other constant that `*value` cannot iterate, else None
    (objects are left to their own iteration)."""
    if not (isinstance(value, SymValue) or value.is_python_constant()):
        return None
    kind = value.python_type()
    return None if hasattr(kind, "__iter__") or hasattr(kind, "__getitem__") else kind


@handles("SET_ADD")
def _set_add(frame, inst):
    item = frame.pop()
    target = frame.peek(inst.arg)
    target.entries.setdefault(key_of(frame, item), item)


@handles("SET_UPDATE")
def _set_update(frame, inst):
    items = frame.pop()
    update_set(frame, frame.peek(inst.arg), items)


@handles("MAP_ADD")
def _map_add(frame, inst):
    value = frame.pop()
    key = frame.pop()
    frame.peek(inst.arg).entries[key_of(frame, key)] = (key, value)


@handles("DICT_UPDATE", "DICT_MERGE")
def _dict_update(frame, inst):
    # DICT_MERGE ({**a, **b} in calls) refuses duplicate keys; DICT_UPDATE overwrites.
    source = frame.pop()
    target = frame.peek(inst.arg)
    entries = dict_entries(frame, source)
    if inst.opname == "DICT_MERGE":
        for k in entries:
            if k in target.entries:
                raise_user_error(frame, TypeError, f"got multiple values for keyword argument {k!r}")
    target.entries.update(entries)


@handles("LIST_TO_TUPLE")
def _list_to_tuple(frame, inst):
    frame.push(TupleValue(frame.pop().unpack(frame)))


@handles("UNPACK_SEQUENCE")
def _unpack_sequence(frame, inst):
    raw = frame.pop_raw()
    items = _lazy_items(frame, raw) if isinstance(raw, LazyInput) else None
    if items is None:
        value = realized(frame.session, raw)
        _check_unpackable(frame, value)
        iterator = value if isinstance(value, IteratorValue) else value.own_iterator(frame)
        if iterator is not None:
            # As CPython's unpack_iterable: one item past the count at most is asked for (a
            # generator's later steps, a user iterator's `__next__`, do not run).
            items = []
            while len(items) <= inst.arg and (item := iterator.next()) is not None:
                items.append(item)
        else:
            items = value.unpack(frame)
    if len(items) > inst.arg:
        raise_user_error(frame, ValueError, f"too many values to unpack (expected {inst.arg})")
    if len(items) < inst.arg:
        raise_user_error(frame, ValueError, f"not enough values to unpack (expected {inst.arg}, got {len(items)})")
    frame.stack.extend(reversed(items))


def _check_unpackable(frame, value) -> None:
    """CPython's message for unpacking a constant that is not iterable (`a, b = 5`)."""
    if value.is_python_constant():
        kind = type(value.as_python_constant())
        if not hasattr(kind, "__iter__") and not hasattr(kind, "__getitem__"):
            raise_user_error(frame, TypeError, f"cannot unpack non-iterable {kind.__name__} object")


@handles("UNPACK_EX")
def _unpack_ex(frame, inst):
    before, after = inst.arg & 0xFF, inst.arg >> 8
    value = frame.pop()
    _check_unpackable(frame, value)
    items = value.unpack(frame)
    if len(items) < before + after:
        raise_user_error(frame, ValueError, f"not enough values to unpack (expected at least {before + after}, got {len(items)})")
    middle = items[before : len(items) - after]
    ordered = items[:before] + [ListValue(middle)] + items[len(items) - after :]
    frame.stack.extend(reversed(ordered))


_CONVERSIONS = {0: None, 1: str, 2: repr, 3: ascii}


@handles("FORMAT_VALUE")
def _format_value(frame, inst):
    # The argument's low two bits pick !s/!r/!a; bit 2 says a format spec is on the stack.
    spec = frame.pop().as_python_constant() if inst.arg & 4 else ""
    value = frame.pop()
    try:
        obj = specialized_constant(value)
    except NotConstant:
        raise Unsupported(
            f"formatting {value.describe()} into a string",
            hint="only Python constants (sizes, dtypes, numbers) can be formatted while tracing",
        ) from None
    conversion = _CONVERSIONS[inst.arg & 3]
    if conversion is not None:
        obj = conversion(obj)
    frame.push(ConstantValue(format(obj, spec)))


@handles("BUILD_STRING")
def _build_string(frame, inst):
    frame.push(ConstantValue("".join(p.as_python_constant() for p in frame.popn(inst.arg))))


def _lazy_items(frame, value: LazyInput) -> list | None:
    """The items of a tuple frame input, still unwrapped: `for i, block in ...` resumed after a
    graph break receives `(i, block)`, and `i` must not be guarded (a recompile per iteration)
    unless the trace looks at it. Only the type and length are guarded here. (Tuples only: a
    list may have been changed by the trace already.)"""
    obj = value.obj
    if type(obj) is not tuple:
        return None
    frame.session.add_guard(kinds.TypeMatch(value.source, type(obj)))
    frame.session.add_guard(kinds.LengthMatch(value.source, len(obj)))
    return [LazyInput(item, ItemSource(value.source, i)) for i, item in enumerate(obj)]
