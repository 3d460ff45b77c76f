"""Rules for `collections` beyond plain dicts and lists: constructing and mutating deques
and defaultdicts, constructing Counters (whose methods are Python code capture inlines, down
to the C helper `_count_elements`), OrderedDict's order methods, `popitem`, `fromkeys`, and
`heapq.nlargest`/`nsmallest` (which Counter.most_common calls)."""

from __future__ import annotations

import collections
import heapq
from collections import OrderedDict

from ..errors import Unsupported
from ..operators import binary
from ..values.base import Value
from ..values.collection_types import DefaultDictValue, DequeValue
from ..values.constant import ConstantValue
from ..values.containers import DictEntries, DictValue, ListValue, TupleValue, key_of
from ..values.iterators import IteratorValue
from ..values.exceptions import raise_user_error
from ..values.class_lookup import python_dunder
from ..values.symbolic import concrete
from . import container_methods
from .container_builtins import dict_entries
from .iteration_builtins import _sorted, each_item
from .registry import construct_rule, rule


def _expect(value: Value, kind: type, method: str):
    if not isinstance(value, kind):
        raise Unsupported(f"{method} on {value.describe()}")
    return value


# --- deque ------------------------------------------------------------------------------------


@construct_rule(collections.deque)
def _deque(frame, cls, args, kwargs):
    iterable = args[0] if args else kwargs.get("iterable")
    maxlen = args[1] if len(args) > 1 else kwargs.get("maxlen", ConstantValue(None))
    return DequeValue(iterable.unpack(frame) if iterable is not None else [], concrete(maxlen))


@rule(collections.deque.append)
def _append(frame, args, kwargs):
    d, item = args
    _expect(d, DequeValue, "deque.append").append(frame, item)
    return ConstantValue(None)


@rule(collections.deque.appendleft)
def _appendleft(frame, args, kwargs):
    d, item = args
    _expect(d, DequeValue, "deque.appendleft").append(frame, item, left=True)
    return ConstantValue(None)


def _items_as_added(frame, d, items):
    """What deque.extend iterates: a snapshot of the deque itself, any other iterable one
    item at a time, each added before the next is asked for (a generator reading the deque
    sees them), as CPython's deque_extend does."""
    if isinstance(items, IteratorValue) and items is not d:
        return each_item(frame, items)
    return items.unpack(frame)


@rule(collections.deque.extend)
def _extend(frame, args, kwargs):
    d, items = args
    _expect(d, DequeValue, "deque.extend")
    for item in _items_as_added(frame, d, items):
        d.append(frame, item)
    return ConstantValue(None)


@rule(collections.deque.extendleft)
def _extendleft(frame, args, kwargs):
    d, items = args
    _expect(d, DequeValue, "deque.extendleft")
    for item in _items_as_added(frame, d, items):
        d.append(frame, item, left=True)
    return ConstantValue(None)


def _pop(left: bool):
    def handler(frame, args, kwargs):
        (d,) = args
        if not _expect(d, DequeValue, "deque.pop").items:
            raise_user_error(frame, IndexError, "pop from an empty deque")
        item = d.items.pop(0 if left else -1)
        d.mutated(frame)
        return item

    return handler


rule(collections.deque.pop)(_pop(left=False))
rule(collections.deque.popleft)(_pop(left=True))


@rule(collections.deque.rotate)
def _rotate(frame, args, kwargs):
    d, *n = args
    items = _expect(d, DequeValue, "deque.rotate").items
    steps = concrete(n[0]) if n else 1
    if items:
        steps %= len(items)
        items[:] = items[-steps:] + items[:-steps] if steps else items
    d.mutated(frame)
    return ConstantValue(None)


@rule(collections.deque.clear)
def _clear(frame, args, kwargs):
    (d,) = args
    _expect(d, DequeValue, "deque.clear").items.clear()
    d.mutated(frame)
    return ConstantValue(None)


@rule(collections.deque.reverse)
def _reverse(frame, args, kwargs):
    (d,) = args
    _expect(d, DequeValue, "deque.reverse").items.reverse()
    d.mutated(frame)
    return ConstantValue(None)


@rule(collections.deque.copy)
def _copy(frame, args, kwargs):
    (d,) = args
    return DequeValue(list(_expect(d, DequeValue, "deque.copy").items), d.maxlen)


@rule(collections.deque.insert)
def _insert(frame, args, kwargs):
    d, index, item = args
    if _expect(d, DequeValue, "deque.insert").maxlen is not None and len(d.items) >= d.maxlen:
        raise_user_error(frame, IndexError, "deque already at its maximum size")
    d.items.insert(concrete(index), item)
    d.mutated(frame)
    return ConstantValue(None)


# Searching a deque is searching a list.
rule(collections.deque.index)(container_methods._index)
rule(collections.deque.count)(container_methods._count)
rule(collections.deque.remove)(container_methods._remove)


@rule(collections.deque.__iter__)
def _iter(frame, args, kwargs):
    return IteratorValue.over(frame, args[0])


# --- dicts ------------------------------------------------------------------------------------


@construct_rule(collections.defaultdict)
def _defaultdict(frame, cls, args, kwargs):
    factory, *rest = args or [ConstantValue(None)]
    entries = dict_entries(frame, rest[0]) if rest else {}
    for k, v in kwargs.items():
        entries[k] = (ConstantValue(k), v)
    return DefaultDictValue(entries, factory)


@construct_rule(collections.Counter, subclasses=True)
def _counter(frame, cls, args, kwargs):
    counter = DictValue({}, python_cls=cls)
    frame.session.wrap(python_dunder(cls, "__init__"), None).call(frame, [counter, *args], kwargs)
    return counter


@rule(dict.__init__)
def _dict_init(frame, args, kwargs):
    """`super().__init__(...)` of a dict subclass (Counter's): the initial entries."""
    d, *other = args
    entries = _expect(d, DictValue, "dict.__init__").entries
    if other:
        entries.update(dict_entries(frame, other[0]))
    for k, v in kwargs.items():
        entries[k] = (ConstantValue(k), v)
    return ConstantValue(None)


@rule(collections._count_elements)
def _count_elements(frame, args, kwargs):
    counts, iterable = args
    for item in iterable.unpack(frame):
        current = counts.entries.get(key_of(frame, item), (item, ConstantValue(0)))[1]
        counts.set_item(frame, item, binary(frame, "+", current, ConstantValue(1)))
    return ConstantValue(None)


@rule(OrderedDict.move_to_end)
def _move_to_end(frame, args, kwargs):
    d, key, *last = args
    last = concrete(last[0] if last else kwargs.get("last", ConstantValue(True)))
    entries = _expect(d, DictValue, "OrderedDict.move_to_end").entries
    k = key_of(frame, key)
    if k not in entries:
        raise_user_error(frame, KeyError, k)
    entry = entries.pop(k)
    d.entries = {k: entry, **entries} if not last else {**entries, k: entry}
    d.mutated(frame)
    return ConstantValue(None)


@rule(dict.popitem, OrderedDict.popitem)
def _popitem(frame, args, kwargs):
    d, *last = args
    last = concrete(last[0] if last else kwargs.get("last", ConstantValue(True)))
    entries = _expect(d, DictValue, "popitem").entries
    if not entries:
        raise_user_error(frame, KeyError, "popitem(): dictionary is empty")
    k = next(reversed(entries)) if last else next(iter(entries))
    key, value = entries.pop(k)
    d.mutated(frame)
    return TupleValue([key, value])


def _fromkeys(cls: type):
    def handler(frame, args, kwargs):
        iterable, *value = args
        value = value[0] if value else ConstantValue(None)
        entries = DictEntries()
        for k in iterable.unpack(frame):
            entries[key_of(frame, k)] = (k, value)
        if cls is collections.defaultdict:
            return DefaultDictValue(entries, ConstantValue(None))
        return DictValue(entries, python_cls=cls)

    return handler


for _cls in (dict, OrderedDict, collections.defaultdict):
    rule(_cls.fromkeys)(_fromkeys(_cls))


def _select(largest: bool):
    def handler(frame, args, kwargs):
        n, iterable = args
        ordered = _sorted(frame, [iterable], {**kwargs, "reverse": ConstantValue(largest)})
        # heapq's documented equivalent: sorted(iterable, key=key, reverse=...)[:n]
        return ListValue(ordered.items[: concrete(n)])

    return handler


rule(heapq.nlargest)(_select(largest=True))
rule(heapq.nsmallest)(_select(largest=False))


@rule(collections.defaultdict.__missing__)
def _defaultdict_missing(frame, args, kwargs):
    d, key = args
    return _expect(d, DefaultDictValue, "defaultdict.__missing__").missing(frame, key)


@rule(collections.defaultdict.copy, collections.defaultdict.__copy__)
def _defaultdict_copy(frame, args, kwargs):
    (d,) = args
    _expect(d, DefaultDictValue, "defaultdict.copy")
    return DefaultDictValue(d.entries, d.factory, python_cls=d.python_cls)
