"""Rules for the builtin container constructors when their arguments are symbolic: `list`,
`set`, `frozenset`, `dict` (and OrderedDict, dict subclasses, HF ModelOutputs), `tuple` (and
namedtuples), `tuple.__new__`."""

from __future__ import annotations

import collections

from ..errors import Unsupported
from ..values.base import Value
from ..values.constant import ConstantValue
from ..values.containers import DictEntries, DictValue, DictViewValue, ListValue, SequenceValue, TupleValue, field_names, key_of
from ..values.iterators import IteratorValue
from ..values.sets import SetValue, set_operand
from ..values.exceptions import raise_user_error
from ..values.functions import bind_arguments
from ..values.new_objects import ModelOutputValue, is_model_output
from .dict_subclasses import check_constructible
from .iteration_builtins import each_item
from .python_builtins import _constant
from .registry import construct_rule, rule


@construct_rule(list)
def _list(frame, cls, args, kwargs):
    return ListValue(args[0].unpack(frame) if args else [])


@construct_rule(set, frozenset)
def _set(frame, cls, args, kwargs):
    if not args:
        return SetValue({}, python_cls=cls)
    # The table the real constructor builds (a set or a dict argument sizes it first).
    real, members = set_operand(frame, args[0])
    return SetValue(members, python_cls=cls, table=set(real))


def is_mapping(frame, value: Value) -> bool:
    """Whether dict() treats `value` as a mapping: it has a `keys` attribute."""
    if isinstance(value, (SequenceValue, SetValue, IteratorValue, DictViewValue)):
        return False
    try:
        return value.has_attr(frame, "keys")
    except Unsupported:
        return False


def dict_entries(frame, source: Value) -> dict:
    """The (key object -> (key, value)) entries of a mapping or an iterable of pairs."""
    if isinstance(source, DictValue):
        return DictEntries(source.entries)

    if isinstance(source, ModelOutputValue):
        return {k: (ConstantValue(k), v) for k, v in source.present().items()}
    entries = DictEntries()
    if is_mapping(frame, source):
        # As dict() and `**` do for any object with keys(): its keys, then `obj[key]` each.
        for key in source.get_attr(frame, "keys").call(frame, [], {}).unpack(frame):
            entries[key_of(frame, key)] = (key, source.get_item(frame, key))
        return entries
    merge_pairs(frame, entries, source.unpack(frame))
    return entries


def each_pair(frame, pairs):
    """The (key, value) of each item of `pairs` as it comes, as CPython's dict_merge_from_seq2
    (and OrderedDict's update) unpack them."""
    for index, pair in enumerate(pairs):
        items = pair.unpack(frame)
        if len(items) != 2:  # CPython's dict_merge_from_seq2 wording
            raise_user_error(frame, ValueError, f"dictionary update sequence element #{index} has length {len(items)}; 2 is required")
        yield items[0], items[1]


def merge_pairs(frame, entries: dict, pairs) -> None:
    """Store each (key, value) pair of `pairs` into `entries` as it comes."""
    for key, value in each_pair(frame, pairs):
        entries[key_of(frame, key)] = (key, value)


@construct_rule(dict, collections.OrderedDict, subclasses=True)
def _dict(frame, cls, args, kwargs):
    if is_model_output(cls):
        return ModelOutputValue.construct(frame, cls, args, kwargs)
    if cls not in (dict, collections.OrderedDict):
        check_constructible(cls)
    entries = dict_entries(frame, args[0]) if args else {}
    for k, v in kwargs.items():
        entries[k] = (ConstantValue(k), v)
    return DictValue(entries, python_cls=cls)


@rule(tuple.__new__)
def _tuple_new(frame, args, kwargs):
    # `tuple.__new__(cls, iterable)`: how a namedtuple's _make (and so _replace) builds one.
    cls_value, *rest = args
    cls = _constant(cls_value, "tuple.__new__()'s class")
    if not (isinstance(cls, type) and issubclass(cls, tuple)) or len(rest) > 1 or kwargs:
        raise Unsupported(f"tuple.__new__ with {cls_value.describe()}")
    items = list(each_item(frame, rest[0])) if rest else []
    return TupleValue(items, python_cls=cls)


@construct_rule(tuple, subclasses=True)
def _tuple(frame, cls, args, kwargs):
    """Tuples, namedtuples and struct sequences (namedtuples bind their fields by name)."""
    if cls is tuple:
        if args and isinstance(args[0], TupleValue) and args[0].python_cls is tuple:
            return args[0]  # CPython hands back an exact tuple itself: `tuple(t) is t`
        return TupleValue(args[0].unpack(frame) if args else [])
    if not hasattr(cls, "_fields"):
        (items,) = args
        return TupleValue(items.unpack(frame), python_cls=cls)
    new = cls.__new__
    defaults = tuple(frame.session.wrap(d, None) for d in (new.__defaults__ or ()))
    bound = bind_arguments(frame, new.__code__, cls.__name__, [frame.session.wrap(cls, None), *args], kwargs, defaults, {})
    return TupleValue([bound[name] for name in field_names(cls)], python_cls=cls)
