"""Answers about the identity of two inputs: `a is b`, `id(a) == id(b)`, one used as a dict key
and the other looked up, `in` a list of them. An entry that found two inputs to be different
objects must not serve a later call that passes one object twice (nor the reverse): each
program runs with (a, b), then (a, a), then (b, b), against eager every time."""

from __future__ import annotations

import pytest
import torch

from helpers import assert_same, captures, compile_eager


class Plain:
    pass


def is_same(x, a, b):
    return x + (1 if a is b else 0)


def is_not(x, a, b):
    return x * (2 if a is not b else 3)


def same_id(x, a, b):
    return x + (1 if id(a) == id(b) else 0)


def id_as_key(x, a, b):
    seen = {id(a): 1}
    return x + (seen.get(id(b)) or 0)


def object_as_key(x, a, b):
    seen = {a: 1}
    return x + seen.get(b, 0)


def found_in_list(x, a, b):
    # `in` tries identity before ==; objects without __eq__ compare by identity only.
    return x + (1 if b in [a] else 0)


PROGRAMS = [is_same, is_not, same_id, id_as_key, object_as_key, found_in_list]
KINDS = {
    "object": Plain,
    "list": list,
    "dict": dict,
    "tensor": lambda: torch.randn(1),  # one element: `b in [a]` may ask `b == a` for its truth
}
# Lists and dicts are unhashable: a dict key or a set member would be the program's TypeError.
HASHABLE = {"object", "tensor"}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda fn: fn.__name__)
def test_identity_answers_hold_when_inputs_alias_on_a_later_call(program, kind):
    if program is object_as_key and kind not in HASHABLE:
        pytest.skip("unhashable keys")
    make = KINDS[kind]
    compiled = compile_eager(program)
    a, b = make(), make()
    for first, second in ((a, b), (a, a), (b, b), (b, a)):
        x = torch.randn(3)
        assert_same(compiled(x, first, second), program(x, first, second))


class _TiedOrNot(torch.nn.Module):
    def __init__(self, tied):
        super().__init__()
        self.a = torch.nn.Linear(3, 3)
        self.b = torch.nn.Linear(3, 3)
        if tied:
            self.b.weight = self.a.weight

    def forward(self, x):
        with torch.no_grad():
            self.a.weight.mul_(0.5)
        return self.b(x)


def test_tensor_inputs_seen_apart_stay_apart():
    # Untied weights first: a backend that functionalizes the graph (aot_autograd) orders the
    # in-place update of `a.weight` after the read of `b.weight`, right only while they are two
    # tensors. Tied weights on a later call must capture again.
    compiled = compile_eager(lambda m, x: m(x))
    for tied in (False, True, False, True):
        torch.manual_seed(0)
        module, expected_module = _TiedOrNot(tied), _TiedOrNot(tied)
        expected_module.load_state_dict(module.state_dict())
        if tied:
            expected_module.b.weight = expected_module.a.weight
        x = torch.randn(2, 3)
        assert_same(compiled(module, x), expected_module(x))
    assert captures(compiled) == 2


def test_tensor_inputs_of_a_graph_that_writes_none_may_alias_later():
    # Only a write makes aliasing matter; reading the same tensor twice computes the same.
    def fn(a, b):
        return a * 2 + b

    compiled = compile_eager(fn)
    a, b = torch.randn(3), torch.randn(3)
    assert_same(compiled(a, b), fn(a, b))
    assert_same(compiled(a, a), fn(a, a))
    assert captures(compiled) == 1


def test_tensor_inputs_of_a_graph_that_writes_one_through_a_view_stay_apart():
    def fn(a, b):
        a[0].add_(1)
        return b * 2

    compiled = compile_eager(fn)
    for same in (False, True):
        a = torch.zeros(3)
        b = a if same else torch.zeros(3)
        expected_a = torch.zeros(3)
        expected_b = expected_a if same else torch.zeros(3)
        assert_same(compiled(a, b), fn(expected_a, expected_b))
    assert captures(compiled) == 2


def write_first_read_second(a, b):
    a.add_(1)
    return b * 2


def foreach_write_first_read_second(a, b):
    # a foreach op writes its list's items (the fakes' version counters must show it)
    torch._foreach_add_([a], [torch.ones_like(a)])
    return b * 2


def _overlapping(buffer):
    return buffer[:4], buffer[2:6]


@pytest.mark.parametrize(
    "calls",
    [
        [lambda: (torch.randn(4), torch.randn(4)), lambda: _overlapping(torch.randn(8))],
        [lambda: _overlapping(torch.randn(8)), lambda: (torch.randn(4), torch.randn(4))],
        [lambda: _overlapping(torch.randn(8)), lambda: (lambda x: (x[:4], x[:4].clone()))(torch.randn(8))],
    ],
    ids=["apart then overlapping", "overlapping then apart", "overlapping then one apart"],
)
@pytest.mark.parametrize("program", [write_first_read_second, foreach_write_first_read_second], ids=["add_", "foreach"])
def test_a_graph_writing_an_input_holds_only_while_inputs_share_memory_as_at_capture(calls, program):
    """A functionalizing backend reads its inputs as independent values: an entry captured
    with inputs apart must not serve views of one buffer, where the write shows through the
    other (nor the reverse), and it pays no guard where the graph writes no input."""
    compiled = compile_eager(program)
    for make in [calls[0], calls[0], calls[1], calls[1]]:
        ours = make()
        expected_inputs = _clone_sharing(ours)
        assert_same(compiled(*ours), program(*expected_inputs))
        for actual, expected in zip(ours, expected_inputs):
            assert_same(actual, expected)
    assert captures(compiled) == 2


def _clone_sharing(tensors):
    """Copies of `tensors` that share memory as they do (views of one cloned buffer)."""
    bases = {}
    copies = []
    for t in tensors:
        base = t._base if t._base is not None else t
        copy = bases.setdefault(id(base), base.clone())
        copies.append(copy.as_strided(t.shape, t.stride(), t.storage_offset()))
    return tuple(copies)


def test_an_id_kept_by_an_earlier_call_is_found_again():
    """A cache keyed by `id(obj)` that outlives the call (`cache[id(x)] = ...`): a later call
    bringing the same object finds the entry, as in eager, for objects and tensors alike
    (the lookup runs natively there: no guard can say it is the same object)."""

    class Key:
        pass

    for keys in ([Key(), Key()], [torch.ones(1), torch.ones(1)]):
        cache: dict = {}

        def cached_scale(x, key, cache=cache):
            if id(key) in cache:
                return x * cache[id(key)]
            cache[id(key)] = 5.0
            return x

        compiled, eager_cache = compile_eager(cached_scale), {}
        for i in range(5):
            x = torch.randn(3)
            assert_same(compiled(x, keys[i % 2]), cached_scale(x, keys[i % 2], eager_cache))
