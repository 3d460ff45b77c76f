"""itertools, `yield from` and generator expressions over them, traced into one graph:
tensors flowing through the iterators stay graph values."""

import itertools
import operator

import pytest
import torch

from helpers import check_across_sizes, compile_eager


def product_and_chain(x, y):
    s = x
    for a, b in itertools.product([1, 2], [x, y]):
        s = s + a * b
    for c in itertools.chain([x], (2,), [y]):
        s = s * c
    for c in itertools.chain.from_iterable([[x, 1], [y]]):
        s = s - c
    return s, list(itertools.product([x, y], repeat=2))


def combinatorics(x, y):
    tensors = [x, y, x * y]
    pairs = [a - b for a, b in itertools.combinations(tensors, 2)]
    orders = [p[0] * 2 + p[-1] for p in itertools.permutations(tensors)]
    doubles = [a * b for a, b in itertools.combinations_with_replacement([x, y], 2)]
    return pairs, orders, doubles, len(list(itertools.permutations(range(4), 2)))


def accumulate_and_slice(x, y):
    running = list(itertools.accumulate([x, y, x]))
    products = list(itertools.accumulate([x, y, y], operator.mul, initial=y))
    window = list(itertools.islice([x, y, x + y, x - y], 1, 4, 2))
    return running, products, window, list(itertools.islice(itertools.count(3, 2), 4))


def endless_iterators(x, y):
    total = x
    for i, t in zip(itertools.count(), [x, y, x]):
        total = total + i * t
    for t in itertools.repeat(y, 3):
        total = total - t
    scaled = [a * b for a, b in zip(itertools.cycle([1, -1]), [x, y, x])]
    for i in itertools.count(1):
        if i > 3:
            break
        total = total + i
    for i, k in enumerate(itertools.count(10, 5)):
        if i == 2:
            break
        total = total * k
    return total, scaled, list(zip(itertools.repeat(x), [1, 2]))


def count_adds_its_step(x, y):
    # count() yields start itself (an int before a float step), then adds step each time:
    # ten steps of 0.1 reach 0.9999999999999999, not 10 * 0.1.
    halves = list(itertools.islice(itertools.count(1, 0.5), 3))
    tenths = list(itertools.islice(itertools.count(0, 0.1), 11))
    return x * halves[-1], [type(v).__name__ for v in halves], tenths, [c for c, _ in zip(itertools.count(x.shape[0], 0.1), y)]


def pairing_helpers(x, y):
    longest = [a if b is None else a + b for a, b in itertools.zip_longest([x, y, x], [y])]
    filled = list(itertools.zip_longest([x], [y, x], fillvalue=2))
    mapped = list(itertools.starmap(torch.add, [(x, y), (y, 1)]))
    pairs = [a * b for a, b in itertools.pairwise([x, y, x + 1])]
    return longest, filled, mapped, pairs


def grouping_and_filtering(x, y):
    groups = [(k, len(list(g))) for k, g in itertools.groupby([1, 1, 2, 3, 3, 3])]
    by_rank = [(k, sum(g)) for k, g in itertools.groupby([x, y, x.unsqueeze(0)], key=lambda t: t.dim())]
    taken = list(itertools.takewhile(lambda n: n < 3, [1, 2, 3, 1]))
    dropped = list(itertools.dropwhile(lambda n: n < 3, [1, 2, 3, 1]))
    kept = list(itertools.filterfalse(lambda n: n % 2, range(6)))
    chosen = list(itertools.compress([x, y, x * 2], [1, 0, 1]))
    first, second = itertools.tee([x, y])
    return groups, by_rank, taken, dropped, kept, chosen, list(first), list(second)


def generator_expressions(x, y):
    total = sum(a * b for a, b in itertools.product([x, y], [1, 2]))
    biggest = max(t.shape[0] * i for i, t in enumerate(itertools.chain([x], [y])))
    return total, biggest, tuple(t * i for i, t in enumerate(itertools.islice(itertools.cycle([x, y]), 5)))


def _inner(x):
    yield x * 2
    yield x + 1
    return x * 3


def _outer(x, y):
    yield from [x, y]
    result = yield from _inner(x)
    yield result
    yield from (t * 2 for t in (x, y))
    yield from itertools.chain([y], [x])


def yield_from(x, y):
    return list(_outer(x, y)), sum(_outer(y, x))


FUNCTIONS = [
    product_and_chain, combinatorics, accumulate_and_slice, endless_iterators, count_adds_its_step, pairing_helpers,
    grouping_and_filtering, generator_expressions, yield_from,
]  # fmt: skip


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_traces_into_one_graph(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n), torch.randn(n)))


def test_endless_iterator_read_whole_breaks_with_a_reason():
    def fn(x):
        return x + len(list(itertools.count()))

    compiled = compile_eager(fn, fullgraph=True)
    with pytest.raises(Exception, match="never ends"):
        compiled(torch.randn(2))


def test_returned_itertools_iterator_is_rebuilt():
    def fn(x, y):
        return itertools.chain([x * 2], [y])

    compiled = compile_eager(fn, fullgraph=True)
    x, y = torch.randn(3), torch.randn(3)
    for got, expected in itertools.zip_longest(compiled(x, y), fn(x, y)):
        torch.testing.assert_close(got, expected)


# As CPython's, the iterators read their arguments an item at a time: what they leave of a
# shared iterator is still there, their functions run between the consumer's steps, and a
# groupby group is lost once the groupby object moves on.
def lazy_reads_of_shared_iterators(x, y):
    sizes = iter([1, 2, 5, 1, 2])
    taken = list(itertools.takewhile(lambda v: v < 3, sizes))  # 5 is read and dropped
    source = iter([1, 5, 2, 3])
    first_kept = next(itertools.dropwhile(lambda v: v < 3, source))
    pairs = itertools.pairwise(iter([x, y, x * 2]))
    shared = iter([x, y, x * 3])
    running = next(itertools.accumulate(shared))
    window = iter([x, y, x + y, y * 2])
    sliced = list(itertools.islice(window, 1, 3))
    return taken, list(sizes), first_kept, list(source), next(pairs), running, list(shared), sliced, list(window)


def function_calls_interleave_with_consumer(x, y):
    log = []

    def add(a, b):
        log.append(len(log))
        return a + b

    mapped = itertools.starmap(add, [(x, y), (y, x), (x, x)])
    before = len(log)
    first = next(mapped)
    chained = itertools.chain([x], (log.append("gen") or t for t in [y]))
    head = next(chained)
    return before, first, head, list(log)


def groupby_groups_are_lost_once_passed(x, y):
    groups = itertools.groupby([x, y, x.unsqueeze(0), y.unsqueeze(0), x], key=lambda t: t.dim())
    k1, g1 = next(groups)
    k2, g2 = next(groups)
    source = iter([1, 1, 2, 3])
    k, _ = next(itertools.groupby(source))
    return k1, list(g1), k2, list(g2), [(k, len(list(g))) for k, g in groups], k, list(source)


def tee_and_cycle_read_as_they_go(x, y):
    source = iter([x, y, x * 2])
    a, b = itertools.tee(source)
    first = next(a)
    c = itertools.cycle(iter([1, 2, 3]))
    return first, list(source), list(b), list(a), next(c), [next(c) for _ in range(4)]


@pytest.mark.parametrize(
    "fn",
    [lazy_reads_of_shared_iterators, function_calls_interleave_with_consumer, groupby_groups_are_lost_once_passed, tee_and_cycle_read_as_they_go],
    ids=lambda f: f.__name__,
)
def test_itertools_read_their_arguments_lazily(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n), torch.randn(n)))
