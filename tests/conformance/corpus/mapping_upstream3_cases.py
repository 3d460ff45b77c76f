"""Dicts, OrderedDict, UserDict, defaultdict, Counter, ChainMap, sets and heapq as CPython's
test_dict, mapping_tests, test_ordered_dict, test_userdict, test_defaultdict, test_collections,
test_set and test_heapq check them (recast in our own words; dynamo's cpython/3_13 port of these
files guided the choice), with tensors as values and sizes (symbolic at the third call) as keys
and counts: keys equal across types (1, 1.0, True) keeping the first key, setdefault/pop/popitem
order and errors, update from pairs, keywords and mappings with keys(), views that stay live
and support set algebra, dict comparison ignoring order where OrderedDict's does not,
move_to_end and popitem(last=False), __missing__ on dict and UserDict subclasses, UserDict's
data alias and its __contains__/get through __missing__, defaultdict factories that see the
key's absence only, Counter arithmetic dropping non-positive counts, ChainMap writes going to
the first map, set operations with frozensets and their result types, in-place updates that
keep identity, and heapq on tuples holding tensors."""

import collections
import heapq

import torch

from . import snippets


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


class Missing(dict):
    def __missing__(self, key):
        return len(key) if isinstance(key, str) else -1


class CountingHash:
    """A key whose __hash__ and __eq__ count their calls."""

    hashes = 0
    eqs = 0

    def __init__(self, v):
        self.v = v

    def __hash__(self):
        type(self).hashes += 1
        return hash(self.v)

    def __eq__(self, other):
        type(self).eqs += 1
        return isinstance(other, CountingHash) and self.v == other.v


class KeysOnly:
    """A mapping by keys() and __getitem__ alone (what dict() and update() accept)."""

    def __init__(self, data):
        self.data = data

    def keys(self):
        return list(self.data)

    def __getitem__(self, key):
        return self.data[key]


class UserMissing(collections.UserDict):
    def __missing__(self, key):
        return f"missing {key}"


NS = {"torch": torch, "brk": brk, "collections": collections, "heapq": heapq, "Missing": Missing,
      "CountingHash": CountingHash, "KeysOnly": KeysOnly, "UserMissing": UserMissing}

DICTS = [
    ("equal_keys_keep_first", "d = {1: 'int'}\nd[1.0] = 'float'\nd[True] = 'bool'\nreturn x, d, [type(k).__name__ for k in d]"),
    ("literal_equal_keys", "d = {1: x, 1.0: x + 1, True: x + 2}\nreturn d, [type(k).__name__ for k in d]"),
    ("setdefault_returns_existing", "d = {'a': x}\nr1 = d.setdefault('a', x + 1)\nr2 = d.setdefault('b', x + 2)\nr3 = d.setdefault('c')\nreturn r1 is x, r2, r3, list(d)"),
    ("pop_default_and_error", "d = {'a': x}\nr = d.pop('b', 5)\ntry:\n    d.pop('b')\nexcept KeyError as e:\n    m = e.args\nreturn r, m, d.pop('a') is x, d"),
    ("popitem_lifo_and_empty", "d = {'a': 1, 'b': 2}\nd['c'] = 3\nr = [d.popitem(), d.popitem()]\nd.popitem()\ntry:\n    d.popitem()\nexcept KeyError as e:\n    return x, r, str(e)"),
    ("update_forms", "d = {}\nd.update([('a', 1), ('b', 2)])\nd.update(b=20, c=3)\nd.update({'d': x.shape[0]})\nd.update(KeysOnly({'e': 5}))\nreturn x, d"),
    ("update_bad_sequence", "d = {}\ntry:\n    d.update([('a', 1, 2)])\nexcept ValueError as e:\n    return x, 'value error', str(e)"),
    ("dict_from_keys_only_mapping", "return x, dict(KeysOnly({'k': 1, 'j': 2}))"),
    ("dict_kwargs_and_mapping", "return x, dict({'a': 1}, b=2), dict([('a', 1)], a=3)"),
    ("fromkeys_shares_value", "d = dict.fromkeys('abc', [])\nd['a'].append(x.shape[0])\nreturn x, d, d['a'] is d['c']"),
    ("fromkeys_subclass_type", "d = Missing.fromkeys(['a'], 1)\nreturn x, type(d).__name__, d['zz']"),
    ("missing_only_for_getitem", "d = Missing(a=1)\nreturn x, d['abcd'], d.get('abcd'), 'abcd' in d, d[5]"),
    ("keys_view_live_and_setlike", "d = {'a': x, 'b': x}\nk = d.keys()\nd['c'] = x\nreturn len(k), k & {'a', 'z'}, k | {'q'}, k - {'a'}, k ^ {'a', 'q'}"),
    ("items_view_setlike", "d = {'a': 1, 'b': 2}\nreturn x, d.items() & {('a', 1), ('b', 3)}, ('b', 2) in d.items(), ('b', 3) in d.items()"),
    ("values_view_not_equal_itself_copy", "d = {'a': 1}\nreturn x, d.values() == d.values(), list(d.values()) == [1]"),
    ("views_reversed", "d = {'a': 1, 'b': 2, 'c': 3}\nreturn x, list(reversed(d)), list(reversed(d.values())), list(reversed(d.items()))"),
    ("dict_equality_ignores_order", "return x, {'a': 1, 'b': 2} == {'b': 2, 'a': 1}, list({'a': 1, 'b': 2}) == list({'b': 2, 'a': 1})"),
    ("dict_comparison_unsupported", "try:\n    return x, {} < {}\nexcept TypeError:\n    return x, 'no ordering'"),
    ("dict_hash_calls_per_lookup", "CountingHash.hashes = 0\nCountingHash.eqs = 0\nk = CountingHash(1)\nd = {k: x}\nr = d[CountingHash(1)]\nreturn r, CountingHash.hashes, CountingHash.eqs"),
    ("dict_identity_skips_eq", "CountingHash.hashes = 0\nCountingHash.eqs = 0\nk = CountingHash(1)\nd = {k: x}\nr = d[k]\nreturn r, CountingHash.hashes, CountingHash.eqs"),
    ("dict_unhashable_key", "try:\n    {}[[1]] = x\nexcept TypeError as e:\n    return x, str(e)"),
    ("dict_merge_operators", "a = {'a': x, 'b': 1}\nb = {'b': 2, 'c': 3}\nc = a | b\na |= [('z', 0)]\nreturn c, a"),
    ("dict_merge_with_list_error", "try:\n    return x, {'a': 1} | [('b', 2)]\nexcept TypeError:\n    return x, 'error'"),
    ("dict_copy_shallow", "inner = [x]\nd = {'l': inner}\nc = d.copy()\nc['l'].append(x + 1)\nc['new'] = 1\nreturn d, c"),
    ("dict_delete_and_reinsert_order", "d = {'a': 1, 'b': 2, 'c': 3}\ndel d['a']\nd['a'] = x.shape[0]\nreturn x, list(d.items())"),
    ("dict_clear_alias", "d = {'a': x}\ne = d\nd.clear()\nreturn x, e, e is d"),
    ("dict_get_with_size_key", "d = {4: 'four', 7: 'seven'}\nreturn x, d.get(x.shape[0], 'other'), x.shape[0] in d"),
    ("dict_keyed_by_size_tuple", "d = {}\nd[tuple(x.shape)] = x\nd[(x.shape[0],)] = x + 1\nreturn len(d), list(d.values())[0]"),
    ("dict_comprehension_overwrites", "d = {k % 3: v for k, v in enumerate([x, x + 1, x + 2, x + 3])}\nreturn d"),
    ("dict_iteration_mutation_error", "d = {'a': 1}\ntry:\n    for k in d:\n        del d[k]\nexcept RuntimeError as e:\n    return x, str(e)\nreturn x, d"),
    ("dict_repr_nested", "return x, repr({'a': [1, {'b': (2,)}]}), str({1: 'x'})"),
    ("dict_input_mutated", "d['new'] = d['a'] * 2\ndel d['b']\nd['a'] = d['a'] + 1\nreturn len(d)", {"params": "d", "make_args": lambda n: ({"a": torch.randn(n), "b": torch.randn(n)},)}),
    ("dict_input_popitem_order", "k, v = d.popitem()\nd.setdefault('z', v)\nreturn k, list(d)", {"params": "d", "make_args": lambda n: ({"a": torch.randn(n), "b": torch.randn(n)},)}),
    ("dict_values_sum_across_break", "d = {'a': x, 'b': x * 2}\nv = d.values()\nbrk()\nd['c'] = x * 3\nreturn sum(v)"),
]
snippets("cpython/test_dict", "dict3", DICTS, namespace=NS)

ORDERED = [
    ("od_move_to_end_both_ways", "od = collections.OrderedDict.fromkeys('abcd')\nod.move_to_end('b')\nod.move_to_end('d', last=False)\nreturn x, list(od)"),
    ("od_move_to_end_missing", "od = collections.OrderedDict(a=1)\ntry:\n    od.move_to_end('z')\nexcept KeyError as e:\n    return x, e.args"),
    ("od_popitem_first", "od = collections.OrderedDict([('a', x), ('b', x + 1)])\nk, v = od.popitem(last=False)\nreturn k, v, list(od)"),
    ("od_equality_is_order_sensitive", "a = collections.OrderedDict([('a', 1), ('b', 2)])\nb = collections.OrderedDict([('b', 2), ('a', 1)])\nreturn x, a == b, a == dict(b), dict(a) == b"),
    ("od_reinsert_keeps_position", "od = collections.OrderedDict([('a', 1), ('b', 2)])\nod['a'] = x.shape[0]\nreturn x, list(od.items())"),
    ("od_delete_reinsert_moves", "od = collections.OrderedDict([('a', 1), ('b', 2)])\ndel od['a']\nod['a'] = 3\nreturn x, list(od)"),
    ("od_reversed_views", "od = collections.OrderedDict([('a', x), ('b', x + 1)])\nreturn list(reversed(od)), list(reversed(od.values()))"),
    ("od_copy_type_and_order", "od = collections.OrderedDict([('b', 1), ('a', 2)])\nc = od.copy()\nc.move_to_end('b')\nreturn x, type(c).__name__, list(od), list(c)"),
    ("od_merge_type", "od = collections.OrderedDict(a=1)\nr = od | {'b': 2}\nl = {'b': 2} | od\nreturn x, type(r).__name__, type(l).__name__, list(r)"),
    ("od_setdefault_and_pop", "od = collections.OrderedDict()\nod.setdefault('a', x)\nod.setdefault('b', x + 1)\nv = od.pop('a')\nreturn v, list(od)"),
    ("od_fromkeys_subclass", "class OD(collections.OrderedDict):\n    pass\nod = OD.fromkeys('ab', 0)\nreturn x, type(od).__name__, list(od.items())"),
    ("od_subclass_setitem_hook", "class Logged(collections.OrderedDict):\n    def __setitem__(self, k, v):\n        super().__setitem__(k, v * 2)\nod = Logged()\nod['a'] = x\nod.update(b=x)\nreturn dict(od)"),
]
snippets("cpython/test_ordered_dict", "odict3", ORDERED, namespace=NS)

USERDICT = [
    ("userdict_data_alias", "src = {'a': x}\nu = collections.UserDict(src)\nu['b'] = x + 1\nreturn len(src), u.data is src, dict(u)"),
    ("userdict_missing_getitem_only", "u = UserMissing(a=1)\nreturn x, u['zz'], u.get('zz'), 'zz' in u"),
    ("userdict_copy_type", "u = collections.UserDict(a=x)\nc = u.copy()\nc['b'] = 1\nreturn type(c).__name__, list(u), list(c)"),
    ("userdict_or_types", "u = collections.UserDict(a=1)\nr = u | {'b': 2}\nl = {'b': 2} | u\nu |= {'c': 3}\nreturn x, type(r).__name__, type(l).__name__, dict(u)"),
    ("userdict_setitem_override_used_by_update", "class Up(collections.UserDict):\n    def __setitem__(self, k, v):\n        super().__setitem__(k.upper(), v)\nu = Up()\nu.update(a=x)\nu['b'] = x * 2\nreturn dict(u)"),
    ("userdict_iteration_and_eq", "u = collections.UserDict(b=1, a=2)\nreturn x, list(u), u == {'a': 2, 'b': 1}, len(u)"),
    ("userdict_pop_popitem", "u = collections.UserDict(a=x, b=x + 1)\nv = u.pop('a')\nk, w = u.popitem()\nreturn v, k, w, len(u)"),
    ("userdict_fromkeys_type", "u = collections.UserDict.fromkeys('ab', x.shape[0])\nreturn x, type(u).__name__, dict(u)"),
    ("userdict_contains_override", "class Lower(collections.UserDict):\n    def __contains__(self, k):\n        return str(k).lower() in self.data\nu = Lower(a=1)\nreturn x, 'A' in u, u.get('A', 'default')"),
]
snippets("cpython/test_userdict", "userdict3", USERDICT, namespace=NS)

COLLECTIONS = [
    ("defaultdict_factory_list", "d = collections.defaultdict(list)\nfor i, t in enumerate([x, x + 1, x + 2]):\n    d[i % 2].append(t)\nreturn dict(d)"),
    ("defaultdict_get_does_not_create", "d = collections.defaultdict(int)\nr = d.get('a')\nc = 'a' in d\nd['b'] += x.shape[0]\nreturn x, r, c, dict(d)"),
    ("defaultdict_none_factory_keyerror", "d = collections.defaultdict(None)\ntry:\n    d['a']\nexcept KeyError as e:\n    return x, e.args"),
    ("defaultdict_factory_lambda_counts", "calls = []\nd = collections.defaultdict(lambda: calls.append(1) or len(calls))\nr = [d['a'], d['b'], d['a']]\nreturn x, r, calls"),
    ("defaultdict_copy_keeps_factory", "d = collections.defaultdict(list, a=[1])\nc = d.copy()\nc['b'].append(x.shape[0])\nreturn x, type(c).__name__, c.default_factory is list, dict(c), dict(d)"),
    ("counter_arith_drops_nonpositive", "a = collections.Counter(a=3, b=1)\nb = collections.Counter(a=1, b=2)\nreturn x, dict(a - b), dict(a + b), dict(a & b), dict(a | b)"),
    ("counter_subtract_keeps_negative", "a = collections.Counter(a=1)\na.subtract(a=3, b=1)\nreturn x, dict(a), dict(+a), dict(-a)"),
    ("counter_most_common_ties", "c = collections.Counter('abracadabra')\nreturn x, c.most_common(3), c.most_common()[-1]"),
    ("counter_of_sizes", "c = collections.Counter([x.shape[0], 3, x.shape[0], 5])\nreturn x, c[x.shape[0]], c[99], sorted(c.elements())"),
    ("counter_update_from_mapping", "c = collections.Counter(a=1)\nc.update({'a': 2, 'b': 1})\nc.update('ab')\nreturn x, dict(c), c.total()"),
    ("chainmap_writes_first", "a = {'k': 1}\nb = {'k': 2, 'j': 3}\ncm = collections.ChainMap(a, b)\ncm['j'] = x.shape[0]\ndel cm['k']\nreturn x, a, b, cm['k'], list(cm)"),
    ("chainmap_new_child_parents", "cm = collections.ChainMap({'a': 1})\nchild = cm.new_child({'a': 2})\nreturn x, child['a'], child.parents['a'], len(child.maps)"),
    ("chainmap_missing_delete", "cm = collections.ChainMap({}, {'a': 1})\ntry:\n    del cm['a']\nexcept KeyError as e:\n    return x, 'cannot delete from later maps', str(e)[:40]"),
    ("deque_rotate_and_maxlen", "q = collections.deque(range(5), maxlen=4)\nq.rotate(1)\nq.appendleft(x.shape[0])\nreturn x, list(q)"),
    ("deque_extendleft_reverses", "q = collections.deque([1])\nq.extendleft([2, 3])\nreturn x, list(q), q.index(1)"),
    ("deque_of_tensors_pop_both", "q = collections.deque([x, x + 1, x + 2])\nreturn q.pop(), q.popleft(), len(q)"),
    ("namedtuple_defaults_and_make", "P = collections.namedtuple('P', 'a b c', defaults=(0, 1))\np = P(x.shape[0])\nq = P._make([1, 2, 3])\nreturn x, tuple(p), tuple(q), P._field_defaults"),
    ("namedtuple_asdict", "P = collections.namedtuple('P', ['a', 'b'])\nreturn P(x, 1)._asdict()"),
]
snippets("cpython/test_collections", "coll3", COLLECTIONS, namespace=NS)

SETS = [
    ("set_ops_result_types", "s = {1, 2}\nf = frozenset({2, 3})\nreturn x, type(s | f).__name__, type(f | s).__name__, type(f & s).__name__"),
    ("set_inplace_keeps_identity", "s = {1, 2}\nt = s\ns |= {3}\ns &= {1, 3, 4}\ns -= {1}\ns ^= {9}\nreturn x, t is s, sorted(t)"),
    ("set_methods_accept_iterables", "s = {1, 2}\nreturn x, sorted(s.union([3], (4,))), sorted(s.intersection(range(2))), s.isdisjoint([5])"),
    ("set_operator_requires_set", "try:\n    return x, {1} | [2]\nexcept TypeError:\n    return x, 'error'"),
    ("set_comparisons", "a = {1, 2}\nb = {1, 2, 3}\nreturn x, a < b, a <= a, b > a, a < a, a == frozenset(a)"),
    ("set_remove_missing", "s = {1}\ns.discard(5)\ntry:\n    s.remove(5)\nexcept KeyError as e:\n    return x, e.args"),
    ("set_pop_empty", "try:\n    set().pop()\nexcept KeyError as e:\n    return x, str(e)"),
    ("set_of_equal_numbers", "s = {1, 1.0, True}\nreturn x, len(s), type(next(iter(s))).__name__"),
    ("frozenset_as_key_and_member", "f = frozenset({1, 2})\nd = {f: x}\ns = {f, frozenset([2, 1])}\nreturn d[frozenset([2, 1])], len(s)"),
    ("set_of_sizes_and_dims", "s = {x.shape[0], x.dim(), 1}\nreturn x, sorted(s), x.shape[0] in s"),
    ("set_update_multiple", "s = set()\ns.update([1], (2,), {3: 'v'})\ns.difference_update([1], [2])\nreturn x, sorted(s)"),
    ("set_symmetric_update", "s = {1, 2, 3}\ns.symmetric_difference_update([3, 4])\nreturn x, sorted(s)"),
    ("set_copy_independent", "s = {1}\nc = s.copy()\nc.add(2)\nreturn x, sorted(s), sorted(c)"),
    ("set_contains_unhashable", "try:\n    return x, [1] in {1}\nexcept TypeError as e:\n    return x, str(e)"),
    ("set_input_mutated", "s.add(len(s))\ns.discard(0)\nreturn x * len(s)", {"params": "x, s", "make_args": lambda n: (torch.randn(n), {0, 1, n})}),
]
snippets("cpython/test_set", "set3", SETS, namespace=NS)

HEAPS = [
    ("heap_push_pop_order", "h = []\nfor v in [5, 1, 4, x.shape[0], 2]:\n    heapq.heappush(h, v)\nreturn x, [heapq.heappop(h) for _ in range(len(h))]"),
    ("heapify_in_place", "h = [9, 3, 7, 1]\nr = heapq.heapify(h)\nreturn x, r, h[0], sorted(h)"),
    ("heap_tuples_with_tensors", "h = []\nfor i, t in enumerate([x, x * 2, x * 3]):\n    heapq.heappush(h, (-i, i, t))\nreturn [heapq.heappop(h)[2] for _ in range(3)]"),
    ("heap_tie_on_tensor_errors", "h = [(1, x)]\ntry:\n    heapq.heappush(h, (1, x + 1))\nexcept RuntimeError:\n    return x, 'tensor compare'\nexcept TypeError:\n    return x, 'type error'\nreturn x, len(h)"),
    ("heappushpop_and_replace", "h = [1, 3, 5]\na = heapq.heappushpop(h, 0)\nb = heapq.heapreplace(h, 0)\nreturn x, a, b, h"),
    ("nlargest_nsmallest_keys", "vals = [3, -7, 5, 1, -2]\nreturn x, heapq.nlargest(2, vals), heapq.nsmallest(2, vals, key=abs), heapq.nlargest(10, vals, key=lambda v: -v)"),
    ("merge_sorted_streams", "return x, list(heapq.merge([1, 4, 7], [2, 5], [3, 6])), list(heapq.merge([3, 1], [2, 0], reverse=True))"),
    ("heappop_empty", "try:\n    heapq.heappop([])\nexcept IndexError as e:\n    return x, str(e)"),
    ("heap_of_sums_selects_tensors", "ts = [x * k for k in (3, -1, 2, 0.5)]\nbest = heapq.nlargest(2, ts, key=lambda t: float(t.sum()))\nreturn best"),
]
snippets("cpython/test_heapq", "heapq3", HEAPS, namespace=NS)
