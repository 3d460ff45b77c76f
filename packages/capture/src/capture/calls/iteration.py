"""Rules for itertools: each builds the iterator's items from the symbolic items of its
arguments, the way capture runs iteration ahead of time (capture.values.containers
.IteratorValue); `count`, `cycle` and `repeat` without a count are endless iterators whose
items are made on demand (capture.values.iterators)."""

from __future__ import annotations

import itertools

from ..errors import Unsupported
from ..operators import binary, compare
from ..values.base import NotConstant, Value
from ..values.constant import ConstantValue
from ..values.containers import TupleValue
from ..values.iterators import IteratorValue
from ..values.exceptions import raise_user_error
from ..values.iterators import EndlessIteratorValue, columns
from ..values.symbolic import concrete
from .registry import construct_rule, rule


def _constant(value: Value | None, what: str, default=None):
    if value is None:
        return default
    try:
        return concrete(value)
    except NotConstant:
        raise Unsupported(f"{what} must be a Python constant, got {value.describe()}") from None


def _argument(args, kwargs, index: int, name: str):
    if len(args) > index:
        return args[index]
    return kwargs.get(name)


def _by_index(items: list[Value], index_tuples) -> IteratorValue:
    """Tuples of `items` picked by the index tuples a real itertools call produced."""
    return IteratorValue([TupleValue([items[i] for i in indices]) for indices in index_tuples])


@construct_rule(itertools.chain)
def _chain(frame, cls, args, kwargs):
    return IteratorValue([item for iterable in args for item in iterable.unpack(frame)])


@rule(itertools.chain.from_iterable)
def _chain_from_iterable(frame, args, kwargs):
    (iterables,) = args
    return IteratorValue([item for iterable in iterables.unpack(frame) for item in iterable.unpack(frame)])


@construct_rule(itertools.product)
def _product(frame, cls, args, kwargs):
    repeat = _constant(kwargs.get("repeat"), "product()'s repeat", 1)
    pools = [a.unpack(frame) for a in args] * repeat
    rows = itertools.product(*(range(len(pool)) for pool in pools))
    return IteratorValue([TupleValue([pool[i] for pool, i in zip(pools, row)]) for row in rows])


# combinations, combinations_with_replacement and permutations pick items by position: the
# real function run over the positions says which.
@construct_rule(itertools.combinations, itertools.combinations_with_replacement, itertools.permutations)
def _by_positions(frame, cls, args, kwargs):
    items = _argument(args, kwargs, 0, "iterable").unpack(frame)
    r = _constant(_argument(args, kwargs, 1, "r"), f"{cls.__name__}()'s r")
    return _by_index(items, cls(range(len(items)), r))


@construct_rule(itertools.accumulate)
def _accumulate(frame, cls, args, kwargs):
    items = _argument(args, kwargs, 0, "iterable").unpack(frame)
    func = _argument(args, kwargs, 1, "func")
    if func is not None and func.is_python_constant() and func.as_python_constant() is None:
        func = None
    initial = kwargs.get("initial")
    if initial is not None and initial.is_python_constant() and initial.as_python_constant() is None:
        initial = None
    results = []
    total = initial
    if total is not None:
        results.append(total)
    for item in items:
        if total is None:
            total = item
        elif func is None:
            total = binary(frame, "+", total, item)
        else:
            total = func.call(frame, [total, item], {})
        results.append(total)
    return IteratorValue(results)


@construct_rule(itertools.islice)
def _islice(frame, cls, args, kwargs):
    iterable, *bounds = args
    bounds = [_constant(b, "islice() bounds") for b in bounds]
    try:
        itertools.islice((), *bounds)  # the real islice's checks of its bounds and their errors
    except (ValueError, TypeError) as error:
        raise_user_error(frame, type(error), str(error))
    window = slice(*bounds) if len(bounds) > 1 else slice(bounds[0])
    start, stop, step = window.start or 0, window.stop, window.step or 1
    if getattr(iterable, "endless", False):
        if stop is None:
            raise Unsupported("islice() of an endless iterator without a stop")
        return IteratorValue(iterable.take(stop)[start::step])
    if isinstance(iterable, IteratorValue) and stop is not None:
        # A shared iterator gives up only the `stop` items islice reads, not all of them
        # (`while chunk := list(islice(it, 3))` reads `it` in chunks).
        taken = []
        while len(taken) < stop and (item := iterable.next()) is not None:
            taken.append(item)
        return IteratorValue(taken[start::step])
    return IteratorValue(iterable.unpack(frame)[window])


@construct_rule(itertools.count)
def _count(frame, cls, args, kwargs):
    start = _argument(args, kwargs, 0, "start") or ConstantValue(0)
    step = _argument(args, kwargs, 1, "step") or ConstantValue(1)
    return EndlessIteratorValue(lambda i: binary(frame, "+", start, binary(frame, "*", step, ConstantValue(i))), "count")


@construct_rule(itertools.repeat)
def _repeat(frame, cls, args, kwargs):
    item = _argument(args, kwargs, 0, "object")
    times = _argument(args, kwargs, 1, "times")
    if times is None:
        return EndlessIteratorValue(lambda i: item, "repeat")
    return IteratorValue([item] * max(_constant(times, "repeat()'s times"), 0))


@construct_rule(itertools.cycle)
def _cycle(frame, cls, args, kwargs):
    (iterable,) = args
    items = iterable.unpack(frame)
    if not items:
        return IteratorValue([])
    return EndlessIteratorValue(lambda i: items[i % len(items)], "cycle")


@construct_rule(itertools.zip_longest)
def _zip_longest(frame, cls, args, kwargs):
    fill = kwargs.get("fillvalue", ConstantValue(None))
    pools = [a.unpack(frame) for a in args]
    length = max((len(pool) for pool in pools), default=0)
    return IteratorValue([TupleValue([pool[i] if i < len(pool) else fill for pool in pools]) for i in range(length)])


@construct_rule(itertools.starmap)
def _starmap(frame, cls, args, kwargs):
    fn, iterable = args
    return IteratorValue([fn.call(frame, item.unpack(frame), {}) for item in iterable.unpack(frame)])


@construct_rule(itertools.pairwise)
def _pairwise(frame, cls, args, kwargs):
    (iterable,) = args
    items = iterable.unpack(frame)
    return IteratorValue([TupleValue([a, b]) for a, b in zip(items, items[1:])])


@construct_rule(itertools.groupby)
def _groupby(frame, cls, args, kwargs):
    items = _argument(args, kwargs, 0, "iterable").unpack(frame)
    key = _argument(args, kwargs, 1, "key")
    if key is not None and key.is_python_constant() and key.as_python_constant() is None:
        key = None
    groups: list[tuple[Value, list[Value]]] = []
    for item in items:
        k = item if key is None else key.call(frame, [item], {})
        if groups and compare(frame, "==", groups[-1][0], k).truth(frame):
            groups[-1][1].append(item)
        else:
            groups.append((k, [item]))
    return IteratorValue([TupleValue([k, IteratorValue(members)]) for k, members in groups])


@construct_rule(itertools.takewhile)
def _takewhile(frame, cls, args, kwargs):
    predicate, iterable = args
    taken = []
    for item in iterable.unpack(frame):
        if not predicate.call(frame, [item], {}).truth(frame):
            break
        taken.append(item)
    return IteratorValue(taken)


@construct_rule(itertools.dropwhile)
def _dropwhile(frame, cls, args, kwargs):
    predicate, iterable = args
    items = iterable.unpack(frame)
    for i, item in enumerate(items):
        if not predicate.call(frame, [item], {}).truth(frame):
            return IteratorValue(items[i:])
    return IteratorValue([])


@construct_rule(itertools.filterfalse)
def _filterfalse(frame, cls, args, kwargs):
    predicate, iterable = args
    items = iterable.unpack(frame)
    if predicate.is_python_constant() and predicate.as_python_constant() is None:
        return IteratorValue([x for x in items if not x.truth(frame)])
    return IteratorValue([x for x in items if not predicate.call(frame, [x], {}).truth(frame)])


@construct_rule(itertools.compress)
def _compress(frame, cls, args, kwargs):
    data, selectors = columns(frame, [_argument(args, kwargs, 0, "data"), _argument(args, kwargs, 1, "selectors")])
    return IteratorValue([item for item, keep in zip(data, selectors) if keep.truth(frame)])


@rule(itertools.tee)
def _tee(frame, args, kwargs):
    iterable, *n = args
    items = iterable.unpack(frame)
    count = _constant(n[0] if n else None, "tee()'s n", 2)
    if count < 0:
        raise_user_error(frame, ValueError, "n must be >= 0")
    return TupleValue([IteratorValue(list(items)) for _ in range(count)])
