"""The collections module inside compiled code: namedtuple, deque, Counter, ChainMap,
UserDict and UserList (CPython test_collections and test_deque): construction, the
type-specific methods, equality, conversion back to builtins, and errors."""

import collections

import torch

from . import snippets

Point = collections.namedtuple("Point", ["x", "y"])
Point3 = collections.namedtuple("Point3", "x y z", defaults=[0])


class PointWithMethod(collections.namedtuple("PointWithMethod", "a b")):
    def total(self):
        return self.a + self.b


NS = {"torch": torch, "collections": collections, "Point": Point, "Point3": Point3, "PointWithMethod": PointWithMethod}

NAMEDTUPLE = [
    ("fields_by_name", "p = Point(1, 2)\nreturn x * p.x + p.y"),
    ("fields_by_index", "p = Point(1, 2)\nreturn x * p[0] + p[1]"),
    ("keyword_construction", "p = Point(y=5, x=2)\nreturn x + p.x * 10 + p.y"),
    ("unpack", "a, b = Point(3, 4)\nreturn x + a * b"),
    ("defaults", "p = Point3(1, 2)\nreturn x + p.z, p"),
    ("replace", "p = Point(1, 2)._replace(y=9)\nreturn x + p.y, p"),
    ("asdict", "d = Point(1, 2)._asdict()\nreturn x + d['y'], d"),
    ("make", "p = Point._make([7, 8])\nreturn x + p.x, p"),
    ("fields_attribute", "return x + len(Point._fields), Point._fields"),
    ("field_defaults", "return x, Point3._field_defaults"),
    ("equality_with_tuple", "return x + (Point(1, 2) == (1, 2))"),
    ("len_and_iter", "p = Point(1, 2)\nreturn x + len(p) + sum(p)"),
    ("tensor_fields", "p = Point(x, x * 2)\nreturn p.x + p.y"),
    ("return_namedtuple_of_tensors", "return Point(x.sin(), x.cos())"),
    ("input_namedtuple", "return p.x * p.y", {"params": "p", "make_args": lambda n: (Point(torch.randn(n), torch.randn(n)),)}),
    ("input_namedtuple_replace_returned", "return p._replace(x=p.x + 1)", {"params": "p", "make_args": lambda n: (Point(torch.randn(n), torch.randn(n)),)}),
    ("subclass_method", "p = PointWithMethod(x, 3)\nreturn p.total()"),
    ("too_many_args_raises", "p = Point(1, 2, 3)\nreturn x"),
    ("missing_attribute_raises", "p = Point(1, 2)\nreturn x + p.z"),
    ("immutable_setattr_raises", "p = Point(1, 2)\np.x = 5\nreturn x"),
    ("isinstance_tuple", "return x + isinstance(Point(1, 2), tuple)"),
    ("slicing_returns_tuple", "p = Point(1, 2)\nreturn x, p[:1], type(p[:1]).__name__"),
    ("namedtuple_as_dict_key", "d = {Point(1, 2): 'a'}\nreturn x + len(d[(1, 2)])"),
    ("torch_return_types", "v, i = torch.max(x, 0)\nr = torch.max(x, 0)\nreturn v + r.values, i == r.indices"),
    ("torch_return_types_fields", "r = torch.sort(x)\nreturn r.values, r.indices, type(r).__name__"),
]
snippets("cpython/test_collections", "namedtuple", NAMEDTUPLE, namespace=NS)

DEQUE = [
    ("append_popleft", "d = collections.deque([1, 2])\nd.append(3)\nreturn x + d.popleft(), list(d)"),
    ("appendleft_pop", "d = collections.deque([1, 2])\nd.appendleft(0)\nreturn x + d.pop(), list(d)"),
    ("extend_extendleft", "d = collections.deque()\nd.extend([1, 2])\nd.extendleft([3, 4])\nreturn x, list(d)"),
    ("maxlen_drops_oldest", "d = collections.deque(maxlen=2)\nfor i in range(5):\n    d.append(i)\nreturn x + sum(d), list(d)"),
    ("maxlen_appendleft_drops_right", "d = collections.deque([1, 2], maxlen=2)\nd.appendleft(0)\nreturn x, list(d)"),
    ("maxlen_attribute", "d = collections.deque([], 3)\nreturn x + d.maxlen"),
    ("rotate_right", "d = collections.deque(range(5))\nd.rotate(2)\nreturn x, list(d)"),
    ("rotate_left", "d = collections.deque(range(5))\nd.rotate(-1)\nreturn x, list(d)"),
    ("pop_empty_raises", "d = collections.deque()\nreturn x + d.pop()"),
    ("popleft_empty_raises", "d = collections.deque()\nreturn x + d.popleft()"),
    ("index_and_count", "d = collections.deque('abcab')\nreturn x + d.index('b') + d.count('a')"),
    ("remove", "d = collections.deque([1, 2, 1])\nd.remove(1)\nreturn x, list(d)"),
    ("remove_missing_raises", "d = collections.deque([1])\nd.remove(2)\nreturn x"),
    ("insert", "d = collections.deque([1, 3])\nd.insert(1, 2)\nreturn x, list(d)"),
    ("reverse", "d = collections.deque([1, 2, 3])\nd.reverse()\nreturn x, list(d)"),
    ("clear_len_bool", "d = collections.deque([1])\nd.clear()\nreturn x + len(d) + bool(d)"),
    ("getitem_negative", "d = collections.deque([1, 2, 3])\nreturn x + d[-1] + d[0]"),
    ("setitem", "d = collections.deque([1, 2, 3])\nd[1] = 9\nreturn x, list(d)"),
    ("equality", "return x + (collections.deque([1]) == collections.deque([1])) + (collections.deque([1]) == [1])"),
    ("copy", "d = collections.deque([1])\ne = d.copy()\ne.append(2)\nreturn x + len(d)"),
    ("tensor_queue", "q = collections.deque([x])\nfor _ in range(3):\n    q.append(q.popleft() * 2)\nreturn q[0]"),
    ("sliding_window_of_tensors", "w = collections.deque(maxlen=2)\nfor t in x.unbind(0):\n    w.append(t)\nreturn w[0] + w[1]"),
    ("in_operator", "d = collections.deque([1, 2])\nreturn x + (2 in d)"),
    ("iterate_and_mutate_raises", "d = collections.deque([1, 2])\nfor v in d:\n    d.append(v)\nreturn x"),
    ("return_deque", "d = collections.deque([x, x + 1])\nreturn d"),
    ("input_deque_mutated", "d.append(d[0] * 2)\nreturn len(d)", {"params": "d", "make_args": lambda n: (collections.deque([torch.randn(n)]),)}),
]
snippets("cpython/test_deque", "deque", DEQUE, namespace=NS)

COUNTER = [
    ("from_string", "c = collections.Counter('abracadabra')\nreturn x + c['a'], c['z']"),
    ("most_common", "c = collections.Counter('abracadabra')\nreturn x, c.most_common(2)"),
    ("update_and_subtract", "c = collections.Counter(a=3)\nc.update(a=1, b=2)\nc.subtract(b=5)\nreturn x, dict(c)"),
    ("arithmetic", "a = collections.Counter(a=3, b=1)\nb = collections.Counter(a=1, b=2)\nreturn x, dict(a + b), dict(a - b), dict(a & b), dict(a | b)"),
    ("elements", "c = collections.Counter(a=2, b=1)\nreturn x, sorted(c.elements())"),
    ("total", "c = collections.Counter([1, 1, 2])\nreturn x + c.total()"),
    ("missing_is_zero_not_inserted", "c = collections.Counter()\nv = c['q']\nreturn x + v + len(c)"),
    ("from_list_of_sizes", "c = collections.Counter([x.shape[0], 4, 4])\nreturn x + c[4]"),
    ("unary_plus_drops_nonpositive", "c = collections.Counter(a=1, b=-1)\nreturn x, dict(+c)"),
    ("equality_with_dict", "return x + (collections.Counter(a=1) == {'a': 1})"),
]
snippets("cpython/test_collections", "counter", COUNTER, namespace=NS)

OTHERS = [
    ("chainmap_lookup_order", "c = collections.ChainMap({'a': 1}, {'a': 2, 'b': 3})\nreturn x + c['a'] + c['b']"),
    ("chainmap_write_first", "a, b = {}, {'k': 1}\nc = collections.ChainMap(a, b)\nc['k'] = 5\nreturn x + b['k'] + a['k']"),
    ("chainmap_new_child", "c = collections.ChainMap({'a': 1}).new_child({'a': 9})\nreturn x + c['a'] + len(c.maps)"),
    ("chainmap_missing_raises", "c = collections.ChainMap({})\nreturn x + c['a']"),
    ("chainmap_keys_union", "c = collections.ChainMap({'a': 1}, {'b': 2})\nreturn x, sorted(c)"),
    ("userdict_basic", "d = collections.UserDict(a=1)\nd['b'] = 2\nreturn x + len(d) + d['b'], d.data"),
    ("userdict_subclass_missing", "class D(collections.UserDict):\n    def __missing__(self, key):\n        return 0\nd = D()\nreturn x + d['q']"),
    ("userlist_basic", "l = collections.UserList([1, 2])\nl.append(3)\nreturn x + len(l), l.data"),
    ("userlist_slice_type", "l = collections.UserList([1, 2, 3])\nreturn x, type(l[:2]).__name__"),
    ("userstring_upper", "s = collections.UserString('ab')\nreturn x + len(s), s.upper().data"),
    ("ordereddict_subclass_method", "class OD(collections.OrderedDict):\n    def first(self):\n        return next(iter(self))\nd = OD(b=1, a=2)\nreturn x + d[d.first()]"),
    ("abc_isinstance_mapping", "import collections.abc as abc\nreturn x + isinstance({}, abc.Mapping) + isinstance([], abc.Sequence) + isinstance({}, abc.Sequence)"),
    ("abc_isinstance_iterable", "import collections.abc as abc\nreturn x + isinstance(iter([]), abc.Iterator) + isinstance([], abc.Iterator)"),
    ("namedtuple_created_inside", "P = collections.namedtuple('P', 'a b')\np = P(1, x)\nreturn p.b * p.a"),
]
snippets("cpython/test_collections", "collections", OTHERS, namespace=NS)
