"""Lists, tuples, UserList and sorting as CPython's list_tests, seq_tests, test_list, test_tuple,
test_userlist and test_sort check them (recast in our own words; dynamo's cpython/3_13 port of
these files guided the choice), mixed with tensors and with sizes that become symbolic at the
third call: slice assignment with steps and of other lengths (extended slices that must match),
del of slices, insert/pop/remove/index with negative and out-of-range bounds, `*` of lists
holding one mutable object, `+=` with any iterable against `+` with lists only, in-place
repetition aliasing, comparison of lists and tuples element by element (tensors compared by
identity first), count/index that run __eq__, list.sort stability with key and reverse,
sort of a list that a key mutates, tuples' hash/identity semantics, tuple subclasses, UserList
arithmetic and its type after slicing, reversed and copy, and lists passed in and mutated."""

import collections

import torch

from . import snippets


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


class EqCounter:
    """An object whose __eq__ counts its calls (what index/count/in ask of the elements)."""

    calls = 0

    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        type(self).calls += 1
        return isinstance(other, EqCounter) and other.v == self.v

    __hash__ = None


class MyTuple(tuple):
    def total(self):
        return sum(self)


Pair = collections.namedtuple("Pair", "a b")


class MyList(list):
    def first(self):
        return self[0]


NS = {"torch": torch, "brk": brk, "collections": collections, "EqCounter": EqCounter, "Pair": Pair, "MyTuple": MyTuple, "MyList": MyList}

LISTS = [
    ("slice_assign_grow", "l = [x, x + 1, x + 2]\nl[1:2] = [x * 3, x * 4, x * 5]\nreturn l"),
    ("slice_assign_shrink", "l = list(range(6))\nl[1:5] = [x.shape[0]]\nreturn x, l"),
    ("slice_assign_from_generator", "l = [0, 1, 2]\nl[1:] = (v * 2 for v in range(x.shape[0]))\nreturn x, l"),
    ("slice_assign_self", "l = [1, 2, 3]\nl[1:] = l\nreturn x, l"),
    ("extended_slice_assign_match", "l = list(range(8))\nl[::2] = [x.shape[0]] * 4\nreturn x, l"),
    ("extended_slice_assign_mismatch", "l = list(range(8))\ntry:\n    l[::2] = [1, 2]\nexcept ValueError as e:\n    return x, str(e)\nreturn x, l"),
    ("extended_slice_negative_step_assign", "l = list(range(6))\nl[::-2] = ['a', 'b', 'c']\nreturn x, l"),
    ("del_extended_slice", "l = list(range(10))\ndel l[1::3]\nreturn x, l"),
    ("del_slice_negative", "l = [x, x * 2, x * 3, x * 4]\ndel l[-3:-1]\nreturn l"),
    ("slice_assign_on_size_bound", "l = list(range(10))\nn = x.shape[0]\nl[n:] = []\nreturn x, l"),
    ("insert_out_of_range", "l = [1, 2, 3]\nl.insert(100, 'end')\nl.insert(-100, 'start')\nl.insert(-1, 'before last')\nreturn x, l"),
    ("pop_negative_and_errors", "l = [x, x + 1, x + 2]\na = l.pop(-2)\ntry:\n    l.pop(5)\nexcept IndexError as e:\n    msg = str(e)\nreturn a, l, msg"),
    ("pop_empty", "l = []\ntry:\n    l.pop()\nexcept IndexError as e:\n    return x, str(e)"),
    ("remove_first_equal_only", "l = [1, 2, 1, 2]\nl.remove(2)\ntry:\n    l.remove(9)\nexcept ValueError as e:\n    return x, l, str(e)"),
    ("index_with_bounds", "l = [0, 1, 0, 1, 0]\nreturn x, l.index(0, 1), l.index(0, -2), l.index(1, 2, 4)"),
    ("index_missing_error", "try:\n    [1, 2].index(3)\nexcept ValueError as e:\n    return x, str(e)"),
    ("index_calls_eq", "EqCounter.calls = 0\nl = [EqCounter(1), EqCounter(2), EqCounter(3)]\ni = l.index(EqCounter(2))\nreturn x * i, i, EqCounter.calls"),
    ("count_calls_eq", "EqCounter.calls = 0\nl = [EqCounter(1), EqCounter(2), EqCounter(1)]\nc = l.count(EqCounter(1))\nreturn x, c, EqCounter.calls"),
    ("contains_identity_before_eq", "EqCounter.calls = 0\na = EqCounter(1)\nl = [EqCounter(5), a]\nreturn x, a in l, EqCounter.calls"),
    ("nan_in_list_identity", "nan = float('nan')\nl = [nan]\nreturn x, nan in l, l.count(nan), l == [nan], [float('nan')] == [float('nan')]"),
    ("tensor_in_list_identity_then_eq", "a = x\nl = [x + 0, a]\nreturn x, l.index(a), any(t is a for t in l)"),
    ("repeat_shares_inner", "l = [[]] * 3\nl[0].append(x.shape[0])\nreturn x, l, l[0] is l[2]"),
    ("repeat_by_size", "l = [x.shape[0]] * (x.shape[0] // 2)\nreturn x, l"),
    ("repeat_negative_is_empty", "return x, [1, 2] * -3, (1,) * 0"),
    ("inplace_repeat_aliases", "a = [x]\nb = a\na *= 3\nreturn a is b, len(b), b[2] is x"),
    ("iadd_any_iterable", "l = [1]\nl += (2, 3)\nl += range(2)\nl += 'ab'\nreturn x, l"),
    ("add_list_tuple_error", "try:\n    return x, [1] + (2,)\nexcept TypeError as e:\n    return x, 'error'"),
    ("iadd_aliases_add_copies", "a = [x]\nb = a\na += [x + 1]\nc = [x]\nd = c\nc = c + [x + 1]\nreturn len(b), len(d), a is b, c is d"),
    ("compare_lists_lexicographic", "return x, [1, 2] < [1, 2, 0], [1, 3] > [1, 2, 9], [] < [0], [1, 2] == [1, 2], [1, 2] <= [1, 2]"),
    ("compare_tuples_mixed", "return x, (1, 'a') < (1, 'b'), (1, 2) == (1.0, 2.0), (x.shape[0], 1) > (3, 9)"),
    ("compare_different_types_error", "try:\n    return x, [1] < (1,)\nexcept TypeError:\n    return x, 'error'"),
    ("list_eq_tensors_identity", "l1 = [x, x]\nl2 = [x, x]\nreturn x, l1 == l2"),
    ("reverse_in_place_and_reversed", "l = [x, x + 1, x + 2]\nr = list(reversed(l))\nl.reverse()\nreturn l, r[0] is l[0]"),
    ("copy_is_shallow", "inner = [x]\nl = [inner, 1]\nc = l.copy()\nc[0].append(x + 1)\nc[1] = 5\nreturn l, c"),
    ("clear_keeps_alias", "l = [x, x]\nm = l\nl.clear()\nreturn x, m, l is m"),
    ("extend_self", "l = [1, 2]\nl.extend(l)\nreturn x, l"),
    ("append_self_repr", "l = [1]\nl.append(l)\nreturn x, repr(l)"),
    ("list_of_size_and_int", "return x, list(x.shape), list(range(x.shape[0]))[-2:]"),
    ("list_constructor_from_dict", "d = {'a': x, 'b': x + 1}\nreturn list(d), list(d.values())"),
    ("negative_index_from_size", "l = list(range(10))\nreturn x, l[-x.shape[0]], l[x.shape[0] - 1]"),
    ("index_error_from_size", "l = [1, 2]\ntry:\n    return l[x.shape[0]]\nexcept IndexError as e:\n    return x, str(e)"),
    ("slice_beyond_bounds", "l = [x, x + 1]\nreturn l[5:], l[-10:1], l[1:-10]"),
    ("slice_step_zero_error", "try:\n    [1, 2][::0]\nexcept ValueError as e:\n    return x, str(e)"),
    ("slice_object_reused", "s = slice(1, None, 2)\nl = list(range(x.shape[0]))\nreturn x, l[s], s.indices(x.shape[0])"),
    ("list_mul_tensor_elements_identity", "l = [x] * 2\nreturn l[0] is l[1], l[0] is x"),
    ("sum_of_lists", "return x, sum([[1], [2, 3], [x.shape[0]]], [])"),
    ("min_max_of_lists", "return x, max([1, 2], [1, 3], [0, 9]), min([[2], [1, 5]], key=len)"),
    ("list_comprehension_filter_tensors", "l = [x * i for i in range(4) if i % 2]\nreturn l"),
    ("nested_list_mutation_through_alias", "grid = [[0] * 3 for _ in range(2)]\nrow = grid[1]\nrow[2] = x.shape[0]\nreturn x, grid"),
    ("list_subclass_method_and_slice_type", "m = MyList([x, x + 1])\ns = m[:1]\nreturn m.first(), type(s).__name__, type(m + m).__name__"),
    ("list_subclass_append_visible", "m = MyList()\nm.append(x)\nm.extend([x * 2])\nreturn list(m), len(m)"),
    ("list_input_mutated", "l.append(l[0] * 2)\nl[0] = l[0] + 1\ndel l[1]\nreturn len(l)", {"params": "l", "make_args": lambda n: ([torch.randn(n), torch.randn(n), torch.randn(n)],)}),
    ("list_input_sorted_by_sum", "l.sort(key=lambda t: t.sum().item())\nreturn l", {"params": "l", "make_args": lambda n: ([torch.randn(n) for _ in range(4)],)}),
    ("list_input_slice_assigned", "l[1:3] = [l[0] * 10]\nreturn l", {"params": "l", "make_args": lambda n: ([torch.randn(n) for _ in range(4)],)}),
    ("list_mutated_across_break", "l = [x]\nl.append(x + 1)\nbrk()\nl.insert(0, x - 1)\nl.pop(1)\nreturn l"),
]
snippets("cpython/test_list", "list3", LISTS, namespace=NS)

TUPLES = [
    ("tuple_of_tuple_is_same", "t = (x, 1)\nreturn tuple(t) is t, t[:] is t"),
    ("tuple_concat_and_repeat", "t = (x, 1)\nreturn t + (2,), t * 2"),
    ("tuple_hash_equal_values", "return x, hash((1, 2)) == hash((1, 2)), hash((1, 2.0)) == hash((1, 2))"),
    ("tuple_with_list_unhashable", "try:\n    hash((1, [2]))\nexcept TypeError as e:\n    return x, 'unhashable'"),
    ("tuple_as_dict_key", "d = {(1, 'a'): x}\nd[(1, 'a')] = x * 2\nreturn d"),
    ("tuple_index_count", "t = (1, 2, 1, 3, 1)\nreturn x, t.index(1, 1), t.count(1), t.index(3)"),
    ("tuple_unpack_errors", "try:\n    a, b = (1, 2, 3)\nexcept ValueError as e:\n    m1 = str(e)\ntry:\n    a, b, c = (1, 2)\nexcept ValueError as e:\n    m2 = str(e)\nreturn x, m1, m2"),
    ("tuple_star_unpack", "a, *b, c = (x, x + 1, x + 2, x + 3)\nreturn a, b, c, type(b).__name__"),
    ("tuple_subclass_method", "t = MyTuple((1, 2, x.shape[0]))\nreturn x, t.total(), type(t[:2]).__name__, type(t + t).__name__"),
    ("tuple_compare_with_tensor_elements", "t1 = (1, x)\nt2 = (2, x)\nreturn x, t1 < t2"),
    ("tuple_of_generator", "return tuple(x[i] for i in range(x.shape[0] - 1))"),
    ("tuple_contains_uses_eq", "EqCounter.calls = 0\nt = (EqCounter(1), EqCounter(2))\nreturn x, EqCounter(2) in t, EqCounter.calls"),
    ("tuple_repr_nested", "return x, repr((1, (2,), [3], 'a')), repr(()), repr((1,))"),
    ("tuple_from_size", "t = tuple(x.shape) + (1,)\nreturn x.reshape(t), t"),
    ("namedtuple_fields_and_replace", "p = Pair(x, 2)\nq = p._replace(b=x.shape[0])\nreturn q.a * q.b, q, p == (x, 2)"),
]
snippets("cpython/test_tuple", "tuple3", TUPLES, namespace=NS)

USERLIST = [
    ("userlist_add_types", "u = collections.UserList([1, 2])\nr1 = u + [3]\nr2 = [0] + u\nr3 = u + (4,) if False else u + collections.UserList([4])\nreturn x, type(r1).__name__, type(r2).__name__, list(r3)"),
    ("userlist_slice_type", "u = collections.UserList([x, x + 1, x + 2])\ns = u[1:]\nreturn type(s).__name__, list(s)"),
    ("userlist_mul_and_imul", "u = collections.UserList([x.shape[0]])\nv = u * 3\nw = u\nu *= 2\nreturn x, list(v), list(w), w is u"),
    ("userlist_iadd", "u = collections.UserList([1])\nw = u\nu += [2, 3]\nreturn x, w.data, w is u"),
    ("userlist_compare", "u = collections.UserList([1, 2])\nreturn x, u == [1, 2], u < [1, 3], u > collections.UserList([0])"),
    ("userlist_data_alias", "src = [x]\nu = collections.UserList(src)\nu.append(x + 1)\nreturn len(src), len(u), u.data is src"),
    ("userlist_sort_reverse", "u = collections.UserList([3, 1, 2])\nu.sort(reverse=True)\nu.reverse()\nreturn x, u.data"),
    ("userlist_subclass_append_hook", "class Logged(collections.UserList):\n    def append(self, v):\n        super().append(v * 2)\nu = Logged()\nu.append(x)\nu.extend([x])\nreturn list(u)"),
    ("userlist_contains_and_index", "u = collections.UserList(['a', 'b', 'a'])\nreturn x, 'b' in u, u.index('a', 1), u.count('a')"),
    ("userlist_copy_type", "u = collections.UserList([x])\nc = u.copy()\nc.append(1)\nreturn type(c).__name__, len(u), len(c)"),
]
snippets("cpython/test_userlist", "userlist3", USERLIST, namespace=NS)

SORTS = [
    ("sort_stability_with_key", "data = [(i % 3, i) for i in range(x.shape[0] * 2)]\ndata.sort(key=lambda p: p[0])\nreturn x, data"),
    ("sort_stability_reverse", "data = [(i % 2, i) for i in range(8)]\ndata.sort(key=lambda p: p[0], reverse=True)\nreturn x, data"),
    ("sort_reverse_not_reversed_sort", "data = [(1, 'a'), (0, 'b'), (1, 'c')]\na = sorted(data, key=lambda p: p[0], reverse=True)\nb = list(reversed(sorted(data, key=lambda p: p[0])))\nreturn x, a, b"),
    ("sort_key_called_once_per_item", "calls = []\ndef key(v):\n    calls.append(v)\n    return -v\nl = [3, 1, 2]\nl.sort(key=key)\nreturn x, l, calls"),
    ("sort_key_raises_list_unchanged", "l = [3, 1, 'a', 2]\ntry:\n    l.sort()\nexcept TypeError:\n    pass\nreturn x, sorted(map(str, l))"),
    ("sort_empty_list_during_sort", "l = [3, 2, 1]\ndef key(v):\n    l.clear()\n    return v\ntry:\n    l.sort(key=key)\nexcept ValueError as e:\n    return x, str(e)\nreturn x, l"),
    ("sorted_tensors_by_max", "ts = [x * k for k in (3, -1, 2)]\nreturn sorted(ts, key=lambda t: float(t.abs().max()))"),
    ("sort_by_lt_only", "class V:\n    def __init__(self, v):\n        self.v = v\n    def __lt__(self, other):\n        return self.v < other.v\nvs = [V(3), V(1), V(2)]\nvs.sort()\nreturn x, [v.v for v in vs]"),
    ("sort_by_gt_reflected", "class V:\n    def __init__(self, v):\n        self.v = v\n    def __gt__(self, other):\n        return self.v > other.v\nvs = [V(3), V(1), V(2)]\nreturn x, [v.v for v in sorted(vs)]"),
    ("sorted_strings_case", "return x, sorted(['b', 'A', 'a', 'B']), sorted(['b', 'A', 'a', 'B'], key=str.lower)"),
    ("sorted_with_cmp_to_key", "import functools\ndef cmp(a, b):\n    return (a % 3) - (b % 3) or b - a\nreturn x, sorted(range(x.shape[0] + 3), key=functools.cmp_to_key(cmp))"),
    ("sort_mixed_int_float", "return x, sorted([3, 1.5, 2, -0.5, True])"),
    ("sort_returns_none", "l = [2, 1]\nr = l.sort()\nreturn x, r, l"),
    ("sorted_of_dict_items", "d = {'b': x, 'a': x + 1}\nreturn [v for _, v in sorted(d.items())]"),
    ("sort_keyword_only", "try:\n    [1, 2].sort(None)\nexcept TypeError:\n    return x, 'positional rejected'"),
    ("sort_size_values", "dims = sorted([x.shape[0], 5, 3, x.shape[0] * 2])\nreturn x.new_zeros(dims[-1]), dims"),
]
snippets("cpython/test_sort", "sort3", SORTS, namespace=NS)
