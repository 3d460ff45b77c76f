"""Builtins as CPython's test_builtin and test_genexps check them, in corners earlier rounds left
(recast in our own words), with sizes and tensors as the values: iter(callable, sentinel),
zip(strict=True), map over several iterables, reversed through __reversed__ or the sequence
protocol, sorted's stability and key/reverse, min/max's key/default and errors, next's default,
generator expressions (the first iterable evaluated at once, the rest late; a generator stopping
early leaves its source where it stopped), and the messages the failing ones raise.
"""

import bisect
import collections
import copy
import heapq
import itertools
import operator
import random

import torch

from .round5_support import sampled_snippets

SOURCE = "cpython/test_builtin"
SOURCE_GENEXPS = "cpython/test_genexps"


class Countdown:
    """A callable for iter(callable, sentinel)."""

    def __init__(self, n):
        self.n = n

    def __call__(self):
        self.n -= 1
        return self.n


class Backwards:
    def __init__(self, items):
        self.items = items

    def __reversed__(self):
        return iter(self.items[::2])

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class SeqOnly:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


NS = {
    "torch": torch,
    "itertools": itertools,
    "Countdown": Countdown,
    "Backwards": Backwards,
    "SeqOnly": SeqOnly,
    "bisect": bisect,
    "collections": collections,
    "copy": copy,
    "heapq": heapq,
    "operator": operator,
    "random": random,
}

BUILTINS = [
    ("iter_callable_sentinel", "c = Countdown(x.shape[0])\nvals = list(iter(c, 1))\nreturn x, vals, c.n"),
    ("iter_callable_sentinel_tensor_rows", "rows = iter(x)\nnext_row = lambda: float(next(rows, torch.tensor(-99.0)))\nreturn x, list(iter(next_row, -99.0))"),
    ("zip_strict_equal", "return list(zip(x, x.flip(0), strict=True))"),
    ("zip_strict_unequal", "try:\n    list(zip(x, x[1:], strict=True))\nexcept ValueError as e:\n    return x, str(e)"),
    ("zip_strict_first_shorter", "try:\n    list(zip(range(2), x, strict=True))\nexcept ValueError as e:\n    return x, str(e)"),
    ("zip_stops_at_shortest_consumes", "it = iter(range(x.shape[0]))\npairs = list(zip(it, 'ab'))\nreturn x, pairs, list(it)"),
    ("map_several_iterables", "return list(map(lambda a, b, c: a * b + c, x, x.flip(0), range(x.shape[0])))"),
    ("map_builtin_pow_three", "return x, list(map(pow, range(x.shape[0]), [2] * x.shape[0], [5] * x.shape[0]))"),
    ("filter_none_keeps_truthy", "vals = [0, x.shape[0], '', 'a', None, [], [0]]\nreturn x, list(filter(None, vals))"),
    ("reversed_custom_method", "b = Backwards(list(range(x.shape[0])))\nreturn x, list(reversed(b))"),
    ("reversed_sequence_protocol", "s = SeqOnly(list(range(x.shape[0])))\nreturn x, list(reversed(s))"),
    ("reversed_range_and_dict", "d = {'a': 1, 'b': x.shape[0]}\nreturn x, list(reversed(range(x.shape[0]))), list(reversed(d)), list(reversed(d.items()))"),
    ("reversed_not_reversible", "try:\n    reversed({1, 2})\nexcept TypeError as e:\n    return x, str(e)"),
    ("sorted_stable_with_key", "pairs = [(i % 2, i) for i in range(x.shape[0])]\nreturn x, sorted(pairs, key=lambda p: p[0]), sorted(pairs, key=lambda p: p[0], reverse=True)"),
    ("sorted_tensors_by_sum", "rows = list(x.view(-1, 1).unbind(0))\nreturn torch.stack(sorted(rows, key=lambda r: float(r.sum())))"),
    ("sorted_mixed_types_raises", "try:\n    sorted([1, 'a', x.shape[0]])\nexcept TypeError as e:\n    return x, str(e)"),
    ("min_max_key_default", "n = x.shape[0]\nreturn x, max([], default=n), min((), default=None), max(range(n), key=lambda i: (i % 3, -i)), min('hello', key=ord)"),
    ("max_empty_raises", "try:\n    max([])\nexcept ValueError as e:\n    return x, str(e)"),
    ("max_default_with_args_raises", "try:\n    max(1, 2, default=x.shape[0])\nexcept TypeError as e:\n    return x, str(e)"),
    ("next_default_and_stop", "it = iter(x[:2])\na, b = next(it), next(it)\nc = next(it, 'done')\ntry:\n    next(it)\nexcept StopIteration as e:\n    return a + b, c, e.args"),
    ("next_on_non_iterator_raises", "try:\n    next([x])\nexcept TypeError as e:\n    return x, str(e)"),
    ("sum_start_and_types", "n = x.shape[0]\nreturn x, sum([[1], [n]], []), sum(range(n), 0.5), sum([True, True, n]), type(sum([])).__name__"),
    ("divmod_round_edges", "n = x.shape[0]\nreturn x, divmod(-n, 3), divmod(n, -3), divmod(-n / 2, 2), round(n / 2), round(2.5), round(-n * 1.5), round(n, -1)"),
    ("int_float_conversions", "n = x.shape[0]\nreturn x, int(str(n) * 2), int('0x1f', 16), int(' -7 '), float('1e3'), int(-n / 2), int(n * 2.9)"),
    ("int_from_bad_string_raises", "try:\n    int('4.0')\nexcept ValueError as e:\n    return x, str(e)"),
    ("enumerate_zip_nested", "return [(i, a + b) for i, (a, b) in enumerate(zip(x, x[1:]), start=10)]"),
    ("all_any_of_sizes_and_strings", "n = x.shape[0]\nreturn x, all([n, 'a', [0]]), any([0, '', n - n]), all(()), any(iter([]))"),
    ("isinstance_union_types", "n = x.shape[0]\nreturn x, isinstance(n, int | str), isinstance(x, torch.Tensor | None), isinstance(None, int | None), issubclass(bool, int | float)"),
    ("chained_itertools_of_tensors", "return torch.stack(list(itertools.chain(x[:2], itertools.islice(x, 1, None, 2))))"),
]
sampled_snippets(SOURCE, "r6_builtin", BUILTINS, namespace=NS)

GENEXPS = [
    ("first_iterable_evaluated_at_once", "src = [x, x * 2]\ng = (t + 1 for t in src)\nsrc = [x * 100]\nreturn list(g)"),
    ("later_iterables_late_bound", "outer = [1, 2]\ninner = [10]\ng = (a * b for a in outer for b in inner)\ninner = [100, 1000]\nreturn x, list(g)"),
    ("condition_late_bound", "k = 0\ng = (r for r in x if r > k)\nk = 100\nreturn list(g)"),
    ("genexp_stops_early_source_left", "it = iter(range(x.shape[0]))\ng = (i * 2 for i in it)\nfirst = next(g)\nreturn x, first, list(it)"),
    ("genexp_in_call_and_sum", "return sum(r * r for r in x), max(float(r) for r in x), tuple(i for i in range(x.shape[0]) if i % 2)"),
    ("genexp_exhausted_once", "g = (r * 2 for r in x)\na = list(g)\nb = list(g)\nreturn len(a), len(b)"),
    ("genexp_raises_inside", "g = (1 / (i - 2) for i in range(x.shape[0]))\nout = []\ntry:\n    for v in g:\n        out.append(v)\nexcept ZeroDivisionError as e:\n    return x, out, str(e), list(g)"),
    ("genexp_first_iterable_error_at_creation", "try:\n    g = (i for i in x.shape[0])\nexcept TypeError as e:\n    return x, str(e)"),
    ("genexp_send_none_and_close", "g = (r for r in x)\nfirst = g.send(None)\ng.close()\nreturn first, list(g)"),
    ("listcomp_scope_does_not_leak", "i = 'outer'\nvals = [i * 2 for i in range(x.shape[0])]\nreturn x, i, vals"),
    ("nested_comprehension_matrix", "n = x.shape[0]\nm = [[x[i] * j for j in range(3)] for i in range(n)]\nreturn torch.stack([torch.stack(row) for row in m])"),
    ("dict_and_set_comprehensions", "n = x.shape[0]\nd = {i: x[i] for i in range(n) if i % 2 == 0}\ns = {i % 3 for i in range(n)}\nreturn d, sorted(s)"),
]
sampled_snippets(SOURCE_GENEXPS, "r6_genexp", GENEXPS, namespace=NS)

ITERTOOLS = [
    ("count_starts_with_start_adds_step", "return x, list(itertools.islice(itertools.count(1, 0.5), 3)), list(itertools.islice(itertools.count(0, 0.1), 11)), list(zip(itertools.count(x.shape[0], 0.1), 'abc'))"),
    ("count_step_from_size", "c = itertools.count(step=x.shape[0])\nreturn x, next(c), next(c), [next(c) for _ in range(2)]"),
    ("groupby_groups_invalidated", "groups = itertools.groupby([1, 1, 2, 3, 3, x.shape[0]])\nk1, g1 = next(groups)\nk2, g2 = next(groups)\nreturn x, k1, list(g1), k2, list(g2), [(k, len(list(g))) for k, g in groups]"),
    ("tee_independent", "a, b = itertools.tee(iter(range(x.shape[0])))\nnext(a)\nreturn x, list(a), list(b)"),
    ("takewhile_consumes_failing_item", "it = iter(range(x.shape[0]))\ntaken = list(itertools.takewhile(lambda v: v < 2, it))\nreturn x, taken, list(it)"),
    ("islice_leaves_rest", "it = iter(range(x.shape[0]))\nfirst = list(itertools.islice(it, 2))\nreturn x, first, next(it)"),
    ("accumulate_initial_and_func", "return x, list(itertools.accumulate(range(1, x.shape[0]), lambda a, b: a * b, initial=1)), list(itertools.accumulate([3, 1, x.shape[0]], max))"),
    ("zip_longest_and_starmap", "return x, list(itertools.zip_longest('ab', range(x.shape[0]), fillvalue='-')), list(itertools.starmap(pow, [(2, x.shape[0]), (3, 2)]))"),
    ("compress_and_dropwhile", "return x, list(itertools.compress('abcdefg', [1, 0, x.shape[0] > 5, 1])), list(itertools.dropwhile(lambda v: v < 3, [1, 4, 2, x.shape[0]]))"),
    ("loop_break_then_zip_same_iterator", "it = iter([1, 2, 3, 4, 5, 6, 7][: x.shape[0]])\nfor v in it:\n    if v == 2:\n        break\nreturn x, list(zip(it, it))"),
]
sampled_snippets("cpython/test_itertools", "r6_itertools", ITERTOOLS, namespace=NS)

LIST_METHODS = [
    ("index_with_bounds_and_insert_pop", "l = [3, 1, x.shape[0], 1]\na, b = l.index(1, -2), l.index(1, 0, 2)\nl.insert(-1, 'i')\nreturn x, a, b, l.pop(-2), l"),
    ("remove_missing_message", "l = [1, 2]\ntry:\n    l.remove(x.shape[0])\nexcept ValueError as e:\n    return x, str(e)"),
    ("index_missing_message", "l = [1, 2]\ntry:\n    l.index(x.shape[0])\nexcept ValueError as e:\n    return x, str(e)"),
    ("sort_reverse_stable", "l = [(1, 'b'), (0, 'a'), (1, 'a'), (x.shape[0], 'c')]\nl.sort(key=lambda p: p[0], reverse=True)\nreturn x, l"),
    ("dict_changed_while_iterated", "d = {'a': 1}\ntry:\n    for k in d:\n        d['b' + k] = x.shape[0]\nexcept RuntimeError as e:\n    return x, str(e), d"),
]
sampled_snippets("cpython/test_list", "r6_list", LIST_METHODS, namespace=NS)

STDLIB = [
    ("length_hint_forms", "sentinel = object()\nreturn x, operator.length_hint([1, 2]), operator.length_hint(iter(range(x.shape[0]))), operator.length_hint(sentinel, x.shape[0])"),
    ("deepcopy_of_tensors_keeps_sharing", "d = copy.deepcopy({'t': x, 'l': [x, x]})\nd['t'].add_(1)\nreturn x, d['t'], d['l'][0] is d['l'][1], d['l'][0] is d['t']"),
    ("shallow_copy_shares_inner", "inner = [x.shape[0]]\nc = copy.copy([x, inner])\nc[1].append(1)\nreturn x, inner, c[0] is x"),
    ("counter_most_common_ties", "c = collections.Counter('abracadabra')\nc.update({'z': x.shape[0]})\nreturn x, c.most_common(3), c.most_common()[-1], sorted(c.elements())[:5], c.total()"),
    ("heap_of_pairs", "h = []\nfor i, r in enumerate([3, 1, x.shape[0], 2]):\n    heapq.heappush(h, (r, i))\nreturn x, [heapq.heappop(h) for _ in range(2)], heapq.nsmallest(2, [5, 1, x.shape[0]]), heapq.nlargest(2, 'abc')"),
    ("bisect_forms", "a = [1, 3, 5, 7]\nr = (bisect.bisect_left(a, x.shape[0]), bisect.bisect_right(a, 5), bisect.bisect(a, 4, key=lambda v: v))\nbisect.insort(a, x.shape[0])\nreturn x, r, a"),
    ("random_instance_seeded_by_size", "r = random.Random(x.shape[0])\nreturn x, r.random(), r.randint(1, 10), r.choice('abc'), r.sample(range(10), 3)"),
    ("bytes_and_int_conversions", "n = x.shape[0]\nreturn x, bytes.fromhex('0a0b'), int.from_bytes(b'\\xff\\x00', 'big', signed=True), n.to_bytes(2, 'little', signed=True), bytes(n), bytearray(b'ab').hex()"),
]
sampled_snippets("cpython/test_operator", "r6_stdlib", STDLIB, namespace=NS)
