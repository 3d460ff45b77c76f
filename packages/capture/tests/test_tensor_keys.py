"""Tensors as dict keys and set members, by identity as torch hashes them (`{t: 1}[t]`,
`t in {t}`), traced into one graph; an entry that told two input tensors apart is not used
for a call passing one tensor twice."""

import pytest
import torch

from helpers import cache_of, captures, check, check_across_sizes, compile_eager, run_and_compare


def lookup_by_tensor(x, y):
    d = {x: 1, y: x * 2}
    d[x + 1] = 3
    return x * d[x] + d[y], len(d), x in d, (x * 2) in d


def set_of_tensors(x, y):
    s = {x, y}
    s.add(x)
    z = x + y
    return x * (x in s) + y * (z in s), len(s), len({x, x, z})


def tensors_as_keys_in_a_loop(x, y):
    counts = {}
    for t in (x, y, x, x):
        counts[t] = counts.get(t, 0) + 1
    return [t * n for t, n in counts.items()]


def returned_dict_keyed_by_tensors(x, y):
    return {x: y.sin(), y * 2: x}


@pytest.mark.parametrize("fn", [lookup_by_tensor, set_of_tensors, tensors_as_keys_in_a_loop], ids=lambda f: f.__name__)
def test_traces_into_one_graph(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n), torch.randn(n)))


def test_a_returned_dict_keeps_its_tensor_keys():
    compiled = compile_eager(returned_dict_keyed_by_tensors, fullgraph=True)
    x, y = torch.randn(3), torch.randn(3)
    got, expected = compiled(x, y), returned_dict_keyed_by_tensors(x, y)
    assert x in got and y not in got
    for (gk, gv), (ek, ev) in zip(got.items(), expected.items()):
        torch.testing.assert_close((gk, gv), (ek, ev))


def test_one_tensor_passed_twice_is_one_key():
    compiled = compile_eager(lookup_by_tensor, fullgraph=True)
    x, y = torch.randn(3), torch.randn(3)
    run_and_compare(compiled, lookup_by_tensor, (x, y))
    # Eager's dict then has one key fewer: the entry for two tensors must not serve this call.
    assert compiled(x, x)[1] == lookup_by_tensor(x, x)[1]
    torch.testing.assert_close(compiled(x, x)[0], lookup_by_tensor(x, x)[0])


def lookup_in_dict_passed_in(d, xs):
    return [d[x]["a"] * x for x in xs], len(d)


def make_dict_keyed_by_tensors(n):
    xs = [torch.randn(n) for _ in range(3)]
    return {x: {"a": torch.randn(n)} for x in xs}, xs


def test_a_dict_passed_in_keyed_by_tensors_traces_into_one_graph():
    compiled = check(lookup_in_dict_passed_in, lambda: make_dict_keyed_by_tensors(3), fullgraph=True)
    source = cache_of(compiled).entries[0].guard.source
    # Its keys are named by position and are the tensors the function receives elsewhere.
    assert "list(L['d'].keys())[0] is L['xs'][0]" in source


def test_a_dict_passed_in_keyed_by_other_tensors_recaptures():
    compiled = compile_eager(lookup_in_dict_passed_in, fullgraph=True)
    d, xs = make_dict_keyed_by_tensors(3)
    run_and_compare(compiled, lookup_in_dict_passed_in, (d, xs))
    # The same keys in another order: each lookup must find its own entry.
    swapped = dict(reversed(list(d.items())))
    run_and_compare(compiled, lookup_in_dict_passed_in, (swapped, xs))
    assert captures(compiled) == 2


def test_a_tensor_missing_from_a_dict_passed_in():
    def fn(d, x, y):
        return x in d, y in d, d.get(y, 0) + x

    compiled = compile_eager(fn, fullgraph=True)
    x, y = torch.randn(3), torch.randn(3)
    run_and_compare(compiled, fn, ({x: 1}, x, y))
    # Now `y` is the key: the entry that found it missing must not answer.
    run_and_compare(compiled, fn, ({y: 1}, y, y))


def test_a_dict_passed_in_keyed_by_tensors_is_mutated_in_place():
    def fn(d, x, y):
        d[x] = d[x] + 1
        d[y] = y * 2
        return len(d)

    compiled = compile_eager(fn, fullgraph=True)
    x, y = torch.randn(3), torch.randn(3)
    d = {x: torch.zeros(3)}
    assert compiled(d, x, y) == 2
    assert list(d) == [x, y] and list(d)[0] is x
    torch.testing.assert_close(d[x], torch.ones(3))
    torch.testing.assert_close(d[y], y * 2)


def test_input_tensors_used_as_keys_are_kept_distinct_by_one_guard():
    # An optimizer's first step uses each parameter as a key: pairwise guards would be
    # quadratic in the number of parameters.
    def fn(xs):
        counts = {}
        for x in xs:
            counts[x] = x * 2
        return len(counts)

    compiled = compile_eager(fn, fullgraph=True)
    xs = [torch.randn(2) for _ in range(20)]
    assert compiled(xs) == 20
    source = cache_of(compiled).entries[0].guard.source
    assert source.count("are distinct objects") == 1
    # Two of them the same object: another entry, with eager's answer.
    assert compiled([*xs[:19], xs[0]]) == 19
