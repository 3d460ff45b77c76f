"""Rules for Python's iteration builtins and reductions when their arguments are symbolic:
`iter`, `next`, `range`, `enumerate`, `zip`, `reversed`, `map`, `filter`, `sorted`, `all`,
`any`, `min`, `max`, `sum`. The other builtins are in python_builtins."""

from __future__ import annotations

import types

from ..errors import Unsupported, UserException
from ..operators import binary, compare
from ..values.base import Value
from ..values.constant import ConstantValue
from ..values.containers import ListValue
from ..values.exceptions import raise_user_error
from ..values.factory import evaluate_constant_operation, program_errors
from ..values.iterators import CallIteratorValue, IteratorValue, LazyIteratorValue, ReversedListIteratorValue
from .python_builtins import _constant
from .registry import construct_rule, rule

# --- iteration ------------------------------------------------------------------------------


@rule(iter)
def _iter(frame, args, kwargs):
    obj, *sentinel = args
    if sentinel:
        return CallIteratorValue(frame, obj, sentinel[0])
    if isinstance(obj, IteratorValue):
        return obj
    return IteratorValue.over(frame, obj)


@rule(next)
def _next(frame, args, kwargs):
    iterator, *default = args
    if not isinstance(iterator, IteratorValue):
        raise Unsupported(f"next() on {iterator.describe()}")
    item = iterator.next()
    if item is None:
        if default:
            return default[0]
        raise UserException(iterator.stop_iteration())
    return item


@construct_rule(range)
def _range(frame, cls, args, kwargs):
    return evaluate_constant_operation(frame, range, tuple(_constant(a, "range() arguments") for a in args))


@construct_rule(enumerate, accepts="(iterable, /, start=_)")
def _enumerate(frame, cls, args, kwargs):
    iterable, *start = args
    first = _constant(start[0] if start else kwargs.get("start", ConstantValue(0)), "enumerate()'s start")
    return LazyIteratorValue(frame, "enumerate", [_iter(frame, [iterable], {})], count=first)


@construct_rule(zip)
def _zip(frame, cls, args, kwargs):
    strict = kwargs.get("strict")
    strict = strict is not None and strict.truth(frame)
    return LazyIteratorValue(frame, "zip", [_iter(frame, [a], {}) for a in args], strict=strict)


@construct_rule(reversed)
def _reversed(frame, cls, args, kwargs):
    (seq,) = args
    seq_type = seq.python_type()
    if isinstance(getattr(seq_type, "__reversed__", None), types.FunctionType):
        raise Unsupported(f"reversed() of {seq.describe()}, whose class defines __reversed__")
    if not hasattr(seq_type, "__reversed__") and not (hasattr(seq_type, "__len__") and hasattr(seq_type, "__getitem__")):
        raise_user_error(frame, TypeError, f"'{seq_type.__name__}' object is not reversible")
    if isinstance(seq, ListValue) and seq_type is list:
        return ReversedListIteratorValue(seq)
    return IteratorValue(seq.unpack(frame)[::-1])


@construct_rule(map)
def _map(frame, cls, args, kwargs):
    fn, *iterables = args
    return LazyIteratorValue(frame, "map", [_iter(frame, [a], {}) for a in iterables], function=fn)


@construct_rule(filter)
def _filter(frame, cls, args, kwargs):
    fn, iterable = args
    function = None if fn.is_python_constant() and fn.as_python_constant() is None else fn
    return LazyIteratorValue(frame, "filter", [_iter(frame, [iterable], {})], function=function)


@rule(sorted)
def _sorted(frame, args, kwargs):
    (iterable,) = args
    items = iterable.unpack(frame)
    key = kwargs.get("key")
    reverse = _constant(kwargs.get("reverse", ConstantValue(False)), "sorted()'s reverse")
    if key is None or (key.is_python_constant() and key.as_python_constant() is None):
        keyed = [(_constant(x, "sorted() items"), x) for x in items]
    else:
        keyed = [(_constant(key.call(frame, [x], {}), "sorted() keys"), x) for x in items]
    with program_errors(frame):  # `sorted([1, None])`: the program's TypeError
        keyed.sort(key=lambda pair: pair[0], reverse=reverse)
    return ListValue([x for _, x in keyed])


# --- reductions -------------------------------------------------------------------------------


def each_item(frame, iterable: Value):
    """The items of `iterable` one at a time, as CPython's consumers pull them: a generator's
    body (or a map's function) runs only up to the item asked for, so a consumer that stops
    early (`any`, `all`, `in`) leaves the rest unrun and one that raises midway stops the
    producer's side effects where eager stops them."""
    iterator = _iter(frame, [iterable], {})
    while (item := iterator.next()) is not None:
        yield item


@rule(all)
def _all(frame, args, kwargs):
    (iterable,) = args
    return ConstantValue(all(x.truth(frame) for x in each_item(frame, iterable)))


@rule(any)
def _any(frame, args, kwargs):
    (iterable,) = args
    return ConstantValue(any(x.truth(frame) for x in each_item(frame, iterable)))


def _min_max(frame, args, kwargs, pick):
    if not args:
        raise_user_error(frame, TypeError, f"{pick.__name__} expected at least 1 argument, got 0")
    key = kwargs.get("key")
    if key is not None and key.is_python_constant() and key.as_python_constant() is None:
        key = None
    default = kwargs.get("default")
    if default is not None and len(args) != 1:
        raise_user_error(frame, TypeError, f"Cannot specify a default for {pick.__name__}() with multiple positional arguments")
    items = each_item(frame, args[0]) if len(args) == 1 else iter(args)
    best = next(items, None)
    if best is None:
        if default is not None:
            return default
        raise_user_error(frame, ValueError, f"{pick.__name__}() arg is an empty sequence")
    best_key = best if key is None else key.call(frame, [best], {})
    op = ">" if pick is max else "<"
    for item in items:  # keyed and compared as they come, between the producer's steps, as CPython does
        item_key = item if key is None else key.call(frame, [item], {})
        if compare(frame, op, item_key, best_key).truth(frame):
            best, best_key = item, item_key
    return best


@rule(max)
def _max(frame, args, kwargs):
    return _min_max(frame, args, kwargs, max)


@rule(min)
def _min(frame, args, kwargs):
    return _min_max(frame, args, kwargs, min)


@rule(sum)
def _sum(frame, args, kwargs):
    iterable, *start = args
    total = start[0] if start else kwargs.get("start", ConstantValue(0))
    if issubclass(total.python_type(), (str, bytes, bytearray)):  # CPython's sum refuses these starts
        kind = total.python_type().__name__
        raise_user_error(frame, TypeError, f"sum() can't sum {'strings' if kind == 'str' else kind} [use {'' if kind == 'str' else 'b'}''.join(seq) instead]")
    for item in each_item(frame, iterable):
        total = binary(frame, "+", total, item)
    return total
