"""Dicts: the behaviour CPython's test_dict checks (construction, views, update, get,
setdefault, pop, popitem, fromkeys, copy, equality, ordering, missing keys, subclasses with
__missing__) and what dynamo's test_dicts adds (dicts of tensors as inputs and outputs,
mutation of an input dict, key order, subclasses, tensors as values), inside compiled code."""

import collections
import operator

import torch

from . import snippets


class CountingMissing(dict):
    def __missing__(self, key):
        return len(key) if isinstance(key, str) else 0


class PlusOneDict(dict):
    def __setitem__(self, key, value):
        super().__setitem__(key, value + 1)


class MethodDict(dict):
    def scaled(self, x):
        return x * self["k"]


NS = {"torch": torch, "collections": collections, "operator": operator, "CountingMissing": CountingMissing,
      "PlusOneDict": PlusOneDict, "MethodDict": MethodDict}

# ---- CPython test_dict, one behaviour per case, recast over a tensor ------------------------
CPY = [
    ("literal_len", "d = {'a': 1, 'b': 2}\nreturn x + len(d)"),
    ("empty_is_falsy", "d = {}\nreturn x + 1 if not d else x - 1"),
    ("nonempty_is_truthy", "d = {0: 0}\nreturn x + 1 if d else x - 1"),
    ("constructor_kwargs", "d = dict(a=1, b=2)\nreturn x * d['a'] + d['b']"),
    ("constructor_pairs", "d = dict([('a', 2), ('b', 3)])\nreturn x * d['a'] * d['b']"),
    ("constructor_zip", "d = dict(zip('abc', range(3)))\nreturn x + d['c'] + len(d)"),
    ("constructor_dict_and_kwargs", "d = dict({'a': 1}, b=5)\nreturn x + d['a'] + d['b']"),
    ("keys_list", "d = {'a': 1, 'b': 2}\nreturn x + len(list(d.keys())), list(d.keys())"),
    ("values_sum", "d = {'a': 1, 'b': 2, 'c': 4}\nreturn x + sum(d.values())"),
    ("items_loop", "d = {1: 10, 2: 20}\nfor k, v in d.items():\n    x = x * k + v\nreturn x"),
    ("contains_key", "d = {'a': 1}\nreturn x + ('a' in d) + ('b' in d) * 10"),
    ("not_contains", "d = {'a': 1}\nreturn x + ('z' not in d)"),
    ("getitem_missing_raises", "d = {'a': 1}\nreturn x + d['missing']"),
    ("getitem_missing_caught", "d = {'a': 1}\ntry:\n    v = d['missing']\nexcept KeyError:\n    v = -1\nreturn x + v"),
    ("keyerror_args", "d = {}\ntry:\n    d[('t', 1)]\nexcept KeyError as e:\n    return x + len(e.args), e.args[0]\nreturn x"),
    ("setitem_new", "d = {}\nd['a'] = x\nd['b'] = x * 2\nreturn d['a'] + d['b'], len(d)"),
    ("setitem_overwrite_keeps_order", "d = {'a': 1, 'b': 2}\nd['a'] = 3\nreturn x + d['a'], list(d)"),
    ("delitem", "d = {'a': 1, 'b': 2}\ndel d['a']\nreturn x + len(d), list(d)"),
    ("delitem_missing_raises", "d = {'a': 1}\ndel d['b']\nreturn x"),
    ("clear", "d = {'a': 1, 'b': 2}\nd.clear()\nreturn x + len(d)"),
    ("update_dict", "d = {'a': 1}\nd.update({'b': 2, 'a': 5})\nreturn x + d['a'] + d['b'], list(d)"),
    ("update_kwargs", "d = {'a': 1}\nd.update(b=2, c=3)\nreturn x + sum(d.values()), list(d)"),
    ("update_pairs", "d = {}\nd.update([('p', 1), ('q', 2)])\nreturn x + d['q'], list(d)"),
    ("update_items_view", "d = {'a': 1}\ne = {'b': 7}\nd.update(e.items())\nreturn x + d['b']"),
    ("update_bad_sequence_raises", "d = {}\nd.update([(1, 2, 3)])\nreturn x"),
    ("fromkeys_default_none", "d = dict.fromkeys('abc')\nreturn x + len(d), d['a'] is None"),
    ("fromkeys_value", "d = dict.fromkeys(range(4), 3)\nreturn x + sum(d.values())"),
    ("fromkeys_on_subclass", "d = collections.OrderedDict.fromkeys('xy', 1)\nreturn x + len(d), type(d).__name__"),
    ("copy_independent", "d = {'a': 1}\ne = d.copy()\ne['b'] = 2\nreturn x + len(d) * 10 + len(e)"),
    ("copy_shares_values", "d = {'t': [1]}\ne = d.copy()\ne['t'].append(2)\nreturn x + len(d['t'])"),
    ("get_present", "d = {'a': 3}\nreturn x * d.get('a')"),
    ("get_absent_none", "d = {'a': 3}\nreturn x + (d.get('b') is None)"),
    ("get_absent_default", "d = {'a': 3}\nreturn x + d.get('b', 5)"),
    ("setdefault_absent", "d = {}\nv = d.setdefault('a', 4)\nreturn x + v + d['a']"),
    ("setdefault_present", "d = {'a': 1}\nv = d.setdefault('a', 4)\nreturn x + v"),
    ("setdefault_list_append", "d = {}\nd.setdefault('k', []).append(1)\nd.setdefault('k', []).append(2)\nreturn x + len(d['k'])"),
    ("pop_present", "d = {'a': 1, 'b': 2}\nv = d.pop('a')\nreturn x + v, list(d)"),
    ("pop_absent_default", "d = {'a': 1}\nreturn x + d.pop('z', 9)"),
    ("pop_absent_raises", "d = {'a': 1}\nreturn x + d.pop('z')"),
    ("popitem_lifo", "d = {'a': 1, 'b': 2, 'c': 3}\nk, v = d.popitem()\nreturn x + v, k, list(d)"),
    ("popitem_empty_raises", "d = {}\nd.popitem()\nreturn x"),
    ("equality_order_insensitive", "return x + ({'a': 1, 'b': 2} == {'b': 2, 'a': 1})"),
    ("inequality", "return x + ({'a': 1} != {'a': 2})"),
    ("keys_view_set_ops", "a = {'a': 1, 'b': 2}\nb = {'b': 3, 'c': 4}\nreturn x + len(a.keys() & b.keys()), sorted(a.keys() | b.keys())"),
    ("keys_view_difference", "a = {'a': 1, 'b': 2}\nb = {'b': 3}\nreturn x + len(a.keys() - b.keys())"),
    ("items_view_contains", "d = {'a': 1}\nreturn x + (('a', 1) in d.items()) + (('a', 2) in d.items())"),
    ("values_view_len", "d = {'a': 1, 'b': 1}\nreturn x + len(d.values())"),
    ("view_is_live", "d = {'a': 1}\nks = d.keys()\nd['b'] = 2\nreturn x + len(ks)"),
    ("reversed_dict", "d = {'a': 1, 'b': 2, 'c': 3}\nreturn x + list(reversed(d)).index('a'), list(reversed(d))"),
    ("reversed_items", "d = {'a': 1, 'b': 2}\nreturn x, list(reversed(d.items()))"),
    ("union_operator", "a = {'a': 1}\nb = {'a': 2, 'b': 3}\nc = a | b\nreturn x + c['a'] + c['b'], list(c)"),
    ("inplace_union", "a = {'a': 1}\na |= {'c': 5}\nreturn x + a['c'], list(a)"),
    ("comprehension", "d = {i: i * i for i in range(5)}\nreturn x + d[3] + len(d)"),
    ("comprehension_filter", "d = {k: v for k, v in {'a': 1, 'b': 2, 'c': 3}.items() if v % 2}\nreturn x + sum(d.values()), list(d)"),
    ("tuple_keys", "d = {(1, 2): 3, (2, 1): 4}\nreturn x + d[(2, 1)] - d[1, 2]"),
    ("int_float_key_equivalence", "d = {1: 'int'}\nd[1.0] = 'float'\nreturn x + len(d), d[1]"),
    ("bool_int_key_equivalence", "d = {True: 'a'}\nd[1] = 'b'\nreturn x + len(d), d[True]"),
    ("none_key", "d = {None: 3}\nreturn x + d[None]"),
    ("nested_dicts", "d = {'outer': {'inner': 2}}\nd['outer']['inner'] += 1\nreturn x * d['outer']['inner']"),
    ("dict_of_lists_extend", "d = {'a': [1]}\nd['a'] += [2, 3]\nreturn x + len(d['a'])"),
    ("iterate_while_adding_raises", "d = {'a': 1}\nfor k in d:\n    d[k + 'x'] = 1\nreturn x"),
    ("iterate_over_copy_while_adding", "d = {'a': 1}\nfor k in list(d):\n    d[k + 'x'] = 1\nreturn x + len(d)"),
    ("len_after_many_inserts", "d = {}\nfor i in range(20):\n    d[i] = i\nfor i in range(0, 20, 2):\n    del d[i]\nreturn x + len(d), list(d)"),
    ("unhashable_key_raises", "d = {}\nd[[1, 2]] = 3\nreturn x"),
    ("unhashable_lookup_caught", "d = {}\ntry:\n    d[[1]]\nexcept TypeError:\n    return x - 1\nreturn x"),
    ("star_star_merge", "a = {'a': 1}\nb = {'b': 2}\nc = {**a, **b, 'c': 3}\nreturn x + len(c), list(c)"),
    ("dict_in_bool_context_after_clear", "d = {'a': 1}\nd.clear()\nreturn x * (2 if d else 3)"),
    ("keys_to_tuple", "d = {'b': 1, 'a': 2}\nreturn x, tuple(d)"),
    ("sorted_keys", "d = {'b': 1, 'a': 2, 'c': 0}\nreturn x + d[sorted(d)[0]], sorted(d)"),
    ("max_by_value", "d = {'b': 1, 'a': 2, 'c': 0}\nk = max(d, key=d.get)\nreturn x + d[k], k"),
    ("missing_subclass", "d = CountingMissing(a=1)\nreturn x + d['abcd'] + d['a']"),
    ("missing_subclass_get_ignores_missing", "d = CountingMissing()\nreturn x + (d.get('abc') is None)"),
    ("subclass_setitem_override", "d = PlusOneDict()\nd['a'] = 1\nreturn x + d['a']"),
    ("subclass_method", "d = MethodDict(k=3)\nreturn d.scaled(x)"),
    ("isinstance_dict", "return x + isinstance({}, dict) + isinstance(collections.OrderedDict(), dict)"),
    ("dict_eq_ordered_dict", "return x + ({'a': 1, 'b': 2} == collections.OrderedDict([('b', 2), ('a', 1)]))"),
    ("getitem_operator", "d = {'a': 4}\nreturn x * operator.getitem(d, 'a')"),
    ("repr_len", "d = {'a': 1}\nreturn x + len(repr(d)), repr(d)"),
    ("str_keys_from_format", "d = {f'k{i}': i for i in range(3)}\nreturn x + d['k2'], list(d)"),
]
snippets("cpython/test_dict", "dict", CPY, namespace=NS)

# ---- dicts holding tensors (dynamo test_dicts) ---------------------------------------------
def two_vecs(n):
    return torch.randn(n), torch.randn(n)


def tensor_dict(n):
    return ({"a": torch.randn(n), "b": torch.randn(n)},)


TENSOR = [
    ("values_are_tensors", "d = {'a': x, 'b': y}\nreturn d['a'] * d['b']", {"params": "x, y", "make_args": two_vecs}),
    ("return_dict_of_tensors", "return {'sum': x + y, 'diff': x - y}", {"params": "x, y", "make_args": two_vecs}),
    ("return_dict_order", "d = {}\nd['z'] = x\nd['a'] = y\nreturn d", {"params": "x, y", "make_args": two_vecs}),
    ("input_dict_read", "return d['a'] + d['b']", {"params": "d", "make_args": tensor_dict}),
    ("input_dict_mutated_add_key", "d['c'] = d['a'] * 2\nreturn d['b'] + 1", {"params": "d", "make_args": tensor_dict}),
    ("input_dict_pop", "v = d.pop('a')\nreturn v + d['b']", {"params": "d", "make_args": tensor_dict}),
    ("input_dict_mutation_returned", "d['c'] = d['a'] + d.pop('b')\nreturn d", {"params": "d", "make_args": tensor_dict}),
    ("input_dict_values_loop", "out = 0\nfor v in d.values():\n    out = out + v\nreturn out", {"params": "d", "make_args": tensor_dict}),
    ("input_dict_items_sorted", "return [k for k, _ in sorted(d.items())], d['b'] * 2", {"params": "d", "make_args": tensor_dict}),
    ("input_dict_clear", "s = d['a'] + d['b']\nd.clear()\nreturn s", {"params": "d", "make_args": tensor_dict}),
    ("input_dict_update_tensor", "d.update(e=d['a'].sin())\nreturn len(d)", {"params": "d", "make_args": tensor_dict}),
    ("input_dict_copy_mutate_copy", "e = d.copy()\ne['a'] = e['a'] + 1\nreturn e['a'] - d['a']", {"params": "d", "make_args": tensor_dict}),
    ("input_dict_inplace_value", "d['a'].add_(1)\nreturn d['a'].clone()", {"params": "d", "make_args": tensor_dict}),
    ("input_dict_len_branch", "if len(d) == 2:\n    return d['a'] + 1\nreturn d['a'] - 1", {"params": "d", "make_args": tensor_dict}),
    ("input_dict_setdefault", "v = d.setdefault('z', d['a'] * 3)\nreturn v + d['b']", {"params": "d", "make_args": tensor_dict}),
    ("input_dict_del", "del d['a']\nreturn d['b'] * 2", {"params": "d", "make_args": tensor_dict}),
    ("dict_comprehension_over_tensor_dict", "e = {k: v * 2 for k, v in d.items()}\nreturn e", {"params": "d", "make_args": tensor_dict}),
    ("tensor_in_values_identity", "e = {'x': x}\nreturn e['x'] is x, x + 1"),
    ("tensor_key_lookup", "d = {x: 1}\nreturn x + d[x]"),
    ("tensor_key_two_tensors", "d = {x: 1, y: 2}\nreturn x * d[y] + y * d[x]", {"params": "x, y", "make_args": two_vecs}),
    ("size_as_key", "d = {torch.Size([2]): 1}\nreturn x + d.get(torch.Size([2]), 0)"),
    ("shape_key_lookup", "d = {(4,): 'four'}\nreturn x + (x.shape in d), x.shape in d"),
    ("dtype_key", "d = {torch.float32: 1, torch.float64: 2}\nreturn x * d[x.dtype]"),
    ("module_type_key", "d = {torch.nn.ReLU: 1, torch.nn.Tanh: 2}\nreturn x * d[torch.nn.Tanh]"),
    ("function_key", "d = {torch.sin: 1, torch.cos: 2}\nreturn x * d[torch.cos]"),
    ("lambda_values", "d = {'f': lambda t: t * 3}\nreturn d['f'](x)"),
    ("dict_of_functions_dispatch", "ops = {'s': torch.sin, 'c': torch.cos}\nreturn sum(ops[k](x) for k in 'sc')"),
    ("dict_keys_from_tensor_shape", "d = {i: i for i in range(x.shape[0])}\nreturn x + len(d)"),
    ("get_with_tensor_default", "d = {}\nreturn d.get('a', x) + 1"),
    ("pop_with_tensor_default", "d = {}\nreturn d.pop('a', x * 2)"),
    ("dict_values_stack", "d = {'a': x, 'b': x * 2}\nreturn torch.stack(list(d.values()))"),
    ("dict_items_unpack_cat", "d = {'a': x, 'b': x + 1}\nreturn torch.cat([v for _, v in d.items()])"),
    ("dict_mutation_in_loop_accumulate", "acc = {}\nfor i in range(3):\n    acc[i] = x * i\nreturn sum(acc.values())"),
    ("ordered_dict_move_to_end_values", "d = collections.OrderedDict()\nd[2] = 4\nd[3] = 5\nd.move_to_end(2)\nout = x\nfor i, v in enumerate(d.values()):\n    out = out * v + i\nreturn out"),
    ("dict_reorder_by_pop_reinsert", "d = {2: 4, 3: 5}\nd[2] = d.pop(2)\nfor k, v in d.items():\n    x = x * k + v\nreturn x, list(d)"),
    ("subclass_instantiation", "d = MethodDict(k=5)\nreturn x * d['k']"),
    ("subclass_local_mutation", "d = MethodDict(k=5)\nz = d['k'] * x\nd['k'] = 10\nreturn z * d['k']"),
    ("subclass_returned", "d = PlusOneDict(x=x)\nd['y'] = 10\nreturn d"),
    ("dict_keys_contains_view_check", "d = {'a': x}\nreturn x + ('a' in d.keys())"),
    ("items_list_tensor_values", "d = {'p': x, 'q': x * 2}\nreturn [v.sum() for _, v in d.items()]"),
]
snippets("dynamo/test_dicts", "dicts", TENSOR, namespace=NS)

# ---- collections.defaultdict (CPython test_defaultdict) -------------------------------------
DEFAULTDICT = [
    ("int_factory_counts", "d = collections.defaultdict(int)\nfor c in 'abca':\n    d[c] += 1\nreturn x + d['a'], dict(d)"),
    ("list_factory_append", "d = collections.defaultdict(list)\nd['k'].append(1)\nd['k'].append(2)\nreturn x + len(d['k'])"),
    ("missing_inserts_key", "d = collections.defaultdict(int)\nv = d['new']\nreturn x + v + len(d)"),
    ("get_does_not_insert", "d = collections.defaultdict(int)\nv = d.get('new', 7)\nreturn x + v + len(d)"),
    ("contains_does_not_insert", "d = collections.defaultdict(list)\nr = 'k' in d\nreturn x + r + len(d)"),
    ("no_factory_raises_keyerror", "d = collections.defaultdict()\nreturn x + d['k']"),
    ("none_factory_raises_keyerror", "d = collections.defaultdict(None, {'a': 1})\nreturn x + d['a'] + d['b']"),
    ("lambda_factory", "d = collections.defaultdict(lambda: 5)\nreturn x + d['z']"),
    ("factory_attribute", "d = collections.defaultdict(list)\nreturn x + (d.default_factory is list)"),
    ("initial_dict", "d = collections.defaultdict(int, {'a': 3})\nd['b'] += 1\nreturn x + d['a'] + d['b']"),
    ("initial_kwargs", "d = collections.defaultdict(int, a=2)\nreturn x + d['a'] + d['c']"),
    ("copy_keeps_factory", "d = collections.defaultdict(int)\ne = d.copy()\nreturn x + e['q'] + (type(e) is collections.defaultdict)"),
    ("isinstance_dict", "d = collections.defaultdict(int)\nreturn x + isinstance(d, dict)"),
    ("tensor_values_accumulate", "d = collections.defaultdict(lambda: 0)\nfor i in range(3):\n    d[i % 2] = d[i % 2] + x\nreturn d[0] - d[1]"),
    ("returned_defaultdict", "d = collections.defaultdict(list)\nd['a'].append(x + 1)\nreturn d"),
    ("set_factory", "d = collections.defaultdict(set)\nd['a'].add(1)\nd['a'].add(1)\nreturn x + len(d['a'])"),
    ("nested_defaultdict", "d = collections.defaultdict(lambda: collections.defaultdict(int))\nd['a']['b'] += 2\nreturn x + d['a']['b']"),
    ("missing_method_direct", "d = collections.defaultdict(int)\nreturn x + d.__missing__('a') + len(d)"),
    ("tensor_factory", "d = collections.defaultdict(lambda: torch.zeros_like(x))\nd['a'] += x\nreturn d['a'] * 2"),
    ("union_with_dict", "d = collections.defaultdict(int, a=1)\ne = d | {'b': 2}\nreturn x + e['b'] + e['zz'], type(e).__name__"),
]
snippets("cpython/test_defaultdict", "defaultdict", DEFAULTDICT, namespace=NS)

# ---- collections.OrderedDict (CPython test_ordered_dict) ------------------------------------
ORDERED = [
    ("insertion_order", "d = collections.OrderedDict()\nd['b'] = 1\nd['a'] = 2\nreturn x + d['a'], list(d)"),
    ("from_pairs", "d = collections.OrderedDict([('c', 1), ('a', 2)])\nreturn x + len(d), list(d.keys())"),
    ("move_to_end_last", "d = collections.OrderedDict.fromkeys('abc')\nd.move_to_end('a')\nreturn x, list(d)"),
    ("move_to_end_first", "d = collections.OrderedDict.fromkeys('abc')\nd.move_to_end('c', last=False)\nreturn x, list(d)"),
    ("move_to_end_missing_raises", "d = collections.OrderedDict.fromkeys('abc')\nd.move_to_end('z')\nreturn x"),
    ("popitem_last", "d = collections.OrderedDict.fromkeys('abc', 1)\nk, v = d.popitem()\nreturn x + v, k"),
    ("popitem_first", "d = collections.OrderedDict.fromkeys('abc', 1)\nk, v = d.popitem(last=False)\nreturn x + v, k"),
    ("equality_order_sensitive", "a = collections.OrderedDict([('a', 1), ('b', 2)])\nb = collections.OrderedDict([('b', 2), ('a', 1)])\nreturn x + (a == b)"),
    ("equality_with_dict_insensitive", "a = collections.OrderedDict([('a', 1), ('b', 2)])\nreturn x + (a == {'b': 2, 'a': 1})"),
    ("reversed", "d = collections.OrderedDict.fromkeys('abc')\nreturn x, list(reversed(d))"),
    ("setdefault", "d = collections.OrderedDict()\nd.setdefault('k', 3)\nreturn x + d['k']"),
    ("pop", "d = collections.OrderedDict(a=1, b=2)\nreturn x + d.pop('a'), list(d)"),
    ("update_keeps_position", "d = collections.OrderedDict(a=1, b=2)\nd.update(a=3)\nreturn x + d['a'], list(d)"),
    ("delete_then_reinsert_goes_last", "d = collections.OrderedDict(a=1, b=2)\ndel d['a']\nd['a'] = 1\nreturn x, list(d)"),
    ("copy", "d = collections.OrderedDict(a=1)\ne = d.copy()\ne['b'] = 2\nreturn x + len(d) + len(e), type(e).__name__"),
    ("tensor_values", "d = collections.OrderedDict(a=x, b=x * 2)\nd.move_to_end('a')\nreturn list(d.values())"),
    ("items_enumerate", "d = collections.OrderedDict(a=1, b=2)\nfor i, (k, v) in enumerate(d.items()):\n    x = x + i * v\nreturn x"),
    ("clear", "d = collections.OrderedDict(a=1)\nd.clear()\nreturn x + len(d)"),
    ("returned", "d = collections.OrderedDict()\nd['w'] = x * 2\nreturn d"),
    ("fromkeys", "d = collections.OrderedDict.fromkeys([3, 1, 2], 0)\nreturn x + len(d), list(d)"),
]
snippets("cpython/test_ordered_dict", "ordered_dict", ORDERED, namespace=NS)
