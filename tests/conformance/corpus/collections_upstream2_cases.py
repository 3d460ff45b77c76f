"""Cases modelled on dynamo's test_dicts, test_sets and test_list (recast in our own words).

Dicts: subclasses (plain, with extra methods, with __setitem__, __iter__ or keys() of their
own, a dotdict whose attributes are its items), str-Enum members as keys and in comparisons,
torch.Size keys, membership and lookups that a later call's dict changes, key order (a key
popped and put back moves to the end; OrderedDict.move_to_end), dicts mutated and returned,
copies that must not alias, a mapping with only keys() and __getitem__ given to dict() and
update(), defaultdict factories, UserDict, fromkeys, `|` and `|=`, views compared with sets,
and an __eq__ that raises while two dicts are compared. Sets: of tensors' sizes and dtypes,
set algebra on inputs, frozenset keys, iteration order of small ints, mutations of input sets.
Lists: slicing, sort with key over tensors, inputs mutated in place, `+=` aliasing, list
comprehensions over tensors, index() and count() comparing tensors by identity first."""

import collections
import enum
import operator
from collections import OrderedDict, UserDict, defaultdict

import torch

from . import snippets


class SimpleDict(dict):
    pass


class MethodDict(dict):
    def add_1(self, x):
        return x + 1


class SetItemDict(dict):
    def __setitem__(self, key, value):
        super().__setitem__(key, value + 1)


class ReversedDict(dict):
    def __iter__(self):
        return reversed(list(self.keys()))


class KeysDict(dict):
    def keys(self):
        return ["bar", "foo"]


class dotdict(dict):  # noqa: N801  (the name such helpers have in the wild)
    __getattr__ = dict.get
    __setattr__ = dict.__setitem__
    __delattr__ = dict.__delitem__


class ODSubclass(OrderedDict):
    def keys(self):
        return super().keys()


class DummyUserDict(UserDict):
    pass


class FakeMapping:
    def __init__(self, value):
        self._value = value
        self.keys = lambda: ["a", "b", "c"]  # not a method: an instance attribute

    def __getitem__(self, key):
        return self._value


class TensorDim(str, enum.Enum):
    DDP = "ddp"
    FSDP = "fsdp"


class BadCmpError(Exception):
    pass


class BadCmp:
    def __eq__(self, other):
        raise BadCmpError

    def __hash__(self):
        return 1


NS = {
    "torch": torch, "collections": collections, "operator": operator, "OrderedDict": OrderedDict,
    "UserDict": UserDict, "defaultdict": defaultdict, "SimpleDict": SimpleDict, "MethodDict": MethodDict,
    "SetItemDict": SetItemDict, "ReversedDict": ReversedDict, "KeysDict": KeysDict, "dotdict": dotdict,
    "ODSubclass": ODSubclass, "DummyUserDict": DummyUserDict, "FakeMapping": FakeMapping, "TensorDim": TensorDim,
    "BadCmp": BadCmp, "BadCmpError": BadCmpError,
}


def small_int_dict(n):
    d = {2: 4, 3: 5}
    if n > 4:
        d[2] = d.pop(2)  # moves 2 to the end
    return torch.randn(n), d


def simple_dict_input(n):
    sd = SimpleDict()
    sd[2] = 5
    sd[4] = 10
    if n > 4:
        sd[6] = 15
    sd.attr = 4
    return torch.randn(n), sd


DICTS = [
    ("subclass_instantiation", "sd = SimpleDict(x=5)\nreturn sd['x'] * x"),
    ("subclass_local_mutation", "sd = SimpleDict(x=5)\nz = sd['x'] * x\nsd['x'] = 10\nreturn z * sd['x']"),
    ("subclass_extra_method", "sd = MethodDict(x=5)\nz = sd['x'] * x\nsd['x'] = 10\nreturn sd.add_1(z * sd['x'])"),
    ("subclass_returned", "sd = SimpleDict(x=5 * x)\nsd['y'] = 10\nreturn sd"),
    ("subclass_setitem_override", "sd = SetItemDict(x=5 * x)\nsd['y'] = 10\nreturn sd, type(sd).__name__"),
    ("subclass_setitem_override_update", "sd = SetItemDict()\nsd.update({'a': 1})\nsd.setdefault('b', 2)\nsd['c'] = 3\nreturn x, dict(sd)"),
    ("str_enum_member_compares", "val = x.sin()\nif TensorDim.DDP == 'ddp':\n    val += x.cos()\nif 'ddp' == TensorDim.DDP:\n    val += x.cos()\nreturn val, {TensorDim.DDP: 1}['ddp']"),
    ("str_enum_member_as_key", "d = {'ddp': x, 'fsdp': x * 2}\nreturn d[TensorDim.FSDP], TensorDim.DDP in d, list(d)"),
    ("custom_iter_subclass", "d = ReversedDict({'foo': 1, 'bar': 2})\nd['baz'] = 4\nreturn x * d['foo'] * d['bar'], list(d), [k for k in d], list(d.keys())"),
    ("custom_keys_subclass", "d = KeysDict({'foo': 1, 'bar': 2})\nreturn x * d['foo'], list(d.keys()), list(d), dict(d)"),
    ("dotdict_get_and_attr", "config = dotdict({'a': 1, 'b': 2})\nconfig.c = 3\nreturn x * config.get('a', 3) * config.b * config.c, config.missing, dict(config)"),
    ("ordered_dict_move_to_end_values", "d = OrderedDict()\nd[2] = 4\nd[3] = 5\nd.move_to_end(2)\ny = 0\nfor idx, value in enumerate(d.values()):\n    if idx == 0:\n        y += torch.sin(x * value)\n    else:\n        y += torch.cos(x * value)\nreturn y, list(d)"),
    ("ordered_dict_subclass_move_to_end", "d = ODSubclass()\nd[2] = 4\nd[3] = 5\nd.move_to_end(2)\nd.move_to_end(3, last=False)\nreturn [x * v for v in d.values()], list(d.keys())"),
    ("ordered_dict_popitem_first", "d = OrderedDict(a=x, b=x + 1, c=x + 2)\nk, v = d.popitem(last=False)\nreturn k, v, list(d)"),
    ("ordered_dict_equality_is_ordered", "a = OrderedDict(a=1, b=2)\nb = OrderedDict(b=2, a=1)\nreturn x, a == b, dict(a) == dict(b), a == dict(b)"),
    ("dict_mutation_side_effect_returns_input", "d = {'a': x, 'b': x * 2}\nr = (lambda d: (d.__setitem__('c', d['a'] + d.pop('b')), d)[1])(d)\nreturn r is d, d"),
    ("copy_does_not_alias", "d0 = {}\nd1 = d0.copy()\nd1[0] = 1\nreturn x + 1, d0, d1"),
    ("fake_mapping_to_dict", "return dict(FakeMapping(x)), x"),
    ("fake_mapping_update", "d = {'z': 0}\nd.update(FakeMapping(x * 2))\nreturn d"),
    ("fake_mapping_double_star", "def f(**kw):\n    return kw\nreturn f(**FakeMapping(x))"),
    ("user_dict_subclass", "d = DummyUserDict({'a': x})\nd['b'] = x * 2\nreturn d['a'] + d['b'], len(d), list(d), 'a' in d, d.get('c', 7)"),
    ("user_dict_data_attribute", "d = DummyUserDict(a=1)\nd.data['b'] = 2\nreturn x, dict(d), d.data"),
    ("defaultdict_list_factory", "d = defaultdict(list)\nd['a'].append(x)\nd['b'].append(x * 2)\nd['a'].append(x * 3)\nreturn d, d.default_factory is list"),
    ("defaultdict_lambda_factory", "d = defaultdict(lambda: x.new_zeros(()))\nd['a'] += 1\nreturn d['a'], d['missing'] + x, list(d)"),
    ("defaultdict_get_does_not_insert", "d = defaultdict(int)\nv = d.get('a')\nd['b'] += 1\nreturn x, v, dict(d), 'a' in d"),
    ("fromkeys_shared_list_value", "d = dict.fromkeys(['a', 'b'], [])\nd['a'].append(x)\nreturn len(d['b']), d['a'] is d['b']"),
    ("or_and_ior_operators", "a = {'a': x, 'b': 1}\nb = {'b': 2, 'c': x * 2}\nc = a | b\na |= {'d': 3}\nreturn c, a"),
    ("keys_view_compared_with_set", "d = {'a': x, 'b': 1}\nreturn x, d.keys() == {'a', 'b'}, d.keys() & {'a', 'z'}, d.items() >= {('b', 1)}, d.keys() - {'a'}"),
    ("values_view_not_equal_to_itself", "d = {'a': 1}\nv = d.values()\nreturn x, v == v, v == d.values()"),
    ("dict_compare_raising_eq", "a = {1: BadCmp()}\nb = {1: BadCmp()}\ntry:\n    same = a == b\nexcept BadCmpError:\n    return x * 2, 'raised'\nreturn x, same"),
    ("dict_compare_identical_value_skips_eq", "v = BadCmp()\nreturn x, {1: v} == {1: v}"),
    ("torch_size_keys", "d = {torch.Size([x.shape[0], 2]): 'a', torch.Size([2]): 'b'}\nkey = torch.Size([x.shape[0], 2])\nreturn x, d.get(key), key in d, d[torch.Size([2])]"),
    ("tensor_keys_by_identity", "a, b = x * 1, x * 1\nd = {a: 'a', b: 'b'}\nreturn d[a], d[b], len(d), a in d, (x * 1) in d"),
    ("module_keys", "m1, m2 = torch.nn.ReLU(), torch.nn.Tanh()\nd = {m1: 1, m2: 2}\nreturn sum(m(x) * v for m, v in d.items()), d[m2]"),
    ("dict_items_unpack_sorted", "d = {'b': x, 'a': x * 2, 'c': x * 3}\nreturn [k for k, _ in sorted(d.items())], sorted(d, reverse=True), max(d)"),
    ("nested_dict_comprehension", "return {i: {j: x * i + j for j in range(2)} for i in range(3)}"),
    ("dict_from_zip_and_enumerate", "return dict(zip('abc', x.unbind()[:3])), dict(enumerate(['p', 'q']))", {"make_args": lambda n: (torch.randn(n),)}),
]
snippets("dynamo/test_dicts", "dicts2", DICTS, namespace=NS)

DICT_INPUTS = [
    ("input_dict_key_order_loop", "for key, value in d.items():\n    x = x * key + value\nreturn x", {"make_args": small_int_dict}),
    ("input_dict_key_order_getitem", "for key in d:\n    x = x * key + d[key]\nreturn x, list(d)", {"make_args": small_int_dict}),
    ("input_subclass_methods", "for value in sd.values():\n    x = x * value\nfor key in sd:\n    x = x * key\nfor k, v in sd.items():\n    x = x * k * v\nx = x * (2 if 1 in sd else 3)\nx = x * sd.get(2, 0) * sd.get(3, 4)\nreturn len(sd) * x * sd.attr", {"params": "x, sd", "make_args": simple_dict_input}),
    ("input_subclass_mutated", "for value in sd.values():\n    x = x * value\nsd[6] = 14\nfor k, v in sd.items():\n    x = x * k * v\nreturn x, sd", {"params": "x, sd", "make_args": simple_dict_input}),
    ("input_dict_pop_and_set", "d['c'] = d['a'] + d.pop('b')\nreturn d", {"params": "d", "make_args": lambda n: ({'a': torch.randn(n), 'b': torch.randn(n)},)}),
    ("input_dict_order_values_sum", "c = 0\nfor v in d.values():\n    c += v\nreturn c, list(d)", {"params": "d", "make_args": lambda n: ((lambda a, b: {'a': a, 'b': b} if n < 5 else {'b': b, 'a': a})(torch.rand(n), torch.rand(n)),)}),
    ("input_dict_membership_changes", "return x * (2 if 1 in d else 3)", {"make_args": lambda n: (torch.randn(n), {2: 5, 4: 10} if n < 5 else {1: 15, 2: 5})}),
    ("input_dict_unused_keys_change", "return x * d['a']", {"make_args": lambda n: (torch.randn(n), {'a': 2, 'b': 3, 'c': 5} if n < 5 else {'a': 2, 'b': 3, 'd': 10})}),
    ("input_dict_type_keys", "return x * d[list], len(d)", {"make_args": lambda n: (torch.randn(n), {list: 2, dict: 3, OrderedDict: 5} if n < 5 else {list: 2, OrderedDict: 5, defaultdict: 10})}),
    ("input_defaultdict_mutated", "d['new'].append(x)\nreturn len(d), d['old']", {"make_args": lambda n: (torch.randn(n), defaultdict(list, old=[1]))}),
    ("input_ordered_dict_move_to_end", "d.move_to_end('a')\nd['z'] = x\nreturn list(d)", {"make_args": lambda n: (torch.randn(n), OrderedDict(a=1, b=2))}),
]
snippets("dynamo/test_dicts", "dicts2_inputs", DICT_INPUTS, namespace=NS, params="x, d")


SETS = [
    ("set_of_sizes_dedup", "s = {x.shape[0], 3, 4, x.shape[0]}\nreturn x * len(s), sorted(s)"),
    ("set_of_dtypes", "s = {x.dtype, torch.float32, torch.int64}\nreturn x, len(s), torch.int64 in s"),
    ("frozenset_as_dict_key", "d = {frozenset({1, 2}): x, frozenset(): x * 2}\nreturn d[frozenset({2, 1})], d[frozenset()]"),
    ("set_comprehension_of_ints", "return x, {i % 3 for i in range(10)}"),
    ("set_iteration_order_small_ints", "return x, list({5, 3, 1, 4}), [v for v in {10, 2, 7}]"),
    ("set_algebra_chain", "a = {1, 2, 3}\nb = {2, 3, 4}\nreturn x, (a | b) - (a & b), a ^ b, a <= (a | b), a.isdisjoint({9})"),
    ("set_pop_small_ints", "s = {3, 1, 2}\nfirst = s.pop()\nreturn x * first, s"),
    ("set_remove_missing_caught", "s = {1}\ntry:\n    s.remove(2)\nexcept KeyError as e:\n    return x, e.args\nreturn x"),
    ("set_update_from_generator", "s = {1}\ns.update(v * 2 for v in range(3))\nreturn x, s"),
    ("set_of_strings_membership", "s = {'relu', 'gelu'}\nreturn torch.relu(x) if 'relu' in s else x, sorted(s)"),
    ("set_contains_tensor_identity", "s = {x}\nreturn x in s, (x + 0) in s, len(s)"),
    ("frozenset_union_with_set_type", "f = frozenset({1}) | {2}\ns = {3} | frozenset({4})\nreturn x, type(f).__name__, type(s).__name__, f, s"),
]
snippets("dynamo/test_sets", "sets2", SETS, namespace=NS)

SET_INPUTS = [
    ("input_set_add_discard", "s.add(x.shape[0])\ns.discard(1)\nreturn x * len(s)", {"make_args": lambda n: (torch.randn(n), {1, 2, 3})}),
    ("input_set_difference_update", "s -= {2}\ns |= {9}\nreturn x, s", {"make_args": lambda n: (torch.randn(n), {1, 2, 3})}),
    ("input_set_membership_changes", "return x * (2 if 5 in s else 3)", {"make_args": lambda n: (torch.randn(n), {1, 2} if n < 5 else {5, 6})}),
    ("input_frozenset_iterated", "t = 0\nfor v in sorted(s):\n    t = t + x * v\nreturn t", {"make_args": lambda n: (torch.randn(n), frozenset({1, 2, n}))}),
]
snippets("dynamo/test_sets", "sets2_inputs", SET_INPUTS, namespace=NS, params="x, s")


LISTS = [
    ("slice_assign_from_tensors", "l = list(x.unbind())\nl[1:3] = [x.sum(), x.mean()]\nreturn torch.stack(l)"),
    ("sort_tensors_by_key", "l = [x * 3, x, x * 2]\nl.sort(key=lambda t: float(t.sum()))\nreturn l"),
    ("sorted_by_item_of_tensor", "ts = list(x.unbind())\nreturn sorted(ts, key=lambda t: t.item())"),
    ("index_and_count_identity_first", "a = x * 1\nl = [a, a, x]\nreturn l.index(x), l.count(a)"),
    ("iadd_aliases_extend", "l = [x]\nalias = l\nl += [x * 2]\nreturn alias is l, len(alias)"),
    ("list_mul_then_mutate_inner", "l = [[0]] * 3\nl[0].append(x)\nreturn len(l[2]), l[2][1] is x"),
    ("reversed_and_enumerate_start", "return [i * t for i, t in enumerate(reversed(list(x.unbind())), 1)]"),
    ("list_pop_insert_roundtrip", "l = list(range(5))\nv = l.pop(1)\nl.insert(-1, v)\nreturn x + v, l"),
    ("list_del_slice_step", "l = list(range(8))\ndel l[::3]\nreturn x, l"),
    ("list_comprehension_nested_tensors", "return [[r * c for c in range(2)] for r in x.unbind()]"),
    ("list_equality_of_tensors_raises", "a = [x, x + 1]\nb = [x, x + 1]\nreturn a == b"),
    ("list_contains_size", "return x, x.shape[0] in [4, 7], [x.shape[0]] * 2"),
    ("list_clear_alias_sees_it", "l = [x, x]\nm = l\nl.clear()\nreturn m, len(m)"),
    ("list_sort_stability", "l = [(1, 'b'), (0, 'a'), (1, 'a'), (0, 'b')]\nl.sort(key=operator.itemgetter(0))\nreturn x, l"),
]
snippets("dynamo/test_list", "lists2", LISTS, namespace=NS)

LIST_INPUTS = [
    ("input_list_append_and_return", "l.append(x)\nreturn l", {"make_args": lambda n: (torch.randn(n), [1, 2])}),
    ("input_list_setitem_slice", "l[:1] = [x, x * 2]\nreturn len(l)", {"make_args": lambda n: (torch.randn(n), [1, 2, 3])}),
    ("input_list_sort_reverse", "l.sort(reverse=True)\nreturn x * l[0], l", {"make_args": lambda n: (torch.randn(n), [3, 1, n])}),
    ("input_list_of_tensors_inplace", "for t in l:\n    t.mul_(2)\nreturn x + sum(l)", {"make_args": lambda n: (torch.randn(n), [torch.randn(n), torch.randn(n)])}),
    ("input_list_length_changes", "return x * len(l), l[-1]", {"make_args": lambda n: (torch.randn(n), list(range(n)))}),
]
snippets("dynamo/test_list", "lists2_inputs", LIST_INPUTS, namespace=NS, params="x, l")
