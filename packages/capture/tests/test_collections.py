"""collections in compiled code: deque (both ends, maxlen, indexing, iteration), defaultdict,
Counter, OrderedDict's order methods and `fromkeys`, made inside the function or passed in
(mutations then happen on the caller's object), and returned with their own class."""

import collections
import sys

import pytest
import torch

from helpers import assert_same, check_across_sizes, clone_inputs, compile_eager


def deque_both_ends(x, y):
    d = collections.deque([x, y])
    d.appendleft(x * 2)
    d.append(y * 3)
    d.extend([x, y])
    d.extendleft([x * 4, y * 4])
    first, last = d.popleft(), d.pop()
    d.rotate(2)
    return first + last + d[0] - d[-1], len(d), [t.sum() for t in d], d.index(d[0])


def deque_with_maxlen(x, y):
    d = collections.deque(maxlen=3)
    for i in range(5):
        d.append(x * i)
    d.appendleft(y)
    return list(d), d.maxlen, d.copy()


def deque_returned(x, y):
    d = collections.deque([x], maxlen=2)
    d.append(y)
    d.append(x + y)
    return d


def deque_operators_keep_maxlen(x, y):
    # `+=` (a generator reading the deque as it grows), `*=`, `+`, `*` and `n *` keep maxlen,
    # read before the deque is returned (returning trims it again); slicing is a TypeError.
    d = collections.deque([x, y], maxlen=3)
    d += (x * len(d) for _ in range(3))
    grown = list(d)
    d *= 2
    repeated = list(d)
    both, times, rtimes = list(d + collections.deque([y])), d * 2, 2 * d
    try:
        d[0:2]
    except TypeError as e:
        message = str(e)
    return grown, repeated, both, list(times), list(rtimes), times.maxlen, message


def defaultdict_groups(x, y):
    groups = collections.defaultdict(list)
    for name, t in (("a", x), ("b", y), ("a", x * y)):
        groups[name].append(t)
    counts = collections.defaultdict(int)
    counts["n"] += 2
    return sum(groups["a"]) + counts["n"], len(groups), groups, groups.default_factory is list


def counter_basics(x, y):
    c = collections.Counter([1, 1, 2, "a"])
    c.update([2, 3])
    c.update({"a": 4})
    top = c.most_common(1)[0]
    return x * c[1] + y * c[5] + len(c) + top[1], c, c.total()


def counter_arithmetic(x, y):
    a, b = collections.Counter("aab"), collections.Counter(["b", "c", "c"])
    total, difference = a + b, a - b
    a.subtract(b)
    return x * total["c"] + y * difference["a"], total, difference, a, sorted(total.elements()), total.most_common(2)


def defaultdict_copied(x, y):
    d = collections.defaultdict(list)
    d["a"].append(x)
    e = d.copy()
    e["b"].append(y)
    return d, e, e.default_factory


def ordered_dict_order(x, y):
    d = collections.OrderedDict()
    d["a"], d["b"], d["c"] = x, y, x + y
    d.move_to_end("a")
    d.move_to_end("c", last=False)
    key, value = d.popitem()
    first = d.popitem(last=False)
    return list(d.keys()), key, value * 2, first[1], d


def from_keys(x, y):
    plain = dict.fromkeys(["a", "b"], x)
    ordered = collections.OrderedDict.fromkeys("xy")
    default = collections.defaultdict.fromkeys([1, 2], 0)
    return plain["b"] * 2, list(ordered), default, dict.fromkeys(range(3))


def interned_names(x, y):
    return {sys.intern("scale"): x * 2}


FUNCTIONS = [deque_both_ends, deque_with_maxlen, deque_returned, deque_operators_keep_maxlen, defaultdict_groups, counter_basics,
             counter_arithmetic, defaultdict_copied, ordered_dict_order, from_keys, interned_names]  # fmt: skip


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_traces_into_one_graph(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n), torch.randn(n)))


def _run_on_copies(compiled, fn, make_container):
    x = torch.randn(3)
    container, eager_container = make_container(x), make_container(x)
    assert_same(compiled(container, x), fn(eager_container, x))
    assert type(container) is type(eager_container)
    assert_same(list(container.items()) if isinstance(container, dict) else list(container),
                list(eager_container.items()) if isinstance(eager_container, dict) else list(eager_container))  # fmt: skip
    return container


def test_mutations_of_a_deque_passed_in_reach_the_caller():
    def fn(d, x):
        d.append(x * 2)
        d.appendleft(x)
        return d.popleft() + d[-1]

    compiled = compile_eager(fn, fullgraph=True)
    for _ in range(2):
        container = _run_on_copies(compiled, fn, lambda x: collections.deque([x + 1], maxlen=2))
        assert container.maxlen == 2


def test_missing_keys_of_a_defaultdict_passed_in_are_added_for_the_caller():
    def fn(d, x):
        d["new"].append(x)
        return d["old"][0] * 2

    compiled = compile_eager(fn, fullgraph=True)
    for _ in range(2):
        _run_on_copies(compiled, fn, lambda x: collections.defaultdict(list, old=[clone_inputs(x)]))


def test_counter_passed_in():
    def fn(c, x):
        c.update(["b", "b"])
        return x * c["a"] + c["zzz"]

    compiled = compile_eager(fn, fullgraph=True)
    for _ in range(2):
        _run_on_copies(compiled, fn, lambda x: collections.Counter(a=2))


def iterator_types(x, d, s):
    od = collections.OrderedDict(d)
    kinds = [type(iter(c)).__name__ for c in (d, d.keys(), d.values(), d.items(), s, frozenset(s), od, od.items(), (1,), [1], range(2), "ab", "é")]
    return x + len(kinds), kinds, isinstance(iter(d), type(iter({})))


def test_iterators_of_dicts_sets_and_views_have_their_types():
    # Before: every one but a list's answered tuple_iterator.
    check_across_sizes(iterator_types, lambda n: (torch.randn(n), {"a": 1, "b": 2}, {1, 2}))
