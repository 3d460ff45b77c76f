"""Rules for itertools. The iterators that read their arguments lazily in CPython (chain,
islice, accumulate, groupby, takewhile, cycle, tee, ...) are StepIteratorValues that follow
CPython's implementation an item at a time, so what they leave of a shared iterator and when
they call their function is as in Python; product and the combinatoric ones read their
arguments in full when made, as CPython does; `count` and `repeat` without a count are endless
iterators whose items are made on demand (capture.values.iterators)."""

from __future__ import annotations

import itertools

from ..errors import Unsupported
from ..operators import binary, compare
from ..values.base import NotConstant, Value
from ..values.constant import ConstantValue
from ..values.containers import TupleValue
from ..values.exceptions import raise_user_error
from ..values.iterators import EndlessIteratorValue, IteratorValue, StepIteratorValue, iterator_of
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
    # chain calls iter() on each argument only once it reaches it.
    def steps():
        for iterable in args:
            iterator = iterator_of(frame, iterable)
            while (item := iterator.next()) is not None:
                yield item

    return StepIteratorValue("chain", steps(), (itertools.chain, list(args)))


@rule(itertools.chain.from_iterable)
def _chain_from_iterable(frame, args, kwargs):
    (iterables,) = args
    outer = iterator_of(frame, iterables)

    def steps():
        while (iterable := outer.next()) is not None:
            iterator = iterator_of(frame, iterable)
            while (item := iterator.next()) is not None:
                yield item

    return StepIteratorValue("chain", steps(), (itertools.chain.from_iterable, [outer]))


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
    source = iterator_of(frame, _argument(args, kwargs, 0, "iterable"))
    func = _argument(args, kwargs, 1, "func")
    if func is not None and func.is_python_constant() and func.as_python_constant() is None:
        func = None
    initial = kwargs.get("initial")
    if initial is not None and initial.is_python_constant() and initial.as_python_constant() is None:
        initial = None

    def steps():
        total = initial
        if total is not None:
            yield total
        while (item := source.next()) is not None:
            if total is None:
                total = item
            elif func is None:
                total = binary(frame, "+", total, item)
            else:
                total = func.call(frame, [total, item], {})
            yield total

    made_by = None if initial is not None or kwargs.get("func") else (itertools.accumulate, [source, *([func] if func else [])])
    return StepIteratorValue("accumulate", steps(), made_by)


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
    source = iterator_of(frame, iterable)
    if getattr(source, "endless", False) and stop is None:
        raise Unsupported("islice() of an endless iterator without a stop")

    # As CPython's islice: it reads the source only up to the item it yields next, so a shared
    # iterator keeps the rest (`while chunk := list(islice(it, 3))` reads `it` in chunks).
    def steps():
        count, wanted = 0, start
        while True:
            while count < wanted:
                if source.next() is None:
                    return
                count += 1
            if stop is not None and count >= stop:
                return
            item = source.next()
            if item is None:
                return
            count += 1
            wanted = wanted + step if stop is None else min(wanted + step, stop)
            yield item

    return StepIteratorValue("islice", steps(), (itertools.islice, [source, *map(ConstantValue, bounds)]))


@construct_rule(itertools.count)
def _count(frame, cls, args, kwargs):
    start = _argument(args, kwargs, 0, "start") or ConstantValue(0)
    step = _argument(args, kwargs, 1, "step") or ConstantValue(1)
    made = [start]

    def make(i):
        # As CPython's count: start itself first (count(1, 0.5) begins with the int 1), then
        # the last item plus step (repeated float additions, not start + i * step).
        if i:
            made.append(binary(frame, "+", made[-1], step))
        return made[-1]

    return EndlessIteratorValue(make, "count")


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
    source = iterator_of(frame, iterable)

    # The first round reads the source as it goes, keeping its items; later rounds repeat them.
    def steps():
        saved = []
        while (item := source.next()) is not None:
            saved.append(item)
            yield item
        while saved:
            yield from saved

    return StepIteratorValue("cycle", steps(), (itertools.cycle, [source]), endless=True)


@construct_rule(itertools.zip_longest)
def _zip_longest(frame, cls, args, kwargs):
    fill = kwargs.get("fillvalue", ConstantValue(None))
    sources = [iterator_of(frame, a) for a in args]

    def steps():
        active = [True] * len(sources)
        while sources:
            row = []
            for i, source in enumerate(sources):
                item = source.next() if active[i] else None
                if item is None:
                    active[i] = False
                    if not any(active):
                        return
                    item = fill
                row.append(item)
            yield TupleValue(row)

    made_by = (itertools.zip_longest, sources) if "fillvalue" not in kwargs else None
    return StepIteratorValue("zip_longest", steps(), made_by)


@construct_rule(itertools.starmap)
def _starmap(frame, cls, args, kwargs):
    fn, iterable = args
    source = iterator_of(frame, iterable)

    def steps():
        while (item := source.next()) is not None:
            yield fn.call(frame, item.unpack(frame), {})

    return StepIteratorValue("starmap", steps(), (itertools.starmap, [fn, source]))


@construct_rule(itertools.pairwise)
def _pairwise(frame, cls, args, kwargs):
    (iterable,) = args
    source = iterator_of(frame, iterable)

    def steps():
        previous = source.next()
        while previous is not None and (item := source.next()) is not None:
            yield TupleValue([previous, item])
            previous = item

    return StepIteratorValue("pairwise", steps(), (itertools.pairwise, [source]))


@construct_rule(itertools.groupby)
def _groupby(frame, cls, args, kwargs):
    source = iterator_of(frame, _argument(args, kwargs, 0, "iterable"))
    key = _argument(args, kwargs, 1, "key")
    if key is not None and key.is_python_constant() and key.as_python_constant() is None:
        key = None
    # CPython's groupby object, step for step: the current item and its key, read one at a time
    # from the source; a group's iterator yields while the key equals its own, and stops for
    # good once the groupby object moves on (a group not read before then is lost, as in Python).
    state = {"key": None, "item": None, "target": None, "group": None}

    def advance() -> bool:
        item = source.next()
        if item is None:
            return False
        state["key"] = item if key is None else key.call(frame, [item], {})
        state["item"] = item
        return True

    def same(a, b) -> bool:
        return compare(frame, "==", a, b).truth(frame)

    def group_steps(target, token):
        while state["group"] is token:
            if state["item"] is None and not advance():
                return
            if not same(target, state["key"]):
                return
            item, state["item"] = state["item"], None
            yield item

    def steps():
        while True:
            state["group"] = None
            while state["key"] is None or (state["target"] is not None and same(state["target"], state["key"])):
                if not advance():
                    return
            state["target"] = state["key"]
            token = state["group"] = object()
            yield TupleValue([state["target"], StepIteratorValue("groupby group", group_steps(state["target"], token), None)])

    return StepIteratorValue("groupby", steps(), None)


@construct_rule(itertools.takewhile)
def _takewhile(frame, cls, args, kwargs):
    predicate, iterable = args
    source = iterator_of(frame, iterable)

    def steps():
        while (item := source.next()) is not None:
            if not predicate.call(frame, [item], {}).truth(frame):
                return  # the failing item is consumed, as in CPython
            yield item

    return StepIteratorValue("takewhile", steps(), (itertools.takewhile, [predicate, source]))


@construct_rule(itertools.dropwhile)
def _dropwhile(frame, cls, args, kwargs):
    predicate, iterable = args
    source = iterator_of(frame, iterable)

    def steps():
        while (item := source.next()) is not None:
            if not predicate.call(frame, [item], {}).truth(frame):
                yield item
                break
        while (item := source.next()) is not None:
            yield item

    return StepIteratorValue("dropwhile", steps(), (itertools.dropwhile, [predicate, source]))


@construct_rule(itertools.filterfalse)
def _filterfalse(frame, cls, args, kwargs):
    predicate, iterable = args
    source = iterator_of(frame, iterable)
    if predicate.is_python_constant() and predicate.as_python_constant() is None:
        predicate = None

    def steps():
        while (item := source.next()) is not None:
            keep = item if predicate is None else predicate.call(frame, [item], {})
            if not keep.truth(frame):
                yield item

    return StepIteratorValue("filterfalse", steps(), (itertools.filterfalse, [predicate or ConstantValue(None), source]))


@construct_rule(itertools.compress)
def _compress(frame, cls, args, kwargs):
    data = iterator_of(frame, _argument(args, kwargs, 0, "data"))
    selectors = iterator_of(frame, _argument(args, kwargs, 1, "selectors"))

    def steps():
        while (item := data.next()) is not None and (keep := selectors.next()) is not None:
            if keep.truth(frame):
                yield item

    return StepIteratorValue("compress", steps(), (itertools.compress, [data, selectors]))


@rule(itertools.tee)
def _tee(frame, args, kwargs):
    iterable, *n = args
    count = _constant(n[0] if n else None, "tee()'s n", 2)
    if count < 0:
        raise_user_error(frame, ValueError, "n must be >= 0")
    source = iterator_of(frame, iterable)
    # The copies share what they read of the source; each reads the source only when it gets
    # ahead of the others, as CPython's tee does.
    buffer: list[Value] = []

    def steps():
        position = 0
        while True:
            if position == len(buffer):
                item = source.next()
                if item is None:
                    return
                buffer.append(item)
            position += 1
            yield buffer[position - 1]

    return TupleValue([StepIteratorValue("tee", steps(), None) for _ in range(count)])
