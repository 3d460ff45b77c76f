"""Sets and frozensets: CPython's test_set behaviours (construction, membership, the algebra as
methods and operators, in-place updates, subset/superset, discard/remove/pop, frozenset
hashing, errors) and dynamo's test_sets (sets built from tensors' sizes, sets as inputs,
mutation of an input set, iteration order of small ints), inside compiled code."""

import torch

from . import snippets

NS = {"torch": torch}

SET = [
    ("literal_dedup", "s = {1, 2, 2, 3}\nreturn x + len(s)"),
    ("constructor_from_list", "s = set([1, 1, 2])\nreturn x + len(s)"),
    ("constructor_from_string", "s = set('hello')\nreturn x + len(s), sorted(s)"),
    ("empty_set_falsy", "s = set()\nreturn x + (1 if s else 2)"),
    ("contains", "s = {1, 2}\nreturn x + (1 in s) + (3 in s) * 10"),
    ("not_contains", "s = {'a'}\nreturn x + ('b' not in s)"),
    ("add", "s = set()\ns.add(1)\ns.add(1)\ns.add(2)\nreturn x + len(s)"),
    ("remove", "s = {1, 2}\ns.remove(1)\nreturn x + len(s), s"),
    ("remove_missing_raises", "s = {1, 2}\ns.remove(3)\nreturn x"),
    ("remove_missing_caught", "s = {1}\ntry:\n    s.remove(5)\nexcept KeyError as e:\n    return x + e.args[0]\nreturn x"),
    ("discard_missing_ok", "s = {1, 2}\ns.discard(3)\ns.discard(1)\nreturn x + len(s)"),
    ("pop_nonempty", "s = {7}\nv = s.pop()\nreturn x + v + len(s)"),
    ("pop_empty_raises", "s = set()\nreturn x + s.pop()"),
    ("clear", "s = {1, 2}\ns.clear()\nreturn x + len(s)"),
    ("copy_independent", "s = {1}\nt = s.copy()\nt.add(2)\nreturn x + len(s) * 10 + len(t)"),
    ("union_method", "return x, sorted({1, 2}.union({2, 3}, [4]))"),
    ("union_operator", "return x, sorted({1, 2} | {2, 3})"),
    ("union_operator_with_list_raises", "return x, {1} | [2]"),
    ("intersection_method", "return x, sorted({1, 2, 3}.intersection([2, 3, 4], (3,)))"),
    ("intersection_operator", "return x, sorted({1, 2, 3} & {2, 3, 4})"),
    ("difference_method", "return x, sorted({1, 2, 3}.difference({2}, [3]))"),
    ("difference_operator", "return x, sorted({1, 2, 3} - {2})"),
    ("symmetric_difference_method", "return x, sorted({1, 2}.symmetric_difference([2, 3]))"),
    ("symmetric_difference_operator", "return x, sorted({1, 2} ^ {2, 3})"),
    ("update", "s = {1}\ns.update([2, 3], {4})\nreturn x + len(s)"),
    ("ior", "s = {1}\ns |= {5}\nreturn x + len(s)"),
    ("intersection_update", "s = {1, 2, 3}\ns.intersection_update({2, 3, 4})\nreturn x, sorted(s)"),
    ("iand", "s = {1, 2, 3}\ns &= {1}\nreturn x, sorted(s)"),
    ("difference_update", "s = {1, 2, 3}\ns.difference_update([1], [2])\nreturn x, sorted(s)"),
    ("isub", "s = {1, 2, 3}\ns -= {3}\nreturn x, sorted(s)"),
    ("symmetric_difference_update", "s = {1, 2}\ns.symmetric_difference_update({2, 3})\nreturn x, sorted(s)"),
    ("ixor", "s = {1, 2}\ns ^= {2, 3}\nreturn x, sorted(s)"),
    ("issubset", "return x + {1}.issubset({1, 2}) + {3}.issubset([1])"),
    ("issuperset", "return x + {1, 2}.issuperset([1]) + {1}.issuperset({1, 2})"),
    ("isdisjoint", "return x + {1}.isdisjoint({2}) + {1}.isdisjoint([1])"),
    ("le_lt_operators", "return x + ({1} <= {1}) + ({1} < {1}) + ({1} < {1, 2})"),
    ("ge_gt_operators", "return x + ({1, 2} >= {1}) + ({1, 2} > {1, 2})"),
    ("equality", "return x + ({1, 2} == {2, 1}) + ({1} == frozenset([1]))"),
    ("len_after_ops", "s = set(range(10))\ns -= set(range(0, 10, 3))\nreturn x + len(s)"),
    ("comprehension", "s = {i % 3 for i in range(10)}\nreturn x + len(s), sorted(s)"),
    ("sum_of_set", "return x + sum({1, 2, 3})"),
    ("min_max_of_set", "s = {4, 1, 9}\nreturn x + min(s) + max(s)"),
    ("sorted_set", "return x, sorted({3, 1, 2})"),
    ("unhashable_add_raises", "s = set()\ns.add([1])\nreturn x"),
    ("frozenset_hashable_as_key", "d = {frozenset([1, 2]): 5}\nreturn x + d[frozenset([2, 1])]"),
    ("frozenset_ops_return_frozenset", "f = frozenset([1, 2]) | {3}\nreturn x + len(f), type(f).__name__"),
    ("set_op_frozenset_left_type", "f = {1} | frozenset([2])\nreturn x, type(f).__name__"),
    ("frozenset_no_add", "f = frozenset([1])\nf.add(2)\nreturn x"),
    ("frozenset_contains", "f = frozenset('abc')\nreturn x + ('a' in f)"),
    ("set_of_tuples", "s = {(1, 2), (1, 2), (2, 1)}\nreturn x + len(s)"),
    ("set_bool_int_equivalence", "s = {1, True, 1.0}\nreturn x + len(s)"),
    ("set_iteration_small_ints_sorted_order", "s = {3, 1, 2}\nreturn x, list(s)"),
    ("set_mutation_during_iteration_raises", "s = {1, 2}\nfor v in s:\n    s.add(v + 10)\nreturn x"),
    ("set_from_dict_keys", "d = {'a': 1, 'b': 2}\nreturn x + len(set(d)), sorted(set(d))"),
    ("set_in_branch", "s = {'relu', 'gelu'}\nreturn x.relu() if 'relu' in s else x"),
    ("set_isdisjoint_generator", "return x + {1, 2}.isdisjoint(i for i in range(5, 8))"),
    ("set_union_no_args", "s = {1}\nt = s.union()\nreturn x + (t is not s) + len(t)"),
    ("set_ne", "return x + ({1} != {2})"),
    ("set_difference_empty", "return x + len(set() - {1})"),
    ("set_len_of_string_set_update", "s = set()\ns.update('abca')\nreturn x + len(s)"),
]
snippets("cpython/test_set", "set", SET, namespace=NS)


def set_input(n):
    return ({1, 2, 3}, torch.randn(n))


SETS_DYNAMO = [
    ("set_of_sizes", "s = {x.shape[0], 4, 7}\nreturn x + len(s)"),
    ("set_input_contains", "return x * (2 in s) + len(s)", {"params": "s, x", "make_args": set_input}),
    ("set_input_mutated_add", "s.add(10)\nreturn x + len(s)", {"params": "s, x", "make_args": set_input}),
    ("set_input_mutated_discard", "s.discard(1)\nreturn x - len(s)", {"params": "s, x", "make_args": set_input}),
    ("set_input_union_new", "t = s | {9}\nreturn x + len(t), len(s)", {"params": "s, x", "make_args": set_input}),
    ("set_input_iterate_sum", "for v in sorted(s):\n    x = x * v\nreturn x", {"params": "s, x", "make_args": set_input}),
    ("set_input_returned", "s.add(0)\nreturn s, x * 2", {"params": "s, x", "make_args": set_input}),
    ("set_of_dtypes", "s = {x.dtype, torch.float64}\nreturn x + len(s)"),
    ("set_of_strings_branch", "modes = {'a', 'b'}\nmodes.add('c')\nreturn x + 1 if 'c' in modes else x"),
    ("set_of_functions", "s = {torch.sin, torch.cos}\nreturn x * (torch.sin in s) + (torch.tan in s)"),
    ("set_tensor_membership_identity", "s = {x}\nreturn x + (x in s)"),
    ("set_of_tensors_len", "y = x + 1\ns = {x, y, x}\nreturn y + len(s)"),
    ("set_of_size_tuples", "s = {tuple(x.shape), (4,)}\nreturn x + len(s)"),
    ("set_comprehension_over_ints_of_size", "s = {d for d in x.shape}\nreturn x + len(s)"),
    ("set_dedup_list_of_names", "names = ['w', 'b', 'w']\nreturn x + len(set(names))"),
    ("frozenset_input_contains", "return x + ('a' in f)", {"params": "f, x", "make_args": lambda n: (frozenset('ab'), torch.randn(n))}),
    ("set_subset_of_range", "return x + (set(range(3)) <= set(range(x.shape[0])))"),
    ("set_pop_from_single_element", "s = {x.shape[0]}\nreturn x + s.pop()"),
    ("set_issubset_of_dict_keys", "d = {'a': 1, 'b': 2}\nreturn x + {'a'}.issubset(d.keys())"),
    ("set_keys_view_eq_set", "d = {'a': 1}\nreturn x + (d.keys() == {'a'})"),
]
snippets("dynamo/test_sets", "sets", SETS_DYNAMO, namespace=NS)
