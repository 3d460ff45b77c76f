"""Python's data model and the standard library's iteration helpers, in the style of dynamo's
test_misc and test_functions (recast in our own words). Data model: properties raising
AttributeError falling back to __getattr__, __getattribute__, dict __missing__, how often
__hash__/__eq__ run for a lookup, __new__ returning another type, __ne__ and reflected
comparisons, total_ordering, dataclass order/frozen/replace, enums (aliases, IntEnum, Flag),
super() from nested functions and through the MRO, metaclass __call__, namedtuple subclasses,
class attributes shared between instances, methods replaced on the class. Stdlib: itertools
(tee, groupby, accumulate, islice and chain laziness, product, cycle, starmap), Counter,
ChainMap, OrderedDict, deque, heapq, contextlib (contextmanager handling or converting an
exception, ExitStack order, suppress), and generators yielding inside except or returning in
finally."""

import collections
import contextlib
import dataclasses
import enum
import functools
import heapq
import itertools

import torch

from . import snippets

# Classes made once here (making a dataclass inside the compiled function runs the dataclass
# machinery natively at a graph break on every call: seconds of CI time for nothing ported).
@dataclasses.dataclass(order=True)
class Ordered:
    a: int
    b: str = "z"


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: int


@dataclasses.dataclass
class Holder:
    t: torch.Tensor
    k: int = 1


class Summed(collections.namedtuple("Summed", "a b")):
    def total(self):
        return self.a + self.b


NS = {"torch": torch, "Ordered": Ordered, "Frozen": Frozen, "Holder": Holder, "Summed": Summed, "dataclasses": dataclasses, "enum": enum, "functools": functools, "itertools": itertools,
      "collections": collections, "heapq": heapq, "contextlib": contextlib}

DATA_MODEL = [
    ("property_attributeerror_falls_to_getattr", "class C:\n    @property\n    def p(self):\n        raise AttributeError('inner')\n    def __getattr__(self, name):\n        return 'fallback:' + name\nreturn x, C().p"),
    ("getattribute_override", "class C:\n    def __init__(self):\n        self.a = 1\n    def __getattribute__(self, name):\n        if name == 'a':\n            return 42\n        return object.__getattribute__(self, name)\nc = C()\nreturn x * c.a, vars(c)"),
    ("dict_subclass_missing", "class D(dict):\n    def __missing__(self, key):\n        return key * 2\nd = D(a=1)\nreturn x, d['a'], d['zz'], 'zz' in d, d.get('zz')"),
    ("hash_eq_calls_counted", "log = []\nclass K:\n    def __init__(self, v):\n        self.v = v\n    def __hash__(self):\n        log.append('h')\n        return hash(self.v)\n    def __eq__(self, o):\n        log.append('e')\n        return self.v == o.v\nd = {K(1): 'a'}\nr = d[K(1)]\nreturn x, r, log"),
    ("new_returning_other_type", "class A:\n    def __new__(cls, v):\n        return v * 2\n    def __init__(self, v):\n        raise RuntimeError('not called')\nreturn x, A(3)"),
    ("new_returning_subclass_instance_init_called", "log = []\nclass A:\n    def __new__(cls):\n        return object.__new__(B)\n    def __init__(self):\n        log.append('A init')\nclass B(A):\n    def __init__(self):\n        log.append('B init')\nb = A()\nreturn x, type(b).__name__, log"),
    ("ne_defaults_to_not_eq", "class E:\n    def __init__(self, v):\n        self.v = v\n    def __eq__(self, o):\n        return self.v == o.v\nreturn x, E(1) != E(1), E(1) != E(2)"),
    ("lt_reflects_to_gt", "class G:\n    def __init__(self, v):\n        self.v = v\n    def __gt__(self, o):\n        return self.v > o\nreturn x, 3 < G(5), 7 < G(5)"),
    ("total_ordering", "@functools.total_ordering\nclass T:\n    def __init__(self, v):\n        self.v = v\n    def __eq__(self, o):\n        return self.v == o.v\n    def __lt__(self, o):\n        return self.v < o.v\nreturn x, T(1) <= T(2), T(3) >= T(2), T(2) > T(2), sorted([T(3), T(1)], key=lambda t: t)[0].v"),
    ("dataclass_order_and_eq", "return x, Ordered(1) < Ordered(2), Ordered(1, 'a') < Ordered(1, 'b'), Ordered(1) == Ordered(1), [(q.a, q.b) for q in sorted([Ordered(2), Ordered(1, 'b'), Ordered(1, 'a')])]"),
    ("dataclass_frozen_raises", "f = Frozen(1)\ntry:\n    f.a = 2\nexcept dataclasses.FrozenInstanceError:\n    return x, 'frozen', f.a, hash(f) == hash(Frozen(1))\nreturn x, 'not frozen'"),
    ("dataclass_with_tensor_field_replace", "s = Holder(x)\ns2 = dataclasses.replace(s, k=3)\nreturn s2.t * s2.k, dataclasses.asdict(s2)['k'], dataclasses.astuple(s)[1]"),
    ("enum_iteration_and_alias", "class Color(enum.Enum):\n    RED = 1\n    GREEN = 2\n    CRIMSON = 1\nreturn x, [c.name for c in Color], Color.CRIMSON is Color.RED, Color(2).name, Color['GREEN'].value"),
    ("intenum_arithmetic", "class N(enum.IntEnum):\n    A = 2\n    B = 3\nreturn x * N.A + N.B, N.A + 1, N.B > N.A, int(N.B)"),
    ("flag_ops", "class Fl(enum.Flag):\n    R = 1\n    W = 2\n    X = 4\nrw = Fl.R | Fl.W\nreturn x, Fl.R in rw, Fl.X in rw, rw.value, bool(Fl.R & Fl.W)"),
    ("super_in_nested_function", "class A:\n    def f(self):\n        return 1\nclass B(A):\n    def f(self):\n        def inner():\n            return super(B, self).f() + 1\n        return inner()\nreturn x * B().f()"),
    ("class_cell_super_no_args", "class A:\n    def f(self):\n        return 'A'\nclass B(A):\n    def f(self):\n        return 'B' + super().f()\nclass C(B):\n    def f(self):\n        return 'C' + super().f()\nreturn x, C().f(), [k.__name__ for k in C.__mro__]"),
    ("metaclass_call_override", "class Meta(type):\n    def __call__(cls, *a):\n        obj = super().__call__(*a)\n        obj.made_by_meta = True\n        return obj\nclass K(metaclass=Meta):\n    def __init__(self, v):\n        self.v = v\nk = K(3)\nreturn x * k.v, k.made_by_meta"),
    ("namedtuple_subclass_method", "p = Summed(1, 2)\nreturn x * p.total(), p._replace(a=5).total(), isinstance(p, tuple)"),
    ("class_attribute_list_shared", "class C:\n    items = []\n    def add(self, v):\n        self.items.append(v)\na, b = C(), C()\na.add(1)\nb.add(2)\nr = list(C.items)\nC.items.clear()\nreturn x, r"),
    ("instance_method_replaced_on_class_after_instance", "class C:\n    def f(self):\n        return 1\nc = C()\norig = C.f\nC.f = lambda self: 2\nr = c.f()\nC.f = orig\nreturn x * r, c.f()"),
    ("staticmethod_via_instance_and_class", "class C:\n    @staticmethod\n    def s(v):\n        return v * 2\nreturn C.s(x), C().s(3)"),
    ("object_init_subclass_kwargs_error", "try:\n    class A:\n        def __init_subclass__(cls):\n            pass\n    class B(A, flag=1):\n        pass\nexcept TypeError as e:\n    return x, 'TypeError'\nreturn x, 'none'"),
    ("bool_of_custom_len_zero", "class L:\n    def __len__(self):\n        return 0\nreturn x, bool(L()), not L(), 'y' if L() else 'n'"),
    ("abs_neg_pos_invert_dunders", "class V:\n    def __init__(self, v):\n        self.v = v\n    def __abs__(self):\n        return abs(self.v)\n    def __neg__(self):\n        return V(-self.v)\n    def __invert__(self):\n        return ~self.v\nreturn x, abs(V(-3)), (-V(2)).v, ~V(1)"),
]
snippets("dynamo/test_misc", "datamodel2", DATA_MODEL, namespace=NS)

STDLIB = [
    ("tee_independent", "a, b = itertools.tee(iter([1, 2, 3]))\nnext(a)\nreturn x, list(b), list(a)"),
    ("groupby_consumed_groups", "groups = [(k, list(g)) for k, g in itertools.groupby('aabbbc')]\nreturn x, groups"),
    ("groupby_group_invalidated", "it = itertools.groupby('aabb')\nk1, g1 = next(it)\nk2, g2 = next(it)\nreturn x, k1, list(g1), list(g2)"),
    ("accumulate_with_initial", "return x, list(itertools.accumulate([1, 2, 3], initial=10)), list(itertools.accumulate([3, 1, 2], max))"),
    ("islice_side_effects", "log = []\ndef g():\n    for i in range(10):\n        log.append(i)\n        yield i\nr = list(itertools.islice(g(), 2, 5))\nreturn x, r, log"),
    ("chain_from_iterable_lazy", "log = []\ndef g(n):\n    log.append(n)\n    yield n\nc = itertools.chain.from_iterable(g(i) for i in range(3))\nfirst = next(c)\nreturn x, first, log"),
    ("product_repeat_and_permutations", "return x, list(itertools.product('ab', repeat=2)), list(itertools.permutations([1, 2, 3], 2))[:3], list(itertools.combinations_with_replacement('ab', 2))"),
    ("zip_longest_fill", "return x, list(itertools.zip_longest('ab', [1], fillvalue=0))"),
    ("count_with_zip", "return x, list(zip(itertools.count(5, 2), 'abc'))"),
    ("cycle_islice", "return x, list(itertools.islice(itertools.cycle([1, 2]), 5))"),
    ("starmap_and_takewhile", "return x, list(itertools.starmap(pow, [(2, 3), (3, 2)])), list(itertools.takewhile(lambda v: v < 3, [1, 2, 5, 1])), list(itertools.dropwhile(lambda v: v < 3, [1, 2, 5, 1]))"),
    ("counter_ops", "c = collections.Counter('abracadabra')\nc.update('aa')\nd = c - collections.Counter('aaa')\nreturn x, c.most_common(2), dict(d), c['z'], sorted((c & collections.Counter('abc')).items())"),
    ("chainmap_lookup_and_write", "base = {'a': 1, 'b': 2}\ncm = collections.ChainMap({'a': 10}, base)\ncm['c'] = 3\nreturn x, cm['a'], cm['b'], dict(cm), base, cm.maps[0]"),
    ("ordereddict_methods", "o = collections.OrderedDict.fromkeys('abc', 0)\no.move_to_end('a')\no.popitem(last=False)\no['z'] = 1\nreturn x, list(o.items()), list(reversed(o))"),
    ("deque_rotate_and_index", "q = collections.deque(range(5))\nq.rotate(2)\nq.rotate(-1)\nreturn x, list(q), q.index(3), q[-1], q.count(1)"),
    ("heapq_ops", "h = []\nfor v in [5, 1, 4, 2]:\n    heapq.heappush(h, v)\nsmall = heapq.heappop(h)\nreturn x, small, h, heapq.nsmallest(2, [7, 3, 9, 1]), heapq.nlargest(1, [7, 3, 9, 1])"),
    ("contextmanager_exception_handled", "log = []\n@contextlib.contextmanager\ndef cm():\n    try:\n        yield\n    except KeyError:\n        log.append('handled')\nwith cm():\n    raise KeyError('k')\nreturn x, log"),
    ("contextmanager_exception_reraised_other", "@contextlib.contextmanager\ndef cm():\n    try:\n        yield\n    except KeyError:\n        raise ValueError('converted')\ntry:\n    with cm():\n        raise KeyError('k')\nexcept ValueError as e:\n    return x, str(e), type(e.__context__).__name__"),
    ("exitstack_order", "log = []\n@contextlib.contextmanager\ndef cm(n):\n    log.append(('in', n))\n    yield n\n    log.append(('out', n))\nwith contextlib.ExitStack() as stack:\n    vals = [stack.enter_context(cm(i)) for i in range(3)]\n    stack.callback(log.append, 'cb')\nreturn x, vals, log"),
    ("suppress_context", "with contextlib.suppress(KeyError):\n    raise KeyError('k')\nreturn x + 1"),
    ("yield_inside_except", "def g():\n    try:\n        raise KeyError('k')\n    except KeyError as e:\n        yield type(e).__name__\n        yield 'after'\nreturn x, list(g())"),
    ("generator_return_in_finally_swallows", "def g():\n    try:\n        yield 1\n        raise ValueError\n    finally:\n        return\nreturn x, list(g())"),
    ("nested_generator_exception_chain", "def inner():\n    yield 1\n    raise KeyError('inner')\ndef outer():\n    try:\n        yield from inner()\n    except KeyError:\n        yield 'caught in outer'\nreturn x, list(outer())"),
]
snippets("dynamo/test_functions", "stdlib2", STDLIB, namespace=NS)
