"""Iteration and identity behave as in CPython in compiled code: dicts, sets and deques changed
during iteration raise, list/tuple/deque equal only their own kind, `v in iterator` consumes up
to the match, `id()` of one object is stable, `sum()` refuses a string start, torch.Size arithmetic
stays a Size, and objects with `__slots__` store only into their slots."""

import collections

import pytest
import torch

from helpers import assert_same, compile_eager


def dict_grows_while_iterated(x):
    d = {1: x}
    for k in d:
        d[k + 1] = x
    return x


def set_grows_while_iterated(x):
    s = {1}
    for k in s:
        s.add(k + 1)
    return x


def deque_appended_while_iterated(x):
    d = collections.deque([1, 2])
    for v in d:
        d.append(v)
    return x


@pytest.mark.parametrize("fn", [dict_grows_while_iterated, set_grows_while_iterated, deque_appended_while_iterated])
def test_changing_a_container_while_iterating_it_raises(fn):
    x = torch.randn(3)
    with pytest.raises(RuntimeError) as eager:
        fn(x)
    with pytest.raises(RuntimeError) as compiled:
        compile_eager(fn)(x)
    assert str(compiled.value) == str(eager.value)


def test_unchanged_containers_iterate_normally():
    def fn(x):
        d, s, q = {1: 2}, {3}, collections.deque([4])
        return x + sum(d) + sum(s) + sum(q)

    x = torch.randn(3)
    assert_same(compile_eager(fn)(x), fn(x))


def test_sequences_of_different_kinds_are_unequal():
    def fn(x):
        return x.shape == [x.shape[0]], x.shape == (x.shape[0],), collections.deque([1]) == [1]

    compiled = compile_eager(fn)
    for n in (3, 4, 5):  # the later sizes are dynamic
        x = torch.randn(n)
        assert_same(compiled(x), fn(x))


def test_in_consumes_an_iterator_only_up_to_the_match():
    def fn(x):
        it = iter([1, 2, 3, 4])
        found = 2 in it
        return x + found, list(it)

    x = torch.randn(3)
    assert_same(compile_eager(fn)(x), fn(x))


class ReadsLogged:
    """No __iter__: iterated through __getitem__ (CPython's old sequence protocol)."""

    def __init__(self, items):
        self.items, self.reads = items, []

    def __getitem__(self, i):
        self.reads.append(i)
        return self.items[i]


@pytest.mark.parametrize("passed_in", [False, True])
def test_the_sequence_protocol_reads_items_only_as_asked(passed_in):
    # `in`, a loop that breaks and zip read __getitem__ one index at a time, as eager does.
    def fn(x, seq=None):
        seq = seq if passed_in else ReadsLogged([3, x.shape[0], 8])
        found = x.shape[0] in seq
        for v in seq:
            if v == 3:
                break
        pairs = list(zip(seq, [0]))
        return x + found + v, pairs, list(seq.reads)

    compiled = compile_eager(fn)
    for n in (4, 4, 7):
        x = torch.randn(n)
        expected, actual = ReadsLogged([3, n, 8]), ReadsLogged([3, n, 8])
        assert_same(compiled(x, actual), fn(x, expected))
        assert actual.reads == expected.reads


def test_id_of_one_object_is_stable():
    def fn(x):
        a, d = [1], {}
        return x + (id(a) == id(a)) + (id(d) == id(d)) + (id(a) == id(d))

    x = torch.randn(3)
    assert_same(compile_eager(fn)(x), fn(x))


@pytest.mark.parametrize("start", ["", b""])
def test_sum_refuses_a_string_start(start):
    def fn(x):
        return x, sum([start], start)

    x = torch.randn(3)
    with pytest.raises(TypeError) as eager:
        fn(x)
    with pytest.raises(TypeError) as compiled:
        compile_eager(fn)(x)
    assert str(compiled.value) == str(eager.value)


def test_a_key_that_changes_the_list_being_sorted_raises():
    def fn(x):
        items = [3, 1, 2]

        def key(v):
            items.append(v)
            return v

        items.sort(key=key)
        return x

    x = torch.randn(3)
    with pytest.raises(ValueError) as eager:
        fn(x)
    with pytest.raises(ValueError) as compiled:
        compile_eager(fn)(x)
    assert str(compiled.value) == str(eager.value)


def test_size_arithmetic_stays_a_size_when_dynamic():
    def fn(x):
        return x.shape + (2,), (2,) + x.shape, x.shape * 2

    compiled = compile_eager(fn)
    for n in (3, 4, 5):
        x = torch.randn(n)
        assert_same(compiled(x), fn(x))


class WithSlots:
    __slots__ = ("a",)
    shared = 5


@pytest.mark.parametrize("name", ["b", "shared"])
def test_setting_an_attribute_outside_slots_raises(name):
    def fn(x):
        setattr(WithSlots(), name, 3)
        return x

    x = torch.randn(3)
    with pytest.raises(AttributeError) as eager:
        fn(x)
    with pytest.raises(AttributeError) as compiled:
        compile_eager(fn)(x)
    assert str(compiled.value) == str(eager.value)


def test_a_slot_reads_back_what_was_stored():
    def fn(x):
        s = WithSlots()
        s.a = 3
        return x + s.a

    x = torch.randn(3)
    assert_same(compile_eager(fn)(x), fn(x))


class Protocols:
    """Special methods returning what CPython checks or converts."""

    def __init__(self, kind):
        self.kind = kind

    def __len__(self):
        return 2**70 + self.kind

    def __iter__(self):
        return [1, 2]

    def __contains__(self, item):
        return [item] if self.kind else 0


def test_protocol_results_are_checked_as_cpython_checks_them():
    # `in` is a bool whatever __contains__ returns; iter() refuses a non-iterator from
    # __iter__; len() refuses a length past sys.maxsize.
    def fn(x):
        out = [x.shape[0] in Protocols(1), x.shape[0] in Protocols(0), 3 not in Protocols(1)]
        for attempt in (lambda: list(Protocols(1)), lambda: len(Protocols(1)), lambda: len(Protocols(x.shape[0]))):
            try:
                attempt()
            except (TypeError, OverflowError) as e:
                out.append(str(e))
        return x, out

    compiled = compile_eager(fn)
    for n in (3, 3, 5):
        x = torch.randn(n)
        assert_same(compiled(x), fn(x))
