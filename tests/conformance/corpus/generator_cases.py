"""Generators and iterators: CPython's test_generators / test_generator_stop / test_iter /
test_range behaviours (lazy evaluation, send, return values through StopIteration, yield from,
closing, exhaustion, the iterator protocol of user classes, iter(callable, sentinel), range
arithmetic and slicing) and dynamo's test_generator (generators over tensors, consumed inside
and outside the compiled frame), in compiled code."""

import torch

from . import snippets

NS = {"torch": torch}

GENERATORS = [
    ("simple_list", "def gen():\n    yield 1\n    yield 2\nreturn x, list(gen())"),
    ("tensor_yields_sum", "def gen(t):\n    for i in range(3):\n        yield t * i\nreturn sum(gen(x))"),
    ("next_calls", "def gen():\n    yield 1\n    yield 2\ng = gen()\na = next(g)\nb = next(g)\nreturn x + a * 10 + b"),
    ("next_default_on_exhausted", "def gen():\n    yield 1\ng = gen()\nnext(g)\nreturn x + next(g, -5)"),
    ("stopiteration_raised", "def gen():\n    yield 1\ng = gen()\nnext(g)\nnext(g)\nreturn x"),
    ("stopiteration_caught", "def gen():\n    yield 1\ng = gen()\nnext(g)\ntry:\n    next(g)\nexcept StopIteration:\n    return x - 1\nreturn x"),
    ("return_value_in_stopiteration", "def gen():\n    yield 1\n    return 7\ng = gen()\nnext(g)\ntry:\n    next(g)\nexcept StopIteration as e:\n    return x + e.value\nreturn x"),
    ("yield_from_list", "def gen():\n    yield from [1, 2]\n    yield 3\nreturn x, list(gen())"),
    ("yield_from_generator_return_value", "def inner():\n    yield 1\n    return 10\ndef outer():\n    v = yield from inner()\n    yield v\nreturn x, list(outer())"),
    ("send_values", "def acc():\n    total = 0\n    while True:\n        v = yield total\n        total += v\ng = acc()\nnext(g)\ng.send(2)\nr = g.send(3)\nreturn x + r"),
    ("send_non_none_to_fresh_raises", "def gen():\n    yield 1\ng = gen()\ng.send(5)\nreturn x"),
    ("generator_expression_lazy", "calls = []\ng = (calls.append(i) or i for i in range(3))\nfirst = next(g)\nreturn x + len(calls), first"),
    ("generator_expression_sum_tensors", "return sum(x * i for i in range(4))"),
    ("generator_in_any", "return x + any(v > 2 for v in [1, 2, 3])"),
    ("generator_closure_over_tensor", "def gen():\n    for i in range(2):\n        yield x + i\nreturn list(gen())"),
    ("generator_exhausted_twice", "def gen():\n    yield 1\ng = gen()\na = list(g)\nb = list(g)\nreturn x + len(a) + len(b)"),
    ("generator_close", "def gen():\n    yield 1\n    yield 2\ng = gen()\nnext(g)\ng.close()\nreturn x + next(g, 9)"),
    ("generator_finally_on_close", "log = []\ndef gen():\n    try:\n        yield 1\n    finally:\n        log.append('closed')\ng = gen()\nnext(g)\ng.close()\nreturn x + len(log)"),
    ("generator_throw_caught_inside", "def gen():\n    try:\n        yield 1\n    except ValueError:\n        yield 2\ng = gen()\nnext(g)\nr = g.throw(ValueError)\nreturn x + r"),
    ("generator_throw_propagates", "def gen():\n    yield 1\ng = gen()\nnext(g)\ng.throw(KeyError('k'))\nreturn x"),
    ("generator_raise_stopiteration_becomes_runtimeerror", "def gen():\n    yield 1\n    raise StopIteration\nreturn x, list(gen())"),
    ("generator_zip_two", "def a():\n    yield from range(3)\ndef b():\n    yield from 'xy'\nreturn x, list(zip(a(), b()))"),
    ("generator_enumerate", "def gen():\n    yield 'a'\n    yield 'b'\nreturn x, list(enumerate(gen()))"),
    ("generator_infinite_islice", "import itertools\ndef nat():\n    n = 0\n    while True:\n        yield n\n        n += 1\nreturn x, list(itertools.islice(nat(), 4))"),
    ("generator_state_after_partial", "def gen():\n    for i in range(5):\n        yield i\ng = gen()\nfor v in g:\n    if v == 2:\n        break\nreturn x, list(g)"),
    ("generator_returned_to_caller", "def gen():\n    yield x + 1\n    yield x + 2\nreturn gen()"),
    ("generator_of_tensor_rows", "def rows(t):\n    for r in t:\n        yield r.sum()\nreturn torch.stack(list(rows(x.reshape(2, -1))))"),
    ("generator_input_consumed", "return sum(g)", {"params": "g", "make_args": lambda n: ((torch.randn(n) for _ in range(3)),)}),
    ("generator_input_partially_consumed", "first = next(g)\nreturn first * 2", {"params": "g", "make_args": lambda n: (iter([torch.randn(n), torch.randn(n)]),)}),
    ("generator_nested_yield_from_tensors", "def inner(t):\n    yield t\n    yield t * 2\ndef outer(t):\n    yield from inner(t)\n    yield from inner(t + 1)\nreturn torch.stack(list(outer(x)))"),
    ("generator_yield_inside_with", "import contextlib\n@contextlib.contextmanager\ndef cm():\n    yield 3\ndef gen():\n    with cm() as v:\n        yield v\nreturn x + sum(gen())"),
    ("generator_gi_running_state", "def gen():\n    yield 1\ng = gen()\nreturn x + (g.gi_frame is not None)"),
    ("generator_send_tensor", "def scale():\n    t = yield\n    while True:\n        t = yield t * 2\ng = scale()\nnext(g)\nreturn g.send(x)"),
    ("generator_map_filter", "return x, list(map(lambda v: v * 2, filter(lambda v: v % 2, range(6))))"),
    ("generator_yield_expression_value_none", "def gen():\n    r = yield 1\n    yield r\ng = gen()\nnext(g)\nreturn x, next(g)"),
]
snippets("cpython/test_generators", "generators", GENERATORS, namespace=NS)
snippets("dynamo/test_generator", "generator_tensors", [
    ("accumulate_in_loop", "def gen(t):\n    while True:\n        t = t * 2\n        yield t\ng = gen(x)\nout = [next(g) for _ in range(3)]\nreturn torch.cat(out)"),
    ("generator_with_graph_break", "def gen(t):\n    yield t.sin()\n    print('between')\n    yield t.cos()\nreturn sum(gen(x))"),
    ("generator_list_of_layers", "layers = [torch.nn.functional.relu, torch.tanh, torch.sigmoid]\ndef apply(t):\n    for f in layers:\n        t = f(t)\n        yield t\nreturn list(apply(x))[-1]"),
    ("generator_early_return", "def gen(t):\n    yield t\n    return\n    yield t * 2\nreturn list(gen(x))"),
    ("generator_with_try_finally_tensor", "def gen(t):\n    try:\n        yield t + 1\n    finally:\n        pass\nreturn next(gen(x))"),
    ("generator_zip_tensors", "def gen(t):\n    yield from t.unbind(0)\nreturn [a * b for a, b in zip(gen(x), gen(x.flip(0)))]"),
    ("generator_dict_from_pairs", "def pairs(t):\n    yield 'a', t\n    yield 'b', t * 2\nreturn dict(pairs(x))"),
    ("generator_sum_start", "return sum((x * i for i in range(3)), x)"),
    ("generator_max_of_sizes", "return x + max(d for d in (x.shape[0], 5, 3))"),
    ("generator_sorted", "return x, sorted(v % 3 for v in range(7))"),
], namespace=NS)


class Countdown:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return self.n


class OnlyGetitem:
    def __getitem__(self, i):
        if i >= 3:
            raise IndexError
        return i * 10


NS.update(Countdown=Countdown, OnlyGetitem=OnlyGetitem)

ITER = [
    ("iter_list_next", "it = iter([1, 2])\nreturn x + next(it) + next(it)"),
    ("iter_exhausted_raises", "it = iter([])\nreturn x + next(it)"),
    ("iter_of_iter_is_same", "it = iter([1])\nreturn x + (iter(it) is it)"),
    ("user_iterator_class", "return x, list(Countdown(3))"),
    ("user_iterator_for_loop_tensor", "for i in Countdown(3):\n    x = x + i\nreturn x"),
    ("getitem_sequence_protocol", "return x, list(OnlyGetitem())"),
    ("iter_callable_sentinel", "vals = [3, 2, 1, 0, 5]\nit = iter(vals.pop, 0)\nreturn x, list(it)"),
    ("iter_dict_keys", "it = iter({'a': 1, 'b': 2})\nreturn x, next(it)"),
    ("iter_string", "return x, list(iter('ab'))"),
    ("iter_tensor_rows", "it = iter(x.reshape(2, -1))\nreturn next(it) + next(it)"),
    ("iter_non_iterable_raises", "return x, iter(5)"),
    ("next_on_list_raises", "return x, next([1])"),
    ("reversed_range", "return x, list(reversed(range(4)))"),
    ("reversed_user_seq_needs_len", "return x, list(reversed(OnlyGetitem()))"),
    ("enumerate_start", "return x, list(enumerate('ab', start=-1))"),
    ("zip_shortest", "return x, list(zip('abc', [1, 2]))"),
    ("zip_no_args", "return x, list(zip())"),
    ("map_multiple_iterables", "return x, list(map(lambda a, b: a * b, [1, 2, 3], [4, 5]))"),
    ("filter_none_truthiness", "return x, list(filter(None, [0, 1, '', 'a', None]))"),
    ("unpack_iterator", "a, b, *c = iter(range(5))\nreturn x + a + b, c"),
    ("in_operator_consumes_iterator", "it = iter([1, 2, 3, 4])\nfound = 2 in it\nreturn x + found, list(it)"),
    ("list_of_map_object_twice", "m = map(abs, [-1, -2])\nreturn x, list(m), list(m)"),
    ("sum_of_iterator", "return x + sum(iter([1, 2, 3]))"),
    ("max_of_empty_raises", "return x + max(iter([]))"),
    ("max_of_empty_default", "return x + max(iter([]), default=3)"),
    ("iter_over_tensor_elements_count", "n = 0\nfor _ in x:\n    n += 1\nreturn x + n"),
    ("enumerate_tensor", "out = x * 0\nfor i, v in enumerate(x):\n    out[i] = v * i\nreturn out"),
    ("zip_tensor_and_list", "return [v * w for v, w in zip(x, [1, 2, 3])]"),
    ("iter_of_shape", "return x, list(iter(x.shape))"),
    ("iterator_length_hint_from_list", "import operator\nit = iter([1, 2, 3])\nnext(it)\nreturn x + operator.length_hint(it)"),
]
snippets("cpython/test_iter", "iter", ITER, namespace=NS)

RANGE = [
    ("len", "return x + len(range(3, 20, 4))"),
    ("len_negative_step", "return x + len(range(10, 0, -3))"),
    ("empty_range", "return x + len(range(5, 2)) + bool(range(0))"),
    ("index", "return x + range(0, 20, 5).index(15)"),
    ("index_missing_raises", "return x + range(0, 20, 5).index(3)"),
    ("count", "return x + range(10).count(3) + range(10).count(11)"),
    ("contains", "r = range(0, 10, 2)\nreturn x + (4 in r) + (5 in r) + (10 in r)"),
    ("getitem_negative", "return x + range(10)[-1]"),
    ("getitem_out_of_range_raises", "return x + range(3)[5]"),
    ("slice_gives_range", "r = range(10)[2:8:2]\nreturn x + len(r), r"),
    ("reversed_slice", "return x, range(5)[::-1]"),
    ("equality_by_content", "return x + (range(0) == range(2, 1)) + (range(0, 3, 2) == range(0, 4, 2))"),
    ("attributes", "r = range(1, 9, 3)\nreturn x + r.start + r.stop + r.step"),
    ("zero_step_raises", "return x + len(range(0, 5, 0))"),
    ("float_argument_raises", "return x + len(range(2.0))"),
    ("range_of_size", "return x + len(range(0, x.shape[0], 2))"),
    ("range_of_size_sum", "return x + sum(range(x.shape[0]))"),
    ("range_of_size_list", "return x, list(range(x.shape[0] - 2, x.shape[0]))"),
    ("range_index_by_size", "return x + range(100)[x.shape[0]]"),
    ("range_negative_values", "return x, list(range(-3, 3, 2))"),
    ("range_loop_mutating_tensor", "y = x.clone()\nfor i in range(0, x.shape[0], 2):\n    y[i] = 0\nreturn y"),
    ("range_large_len", "return x + (len(range(0, 10**6, 7)) % 10)"),
    ("range_iter_next", "it = iter(range(3))\nnext(it)\nreturn x + next(it)"),
    ("range_hash_equal", "return x + (hash(range(0)) == hash(range(3, 3)))"),
    ("range_in_zip_with_tensor", "return [t * i for i, t in zip(range(10), x.unbind(0))]"),
]
snippets("cpython/test_range", "range", RANGE, namespace=NS)
