"""Iterators and the containers they run over, as CPython's test_iter checks them (recast in
our own words; dynamo's cpython/ port of it guided the choice): a generator expression's first
iterable evaluated when it is made, list iterators that see appends and then stay exhausted,
reversed() reading the list live, map/zip over lists that grow, dicts and sets changing size
mid-loop, lists grown or shrunk while enumerated, sort with a key that mutates the list,
generators whose finally returns, send after throw, unpacking a generator with too many items
(one item past the count at most is asked for), any() stopping early, iter(callable, sentinel),
and chained generators pulling one item at a time."""

import torch

from . import snippets

CASES = [
    ("genexpr_first_iterable_eager", "try:\n    g = (v for v in 5)\nexcept TypeError:\n    return x, 'at creation'\nreturn x, 'later'"),
    ("iter_list_sees_append", "l = [1, 2]\nit = iter(l)\nnext(it)\nl.append(3)\nreturn x, list(it)"),
    ("map_sees_list_mutation", "l = [1, 2]\nm = map(lambda v: v * 2, l)\nl.append(5)\nreturn x, list(m)"),
    ("zip_sees_append", "a = [1, 2]\nb = [3, 4, 5]\nz = zip(a, b)\na.append(9)\nreturn x, list(z)"),
    ("dict_changed_size_during_iteration", "d = {'a': 1}\nfor k in d:\n    d['b'] = 2\nreturn x"),
    ("dict_changed_size_caught", "d = {'a': 1}\ntry:\n    for k in d:\n        d[k + 'x'] = 2\nexcept RuntimeError as e:\n    return x, str(e), d\nreturn x, d"),
    ("enumerate_list_grows", "l = [1, 2]\nfor i, v in enumerate(l):\n    if i < 3:\n        l.append(v * 10)\nreturn x, l"),
    ("sort_key_mutates_list", "l = [3, 1, 2]\ndef key(v):\n    l.append(0)\n    return v\ntry:\n    l.sort(key=key)\nexcept ValueError as e:\n    return x, str(e)\nreturn x, l"),
    ("sorted_key_raises", "try:\n    sorted([1, 'a'], key=lambda v: v + 1)\nexcept TypeError:\n    return x, 'raised'\nreturn x"),
    ("generator_finally_return_overrides", "def g():\n    try:\n        yield 1\n    finally:\n        return 5\ngen = g()\nnext(gen)\ntry:\n    next(gen)\nexcept StopIteration as e:\n    return x, e.value"),
    ("generator_send_after_throw", "def g():\n    while True:\n        try:\n            v = yield\n            yield v * 2\n        except ValueError:\n            yield 'handled'\ngen = g()\nnext(gen)\na = gen.throw(ValueError)\nnext(gen)\nb = gen.send(3)\nreturn x, a, b"),
    ("generator_gi_running_and_frame", "def g():\n    yield 1\ngen = g()\na = gen.gi_running\nnext(gen)\nlist(gen)\nreturn x, a, gen.gi_frame is None"),
    ("list_iterator_exhausted_then_append", "l = [1]\nit = iter(l)\nlist(it)\nl.append(2)\nreturn x, list(it)"),
    ("reversed_list_sees_setitem", "l = [1, 2, 3]\nr = reversed(l)\nl[0] = 9\nreturn x, list(r)"),
    ("set_changed_size_during_iteration", "s = {1, 2}\ntry:\n    for v in s:\n        s.add(v + 10)\nexcept RuntimeError as e:\n    return x, str(e)\nreturn x, s"),
    ("dict_values_iter_mutation_same_size", "d = {'a': 1, 'b': 2}\nout = []\nfor k, v in d.items():\n    d[k] = v * 10\n    out.append(v)\nreturn x, out, d"),
    ("del_list_item_while_iterating", "l = [1, 2, 3, 4]\nout = []\nfor v in l:\n    out.append(v)\n    if v == 2:\n        l.remove(v)\nreturn x, out, l"),
    ("tuple_unpack_from_generator_count_error", "def g():\n    yield 1\n    yield 2\n    yield 3\ntry:\n    a, b = g()\nexcept ValueError as e:\n    return x, str(e)\nreturn x"),
    ("star_unpack_from_map", "a, *b = map(lambda t: t * 2, [x, x + 1, x + 2])\nreturn a, b"),
    ("any_short_circuit_side_effects", "log = []\ndef check(v):\n    log.append(v)\n    return v > 1\nr = any(check(v) for v in [0, 2, 3, 4])\nreturn x, r, log"),
    ("next_on_list_raises", "return next([x])"),
    ("iter_callable_sentinel", "vals = [1, 2, 0, 3]\nit = iter(vals.pop, 2)\nreturn x, list(it), vals"),
    ("chained_generators_laziness", "log = []\ndef a():\n    for i in range(3):\n        log.append(('a', i))\n        yield i\ndef b(src):\n    for v in src:\n        log.append(('b', v))\n        yield v * 2\nout = next(b(a()))\nreturn x, out, log"),
    ("dict_iteration_order_after_delete_reinsert", "d = {'a': 1, 'b': 2, 'c': 3}\ndel d['a']\nd['a'] = 1\nreturn x, list(d), list(d.values())"),
    ("list_slice_of_generator_error", "def g():\n    yield 1\ntry:\n    return g()[0]\nexcept TypeError as e:\n    return x, str(e)"),
]
snippets("cpython/test_iter", "iter2", CASES, namespace={"torch": torch})
