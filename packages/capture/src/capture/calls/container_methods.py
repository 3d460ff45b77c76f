"""Rules for the methods of lists, tuples, dicts and sets on symbolic containers. Each rule
receives the container as its first argument, as the unbound method would."""

from __future__ import annotations

import operator
from collections import OrderedDict

import torch

from ..errors import Unsupported
from ..operators import binary, compare, contains, identical
from ..values.base import NotConstant, Value
from ..values.class_lookup import python_dunder
from ..values.constant import ConstantValue
from ..values.containers import DictValue, DictViewValue, ListValue, SequenceValue, key_of
from ..values.iterators import IteratorValue
from ..values.sets import SetValue, set_from_operation, set_operand, update_set
from ..values.exceptions import raise_user_error
from .container_builtins import dict_entries, each_pair, is_mapping, merge_pairs
from .iteration_builtins import _sorted, each_item
from ..values.symbolic import SymValue, concrete
from .dict_subclasses import check_constructible
from .registry import rule


def _expect(value: Value, kind: type, method: str):
    if not isinstance(value, kind):
        raise Unsupported(f"{method} on {value.describe()}")
    return value


def _equal(frame, a: Value, b: Value) -> bool:
    """`a == b` as list.index, count and remove ask it (PyObject_RichCompareBool): the same
    object is equal to itself first, whatever its `==` says (a float nan, a tensor)."""
    return bool(identical(frame, a, b)) or compare(frame, "==", a, b).truth(frame)


# --- list -------------------------------------------------------------------------------------


@rule(list.append)
def _append(frame, args, kwargs):
    lst, item = args
    _expect(lst, ListValue, "list.append").items.append(item)
    lst.mutated(frame)
    return ConstantValue(None)


@rule(list.extend)
def _extend(frame, args, kwargs):
    lst, items = args
    _expect(lst, ListValue, "list.extend")
    if isinstance(items, IteratorValue):
        # CPython appends each item as the iterator yields it: a generator reading the list
        # (`y.extend(y[-1] + z for z in ...)`) sees the items appended before.
        for item in each_item(frame, items):
            lst.items.append(item)
    else:
        lst.items.extend(items.unpack(frame))
    lst.mutated(frame)
    return ConstantValue(None)


@rule(list.insert)
def _insert(frame, args, kwargs):
    lst, index, item = args
    _expect(lst, ListValue, "list.insert").items.insert(index.as_python_constant(), item)
    lst.mutated(frame)
    return ConstantValue(None)


@rule(list.pop)
def _list_pop(frame, args, kwargs):
    lst, *index = args
    _expect(lst, ListValue, "list.pop")
    if not lst.items:
        raise_user_error(frame, IndexError, "pop from empty list")
    try:
        position = operator.index(concrete(index[0])) if index else -1
    except TypeError as err:  # the program's own error: lst.pop('a')
        raise_user_error(frame, TypeError, str(err))
    if not -len(lst.items) <= position < len(lst.items):
        raise_user_error(frame, IndexError, "pop index out of range")
    item = lst.items.pop(position)
    lst.mutated(frame)
    return item


@rule(list.remove)
def _remove(frame, args, kwargs):
    lst, item = args
    for i, existing in enumerate(_expect(lst, ListValue, "list.remove").items):
        if _equal(frame, existing, item):
            del lst.items[i]
            lst.mutated(frame)
            return ConstantValue(None)
    raise_user_error(frame, ValueError, "list.remove(x): x not in list")


@rule(list.clear)
def _list_clear(frame, args, kwargs):
    (lst,) = args
    _expect(lst, ListValue, "list.clear").items.clear()
    lst.mutated(frame)
    return ConstantValue(None)


@rule(list.reverse)
def _reverse(frame, args, kwargs):
    (lst,) = args
    _expect(lst, ListValue, "list.reverse").items.reverse()
    lst.mutated(frame)
    return ConstantValue(None)


@rule(list.copy)
def _list_copy(frame, args, kwargs):
    (lst,) = args
    return ListValue(list(_expect(lst, ListValue, "list.copy").items))


@rule(list.sort)
def _sort(frame, args, kwargs):
    (lst,) = args
    _expect(lst, ListValue, "list.sort")
    # CPython empties the list while sorting; a key function that changes it makes sort fail.
    # The item list stays the same object: live iterators over the list share it.
    items = list(lst.items)
    lst.items.clear()
    try:
        ordered = _sorted(frame, [ListValue(items)], kwargs).items
    except BaseException:
        lst.items[:] = items
        raise
    if lst.items:
        raise_user_error(frame, ValueError, "list modified during sort")
    lst.items[:] = ordered
    lst.mutated(frame)
    return ConstantValue(None)


@rule(torch.Size.numel)
def _size_numel(frame, args, kwargs):
    """`x.shape.numel()`: the product of the sizes (symbolic ones multiply in the graph)."""
    (size,) = args
    product = ConstantValue(1)
    for item in _expect(size, SequenceValue, "torch.Size.numel").items:
        product = binary(frame, "*", product, item)
    return product


@rule(list.index, tuple.index, accepts="(self, value, start=_, stop=_, /)")
def _index(frame, args, kwargs):
    seq, item, *bounds = args
    items = _expect(seq, SequenceValue, "index()").items
    # start/stop clamp like a slice's bounds (negative ones count from the end).
    start, stop = (concrete(b) for b in [*bounds, ConstantValue(None), ConstantValue(None)][:2])
    start, stop, _ = slice(start, stop).indices(len(items))
    for i in range(start, stop):
        if _equal(frame, items[i], item):
            return ConstantValue(i)
    # CPython's words: a tuple's are fixed, a list's show the value's repr.
    if issubclass(seq.python_type(), tuple):
        raise_user_error(frame, ValueError, "tuple.index(x): x not in tuple")
    if not item.is_python_constant() and not isinstance(item, SymValue):
        raise Unsupported(f"list.index() of {item.describe()}, absent: its error shows the value's repr")
    raise_user_error(frame, ValueError, f"{concrete(item)!r} is not in list")


@rule(list.count, tuple.count)
def _count(frame, args, kwargs):
    seq, item = args
    return ConstantValue(sum(1 for x in _expect(seq, SequenceValue, "count()").items if _equal(frame, x, item)))


@rule(list.__getitem__, tuple.__getitem__)
def _seq_getitem(frame, args, kwargs):
    seq, key = args
    return seq.get_item(frame, key)


@rule(list.__setitem__)
def _list_setitem(frame, args, kwargs):
    seq, key, value = args
    seq.set_item(frame, key, value)
    return ConstantValue(None)


@rule(list.__len__, tuple.__len__, dict.__len__, set.__len__)
def _container_len(frame, args, kwargs):
    return args[0].length(frame)


@rule(list.__contains__, tuple.__contains__, dict.__contains__, set.__contains__, frozenset.__contains__)
def _container_contains(frame, args, kwargs):
    container, item = args
    return contains(frame, item, container)


@rule(list.__iter__, tuple.__iter__, dict.__iter__, set.__iter__)
def _container_iter(frame, args, kwargs):
    return IteratorValue.over(frame, args[0])


# --- dict --------------------------------------------------------------------------------------


def _as_dict(value: Value, method: str) -> DictValue:
    return _expect(value, DictValue, method)


@rule(dict.get, OrderedDict.get)
def _dict_get(frame, args, kwargs):
    d, key, *default = args
    entry = _as_dict(d, "dict.get").entries.get(key_of(frame, key))
    if entry is not None:
        return entry[1]
    return default[0] if default else ConstantValue(None)


@rule(dict.__getitem__)
def _dict_getitem(frame, args, kwargs):
    d, key = args
    return (d.lookup if isinstance(d, DictValue) else d.get_item)(frame, key)


@rule(dict.__setitem__, OrderedDict.__setitem__)
def _dict_setitem(frame, args, kwargs):
    d, key, value = args
    (d.store_item if isinstance(d, DictValue) else d.set_item)(frame, key, value)
    return ConstantValue(None)


def _view(kind: str):
    def handler(frame, args, kwargs):
        (d,) = args
        return DictViewValue(_as_dict(d, f"dict.{kind}"), kind)

    return handler


for _kind in ("keys", "values", "items"):
    rule(getattr(dict, _kind), getattr(OrderedDict, _kind))(_view(_kind))


@rule(dict.pop, OrderedDict.pop)
def _dict_pop(frame, args, kwargs):
    d, key, *default = args
    entries = _as_dict(d, "dict.pop").entries
    k = key_of(frame, key)
    if k in entries:
        value = entries.pop(k)[1]
        d.mutated(frame)
        return value
    if default:
        return default[0]
    raise_user_error(frame, KeyError, k)


def _through_own_item_methods(d: Value) -> bool:
    """An OrderedDict subclass whose __setitem__ or __getitem__ is Python: OrderedDict's update
    and setdefault of a subclass go through `self[k]` and `self[k] = v` (dict's own, and
    OrderedDict's of an exact OrderedDict, never call an override)."""
    cls = d.python_cls
    return issubclass(cls, OrderedDict) and cls is not OrderedDict and any(
        python_dunder(cls, name) is not None for name in ("__setitem__", "__getitem__"))


@rule(dict.setdefault, OrderedDict.setdefault)
def _setdefault(frame, args, kwargs):
    d, key, *default = args
    entries = _as_dict(d, "dict.setdefault").entries
    if _through_own_item_methods(d):
        # CPython's OrderedDict_setdefault for a subclass: `self[key]` if `key in self`, else
        # `self[key] = default`, returning default (no lookup after the store, no __missing__).
        if key_of(frame, key) in entries:
            return d.get_item(frame, key)
        value = default[0] if default else ConstantValue(None)
        d.set_item(frame, key, value)
        return value
    k = key_of(frame, key)
    if k not in entries:
        entries[k] = (key, default[0] if default else ConstantValue(None))
        d.mutated(frame)
    return entries[k][1]


@rule(dict.update, OrderedDict.update)
def _update(frame, args, kwargs):
    d, *other = args
    entries = _as_dict(d, "dict.update").entries
    if _through_own_item_methods(d):
        # OrderedDict.update is MutableMapping.update: `self[k] = v` through a subclass's own
        # __setitem__, for each key of a mapping, else for each pair as the iterable yields it
        # (a generator reading the dict sees the stores before), then for each keyword.
        if other and (isinstance(other[0], DictValue) or is_mapping(frame, other[0])):
            pairs = list(dict_entries(frame, other[0]).values())
        else:
            pairs = each_pair(frame, each_item(frame, other[0])) if other else ()
        for key, value in pairs:
            d.set_item(frame, key, value)
        for k, v in kwargs.items():
            d.set_item(frame, ConstantValue(k), v)
        return ConstantValue(None)
    if other and isinstance(other[0], IteratorValue):
        # Pairs stored as the iterator yields them: a generator reading the dict sees them.
        merge_pairs(frame, entries, each_item(frame, other[0]))
    elif other:
        entries.update(dict_entries(frame, other[0]))
    for k, v in kwargs.items():
        entries[k] = (ConstantValue(k), v)
    d.mutated(frame)
    return ConstantValue(None)


@rule(dict.copy, OrderedDict.copy)
def _dict_copy(frame, args, kwargs):
    (d,) = args
    cls = _as_dict(d, "dict.copy").python_cls
    # dict.copy makes a plain dict whatever the subclass; OrderedDict.copy is `self.__class__(self)`.
    if not issubclass(cls, OrderedDict):
        return DictValue(d.entries, python_cls=dict)
    if cls is not OrderedDict:
        check_constructible(cls)
    return DictValue(d.entries, python_cls=cls)


@rule(dict.clear, OrderedDict.clear)
def _dict_clear(frame, args, kwargs):
    (d,) = args
    _as_dict(d, "dict.clear").entries.clear()
    d.mutated(frame)
    return ConstantValue(None)


# --- set ----------------------------------------------------------------------------------------


@rule(set.add)
def _set_add(frame, args, kwargs):
    s, item = args
    _expect(s, SetValue, "set.add").add(frame, item)
    return ConstantValue(None)


@rule(set.update)
def _set_update(frame, args, kwargs):
    s, *others = args
    _expect(s, SetValue, "set.update")
    for other in others:
        if isinstance(other, IteratorValue):
            # Added as the iterator yields them, as CPython's set_update_internal does.
            for item in each_item(frame, other):
                s.add(frame, item)
        else:
            update_set(frame, s, other)
    s.mutated(frame)
    return ConstantValue(None)


@rule(set.discard)
def _discard(frame, args, kwargs):
    s, item = args
    _expect(s, SetValue, "set.discard").entries.pop(key_of(frame, item), None)
    s.mutated(frame)
    return ConstantValue(None)


@rule(set.remove)
def _set_remove(frame, args, kwargs):
    s, item = args
    key = key_of(frame, item)
    if key not in _expect(s, SetValue, "set.remove").entries:
        raise_user_error(frame, KeyError, item.as_python_constant() if item.is_python_constant() else key)
    del s.entries[key]
    s.mutated(frame)
    return ConstantValue(None)


@rule(set.pop)
def _set_pop(frame, args, kwargs):
    (s,) = args
    if not _expect(s, SetValue, "set.pop").entries:
        raise_user_error(frame, KeyError, "pop from an empty set")
    # CPython pops from where its last pop stopped (a cursor in the hash table that capture
    # does not model): the first member in iteration order is right only for a set made here
    # and not popped before, or a set of one member.
    if len(s.entries) > 1 and (s.source is not None or getattr(s, "popped", False)):
        raise Unsupported("set.pop() of a set popped before or passed in (which member comes out depends on its past pops)")
    first = s.unpack(frame)[0]
    del s.entries[key_of(frame, first)]
    s.popped = True
    s.mutated(frame)
    return first


@rule(set.clear)
def _set_clear(frame, args, kwargs):
    (s,) = args
    _expect(s, SetValue, "set.clear").entries.clear()
    s.mutated(frame)
    return ConstantValue(None)


@rule(set.copy)
@rule(frozenset.copy)
def _set_copy(frame, args, kwargs):
    (s,) = args
    if s.python_type() is frozenset:
        return s  # frozenset.copy() is the same object
    return SetValue(dict(_expect(s, SetValue, "set.copy").entries), table=s.entries.table.copy())


@rule(set.symmetric_difference_update)
def _symmetric_difference_update(frame, args, kwargs):
    s, other = args
    entries = _expect(s, SetValue, "set.symmetric_difference_update").entries
    # In place on the table, as on the real set (a copy may be laid out otherwise).
    real, members = set_operand(frame, other)
    entries.table.symmetric_difference_update(real)
    entries.become(entries.table, members)
    s.mutated(frame)
    return ConstantValue(None)


@rule(set.symmetric_difference, frozenset.symmetric_difference)
def _symmetric_difference(frame, args, kwargs):
    s, other = args
    real, members = set_operand(frame, other)
    table = _expect(s, SetValue, "set.symmetric_difference").entries.table.symmetric_difference(real)
    return set_from_operation(table, s.python_cls, s.entries, members)


def _keep_members(method):
    def update(frame, args, kwargs):
        s, *others = args
        entries = _expect(s, SetValue, f"set.{method.__name__}").entries
        # The real method on the table itself (intersection_update swaps in a new table,
        # difference_update deletes in place): the real set's order follows.
        operands = [set_operand(frame, other) for other in others]
        method(entries.table, *(real for real, _ in operands))
        entries.become(entries.table, *(members for _, members in operands))
        s.mutated(frame)
        return ConstantValue(None)

    return update


rule(set.intersection_update)(_keep_members(set.intersection_update))
rule(set.difference_update)(_keep_members(set.difference_update))


@rule(set.isdisjoint)
@rule(frozenset.isdisjoint)
def _set_isdisjoint(frame, args, kwargs):
    s, other = args
    members = _expect(s, SetValue, "set.isdisjoint").entries
    # Stops at the first common member, as CPython does when `other` is not a set.
    return ConstantValue(not any(key_of(frame, item) in members for item in each_item(frame, other)))


def _set_algebra(method):
    def handler(frame, args, kwargs):
        if any(isinstance(a, SetValue) for a in args):
            # Through the sets' own tables (a constant copy of a set may iterate otherwise).
            return _set_algebra_of_members(frame, method.__name__, args)
        try:
            constants = [a.as_python_constant() for a in args]
        except NotConstant:
            return _set_algebra_of_members(frame, method.__name__, args)
        return frame.session.wrap(method(*constants), None)

    return handler


def _set_algebra_of_members(frame, name: str, args: list[Value]) -> Value:
    """Set algebra over members that are not all constants (tensors, by identity; objects),
    keeping the member objects CPython keeps: union and difference keep the receiver's and add
    the others' in order; intersection keeps those of the set it iterates (the smaller of two
    sets, else the argument)."""
    s, *others = args
    _expect(s, SetValue, f"set.{name}")
    # Each operand unpacked once (an iterator argument is consumed by the real method too).
    mine_real, mine = set_operand(frame, s)
    operands = [set_operand(frame, other) for other in others]
    if name in ("issubset", "issuperset"):
        ((_, theirs),) = operands
        inner, outer = (mine, theirs) if name == "issubset" else (theirs, mine)
        return ConstantValue(all(key in outer for key in inner))
    result = dict(mine)
    for other, (_, theirs) in zip(others, operands):
        if name == "union":
            for key, item in theirs.items():
                result.setdefault(key, item)
        elif name == "difference":
            result = {key: item for key, item in result.items() if key not in theirs}
        else:  # intersection
            if isinstance(other, SetValue) and len(theirs) <= len(result):
                result = {key: item for key, item in theirs.items() if key in result}
            elif isinstance(other, SetValue):
                result = {key: item for key, item in result.items() if key in theirs}
            else:
                result = {key: item for key, item in theirs.items() if key in result}
    # The real method on the tables gives the iteration order of the result.
    table = getattr(type(mine_real), name)(mine_real, *(real for real, _ in operands))
    return SetValue(result, python_cls=s.python_cls, table=table)


for _method in (set.union, set.intersection, set.difference, set.issubset, set.issuperset,
                frozenset.union, frozenset.intersection, frozenset.difference):  # fmt: skip
    rule(_method)(_set_algebra(_method))
