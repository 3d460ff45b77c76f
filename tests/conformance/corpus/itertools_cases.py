"""itertools and functools: CPython's test_itertools (each iterator's results, argument
variants, exhaustion and errors) and test_functools (partial, reduce, lru_cache, wraps,
cmp_to_key, cached_property, singledispatch), used inside compiled code over tensors."""

import functools
import itertools
import operator

import torch

from . import snippets

NS = {"torch": torch, "itertools": itertools, "functools": functools, "operator": operator}

ITERTOOLS = [
    ("count_zip", "return x, list(zip(itertools.count(), 'abc'))"),
    ("count_start_step", "return x, list(itertools.islice(itertools.count(10, 3), 4))"),
    ("count_float_step", "return x, list(itertools.islice(itertools.count(0.5, 0.25), 3))"),
    ("count_next", "c = itertools.count(5)\nnext(c)\nreturn x + next(c)"),
    ("cycle_islice", "return x, list(itertools.islice(itertools.cycle('ab'), 5))"),
    ("cycle_empty", "return x, list(itertools.cycle([]))"),
    ("repeat_times", "return x, list(itertools.repeat(7, 3))"),
    ("repeat_zero_and_negative", "return x, list(itertools.repeat(1, 0)), list(itertools.repeat(1, -1))"),
    ("repeat_tensor", "return sum(itertools.repeat(x, 3))"),
    ("accumulate_default", "return x, list(itertools.accumulate([1, 2, 3, 4]))"),
    ("accumulate_func", "return x, list(itertools.accumulate([1, 2, 3, 4], operator.mul))"),
    ("accumulate_initial", "return x, list(itertools.accumulate([1, 2], initial=100))"),
    ("accumulate_max", "return x, list(itertools.accumulate([3, 1, 4, 1, 5], max))"),
    ("accumulate_tensors", "return list(itertools.accumulate([x, x * 2, x * 3]))"),
    ("chain_lists", "return x, list(itertools.chain([1], (2, 3), 'a'))"),
    ("chain_from_iterable", "return x, list(itertools.chain.from_iterable([[1, 2], [3]]))"),
    ("chain_tensors", "return torch.cat(list(itertools.chain([x], [x + 1])))"),
    ("compress", "return x, list(itertools.compress('abcdef', [1, 0, 1, 0, 1, 1]))"),
    ("compress_short_selectors", "return x, list(itertools.compress(range(10), [1, 1]))"),
    ("dropwhile", "return x, list(itertools.dropwhile(lambda v: v < 3, [1, 2, 3, 1]))"),
    ("takewhile", "return x, list(itertools.takewhile(lambda v: v < 3, [1, 2, 3, 1]))"),
    ("filterfalse", "return x, list(itertools.filterfalse(lambda v: v % 2, range(6)))"),
    ("filterfalse_none", "return x, list(itertools.filterfalse(None, [0, 1, '', 'a']))"),
    ("groupby_keys", "return x, [k for k, _ in itertools.groupby('aabbbc')]"),
    ("groupby_groups", "return x, [list(g) for _, g in itertools.groupby([1, 1, 2, 3, 3])]"),
    ("groupby_keyfunc", "return x, [(k, len(list(g))) for k, g in itertools.groupby(range(6), lambda v: v // 2)]"),
    ("islice_stop", "return x, list(itertools.islice('abcdef', 3))"),
    ("islice_start_stop_step", "return x, list(itertools.islice(range(20), 2, 12, 3))"),
    ("islice_none_stop", "return x, list(itertools.islice(range(5), 2, None))"),
    ("islice_negative_raises", "return x, list(itertools.islice(range(5), -1))"),
    ("starmap", "return x, list(itertools.starmap(pow, [(2, 3), (3, 2)]))"),
    ("starmap_tensors", "return list(itertools.starmap(torch.add, [(x, x), (x, 1)]))"),
    ("tee_two", "a, b = itertools.tee(range(3))\nreturn x, list(a), list(b)"),
    ("zip_longest_fill", "return x, list(itertools.zip_longest('ab', 'xyz', fillvalue='-'))"),
    ("zip_longest_default_none", "return x, list(itertools.zip_longest([1], [1, 2]))"),
    ("product_two", "return x, list(itertools.product('ab', [0, 1]))"),
    ("product_repeat", "return x + len(list(itertools.product(range(2), repeat=3)))"),
    ("product_empty", "return x, list(itertools.product())"),
    ("permutations_full", "return x, list(itertools.permutations([1, 2, 3]))"),
    ("permutations_r", "return x + len(list(itertools.permutations(range(4), 2)))"),
    ("permutations_r_too_big", "return x, list(itertools.permutations([1, 2], 3))"),
    ("combinations", "return x, list(itertools.combinations('abcd', 2))"),
    ("combinations_with_replacement", "return x, list(itertools.combinations_with_replacement('ab', 2))"),
    ("pairwise", "return x, list(itertools.pairwise([1, 2, 3, 4]))"),
    ("pairwise_tensors_diff", "parts = list(x.unbind(0))\nreturn [b - a for a, b in itertools.pairwise(parts)]"),
    ("batched_like_islice", "it = iter(range(7))\nout = []\nwhile chunk := list(itertools.islice(it, 3)):\n    out.append(chunk)\nreturn x, out"),
    ("product_of_tensor_dims", "return x + len(list(itertools.product(range(x.shape[0]), range(2))))"),
    ("combinations_sum_tensors", "ts = [x, x * 2, x * 3]\nreturn [a + b for a, b in itertools.combinations(ts, 2)]"),
    ("chain_next_exhaust", "c = itertools.chain([1])\nnext(c)\nreturn x + next(c, 99)"),
    ("count_negative_step", "return x, list(itertools.islice(itertools.count(0, -2), 3))"),
    ("zip_strict_mismatch_raises", "return x, list(zip([1, 2], [1], strict=True))"),
    ("zip_strict_ok", "return x, list(zip([1, 2], 'ab', strict=True))"),
    ("enumerate_islice", "return x, list(enumerate(itertools.islice('abc', 1, None)))"),
    ("accumulate_empty", "return x, list(itertools.accumulate([]))"),
    ("groupby_sorted_by_len", "words = sorted(['aa', 'b', 'cc', 'd'], key=len)\nreturn x, {k: list(g) for k, g in itertools.groupby(words, len)}"),
    ("repeat_in_map", "return x, list(map(pow, range(4), itertools.repeat(2)))"),
    ("tee_independent_progress", "a, b = itertools.tee('abc')\nnext(a)\nreturn x, list(a), list(b)"),
    ("starmap_tuple_unpack_of_dict_items", "d = {'a': 1, 'b': 2}\nreturn x, list(itertools.starmap(lambda k, v: k * v, d.items()))"),
    ("cycle_tensors_zip", "return [a * b for a, b in zip([x, x + 1, x + 2], itertools.cycle([1, -1]))]"),
    ("dropwhile_all", "return x, list(itertools.dropwhile(lambda v: True, range(3)))"),
]
snippets("cpython/test_itertools", "itertools", ITERTOOLS, namespace=NS)


def add3(a, b, c):
    return a + b * 10 + c * 100


def keyword_only(a, *, scale=1):
    return a * scale


@functools.cache
def cached_square(n):
    return n * n


class Lazy:
    def __init__(self, v):
        self.v = v

    @functools.cached_property
    def doubled(self):
        return self.v * 2


def decorated(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) + 1

    return wrapper


@decorated
def plus_two(t):
    """Documented."""
    return t + 2


@functools.singledispatch
def describe(value):
    return 0


@describe.register
def _(value: int):
    return 1


@describe.register
def _(value: list):
    return 2


class Ordered:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return self.v == other.v

    def __lt__(self, other):
        return self.v < other.v


OrderedTotal = functools.total_ordering(Ordered)

NS.update(add3=add3, keyword_only=keyword_only, cached_square=cached_square, Lazy=Lazy, plus_two=plus_two,
          describe=describe, OrderedTotal=OrderedTotal, decorated=decorated)

FUNCTOOLS = [
    ("partial_positional", "p = functools.partial(add3, 1)\nreturn x + p(2, 3)"),
    ("partial_keyword", "p = functools.partial(add3, c=5)\nreturn x + p(1, 2)"),
    ("partial_override_keyword", "p = functools.partial(add3, c=5)\nreturn x + p(1, 2, c=0)"),
    ("partial_nested_flattens", "p = functools.partial(functools.partial(add3, 1), 2)\nreturn x + p(3), len(p.args)"),
    ("partial_attributes", "p = functools.partial(add3, 1, c=2)\nreturn x + len(p.args) + len(p.keywords) + (p.func is add3)"),
    ("partial_of_torch_fn", "p = functools.partial(torch.add, alpha=2)\nreturn p(x, x)"),
    ("partial_of_method", "p = functools.partial(torch.Tensor.mul, other=3)\nreturn p(x)"),
    ("partial_tensor_bound", "p = functools.partial(torch.mul, x)\nreturn p(2)"),
    ("partial_keyword_only", "p = functools.partial(keyword_only, scale=4)\nreturn p(x)"),
    ("partial_too_many_args_raises", "p = functools.partial(add3, 1, 2, 3)\nreturn p(4)"),
    ("partial_of_lambda", "p = functools.partial(lambda a, b: a - b, b=1)\nreturn p(x)"),
    ("partial_input", "return p(x)", {"params": "p, x", "make_args": lambda n: (functools.partial(torch.mul, other=2), torch.randn(n))}),
    ("reduce_add", "return x + functools.reduce(operator.add, [1, 2, 3])"),
    ("reduce_initial", "return x + functools.reduce(lambda a, b: a * b, [2, 3], 10)"),
    ("reduce_empty_with_initial", "return x + functools.reduce(operator.add, [], 5)"),
    ("reduce_empty_raises", "return x + functools.reduce(operator.add, [])"),
    ("reduce_tensors", "return functools.reduce(torch.maximum, [x, -x, x * 0.5])"),
    ("reduce_tensor_matmul_chain", "m = x.reshape(-1, 1) @ x.reshape(1, -1)\nreturn functools.reduce(torch.matmul, [m, m, m])"),
    ("lru_cache_call", "return x + cached_square(3) + cached_square(3)"),
    ("lru_cache_inside", "@functools.lru_cache(maxsize=2)\ndef sq(n):\n    return n * n\nreturn x + sq(2) + sq(2)"),
    ("cached_property", "obj = Lazy(3)\nreturn x + obj.doubled + obj.doubled"),
    ("cached_property_tensor", "obj = Lazy(x)\nreturn obj.doubled + 1"),
    ("wraps_preserves_name", "return plus_two(x), plus_two.__name__, plus_two.__doc__"),
    ("wraps_wrapped_attribute", "return plus_two.__wrapped__(x)"),
    ("decorator_applied_inside", "g = decorated(lambda t: t * 2)\nreturn g(x)"),
    ("cmp_to_key_sort", "key = functools.cmp_to_key(lambda a, b: b - a)\nreturn x, sorted([3, 1, 2], key=key)"),
    ("cmp_to_key_max", "key = functools.cmp_to_key(lambda a, b: len(a) - len(b))\nreturn x, max(['aa', 'b', 'ccc'], key=key)"),
    ("singledispatch_int", "return x + describe(3)"),
    ("singledispatch_list", "return x + describe([1])"),
    ("singledispatch_default", "return x + describe('s')"),
    ("total_ordering_le", "return x + (OrderedTotal(1) <= OrderedTotal(2)) + (OrderedTotal(3) >= OrderedTotal(4))"),
    ("total_ordering_sorted", "vals = sorted([OrderedTotal(3), OrderedTotal(1)])\nreturn x + vals[0].v"),
    ("partial_repr_free_call_kw", "p = functools.partial(dict, a=1)\nreturn x + len(p(b=2))"),
    ("reduce_on_generator", "return x + functools.reduce(operator.add, (i for i in range(5)))"),
    ("partial_call_in_map", "p = functools.partial(pow, 2)\nreturn x, list(map(p, range(4)))"),
    ("reduce_dict_merge", "ds = [{'a': 1}, {'b': 2}]\nm = functools.reduce(lambda a, b: {**a, **b}, ds)\nreturn x + len(m)"),
    ("partial_tensor_method_chain", "f = functools.partial(torch.clamp, min=-0.5, max=0.5)\nreturn f(x)"),
    ("partial_functools_update_wrapper", "def inner(t):\n    return t * 3\ndef outer(t):\n    return inner(t)\nfunctools.update_wrapper(outer, inner)\nreturn outer(x), outer.__name__"),
]
snippets("cpython/test_functools", "functools", FUNCTOOLS, namespace=NS)
