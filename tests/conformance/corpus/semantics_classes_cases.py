"""User classes mixed with tensors, where Python's lookup rules decide the value: in-place and
reflected operators (__iadd__ missing so `+=` rebinds, __radd__ from sum(), NotImplemented
handing over), __eq__/__ne__/__hash__ (an __eq__ without __hash__ is unhashable, `in` tries
identity first), __bool__ against __len__, __contains__ falling back to iteration, __getitem__
given slices, tuples and Ellipsis, __setitem__/__delitem__ with slices, __setattr__,
__getattribute__, __getattr__ and __delattr__ overrides, data descriptors that win over the
instance dict and non-data ones that lose, __slots__ with a __dict__ slot or a subclass
without slots, class attributes against instance ones, classmethod/staticmethod/property
setters and deleters, metaclasses (__call__, __new__ adding attributes, class attributes
reached from instances), __init_subclass__, cooperative super() chains with keywords,
dataclasses (field factories, __post_init__, replace, fields, order) and namedtuples (_replace,
_asdict, _make, _fields, defaults, subclass methods). Modelled on CPython's test_descr,
test_class, test_dataclasses and test_collections, recast in our own words."""

import collections
import dataclasses
import typing

import torch

from . import snippets


class Acc:
    """+= mutates in place and returns self; + makes a new one."""

    def __init__(self, t):
        self.t = t
        self.log = []

    def __add__(self, other):
        self.log.append("add")
        return Acc(self.t + other)

    def __iadd__(self, other):
        self.log.append("iadd")
        self.t = self.t + other
        return self


class PlainAdd:
    """No __iadd__: `a += b` falls back to __add__ and rebinds `a`."""

    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        return PlainAdd(self.t + other)


class Summand:
    """sum() starts from 0, so the first addition is 0 + Summand: __radd__."""

    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        return Summand(self.t + (other.t if isinstance(other, Summand) else other))

    def __radd__(self, other):
        return Summand(self.t + other * 100)


class Meters:
    """__add__ returns NotImplemented for foreign types; the other side's __radd__ runs."""

    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        if not isinstance(other, Meters):
            return NotImplemented
        return Meters(self.v + other.v)


class Feet:
    def __init__(self, v):
        self.v = v

    def __radd__(self, other):
        if isinstance(other, Meters):
            return Meters(other.v + self.v * 0.3)
        return NotImplemented


class EqOnly:
    """__eq__ without __hash__: instances are unhashable."""

    def __init__(self, k):
        self.k = k

    def __eq__(self, other):
        return isinstance(other, EqOnly) and self.k == other.k


class EqHash(EqOnly):
    __hash__ = None  # explicitly unhashable as well

    def __ne__(self, other):
        return "custom ne"


class ByKey:
    def __init__(self, k, t):
        self.k = k
        self.t = t

    def __eq__(self, other):
        return isinstance(other, ByKey) and self.k == other.k

    def __hash__(self):
        return hash(self.k)


class Never:
    """Equal to nothing, itself included: `in` still finds it by identity."""

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


class BoolAndLen(Sized):
    def __bool__(self):
        return True


class Iterable:
    """No __contains__: `in` iterates."""

    def __init__(self, items):
        self.items = items
        self.steps = 0

    def __iter__(self):
        for item in self.items:
            self.steps += 1
            yield item


class Recorder:
    """__getitem__, __setitem__ and __delitem__ record the key they were given."""

    def __init__(self, t):
        self.t = t
        self.keys = []

    def __getitem__(self, key):
        self.keys.append(type(key).__name__)
        return self.t[key]

    def __setitem__(self, key, value):
        self.keys.append(("set", type(key).__name__))
        self.t = self.t.clone()
        self.t[key] = value

    def __delitem__(self, key):
        self.keys.append(("del", repr(key)))


class Guarded:
    """__setattr__ through super(), __delattr__ logged."""

    def __init__(self):
        super().__setattr__("log", [])

    def __setattr__(self, name, value):
        self.log.append(name)
        super().__setattr__(name, value * 2 if isinstance(value, torch.Tensor) else value)

    def __delattr__(self, name):
        self.log.append("del " + name)
        super().__delattr__(name)


class Fallback:
    """__getattr__ runs only when normal lookup fails."""

    real = 1

    def __init__(self):
        self.misses = []

    def __getattr__(self, name):
        self.misses.append(name)
        return len(name)


class Counted:
    """__getattribute__ counts every read of a public attribute."""

    def __init__(self, t):
        object.__setattr__(self, "reads", 0)
        self.t = t

    def __getattribute__(self, name):
        if not name.startswith("_") and name != "reads":
            object.__setattr__(self, "reads", object.__getattribute__(self, "reads") + 1)
        return object.__getattribute__(self, name)


class Clamp:
    """A data descriptor: it wins over an entry of the same name in the instance dict."""

    def __init__(self, limit):
        self.limit = limit

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return obj.__dict__.get("_" + self.name, 0)

    def __set__(self, obj, value):
        obj.__dict__["_" + self.name] = min(value, self.limit)


class Constant:
    """A non-data descriptor: an instance entry hides it."""

    def __get__(self, obj, owner=None):
        return 10 if obj is None else 3


class WithDescriptors:
    size = Clamp(5)
    k = Constant()


class SlotsWithDict:
    __slots__ = ("a", "__dict__")


class SlotBase:
    __slots__ = ("a",)


class SlotChild(SlotBase):
    pass


class Temp:
    def __init__(self, c):
        self._c = c
        self.log = []

    @property
    def c(self):
        return self._c

    @c.setter
    def c(self, value):
        self.log.append("set")
        self._c = value

    @c.deleter
    def c(self):
        self.log.append("del")
        self._c = None

    @property
    def f(self):
        return self._c * 1.8 + 32


class TempK(Temp):
    @property
    def c(self):
        return super().c + 273

    @c.setter
    def c(self, value):
        Temp.c.fset(self, value - 273)


class Factory:
    made = 0

    def __init__(self, t):
        self.t = t

    @classmethod
    def make(cls, t):
        cls.made += 1
        return cls(t * 2)

    @staticmethod
    def scale(t, k=3):
        return t * k


class SubFactory(Factory):
    pass


class Pooled(type):
    """A metaclass whose __call__ hands back the instance already made for an argument."""

    def __call__(cls, key, t):
        pool = cls.__dict__.get("pool")
        if key not in pool:
            pool[key] = super().__call__(key, t)
        return pool[key]


class Item(metaclass=Pooled):
    pool = {}

    def __init__(self, key, t):
        self.key = key
        self.t = t


class Tagging(type):
    def __new__(mcs, name, bases, ns):
        ns.setdefault("tag", name.lower())
        return super().__new__(mcs, name, bases, ns)

    def describe(cls):
        return cls.tag + "!"


class Tagged(metaclass=Tagging):
    pass


class CoopBase:
    def __init__(self, **kw):
        self.order = ["base"]
        self.rest = sorted(kw)


class CoopA(CoopBase):
    def __init__(self, a=1, **kw):
        super().__init__(**kw)
        self.order.append("a")
        self.a = a


class CoopB(CoopBase):
    def __init__(self, b=2, **kw):
        super().__init__(**kw)
        self.order.append("b")
        self.b = b


class CoopAB(CoopA, CoopB):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.order.append("ab")


@dataclasses.dataclass
class Config:
    scale: float = 2.0
    tags: list = dataclasses.field(default_factory=list)
    t: torch.Tensor = None

    def __post_init__(self):
        self.tags.append("init")


@dataclasses.dataclass(order=True)
class Ranked:
    rank: int
    name: str = dataclasses.field(compare=False, default="")


@dataclasses.dataclass
class Derived(Config):
    extra: int = 0

    def __post_init__(self):
        super().__post_init__()
        self.tags.append(f"extra={self.extra}")


Point = collections.namedtuple("Point", ["x", "y", "z"], defaults=[0])


class Vector(collections.namedtuple("Vector", "a b")):
    __slots__ = ()

    @property
    def total(self):
        return self.a + self.b

    def scaled(self, k):
        return self._replace(a=self.a * k)


class Pair(typing.NamedTuple):
    left: torch.Tensor
    right: int = 1

    def mix(self):
        return self.left * self.right


NS = {name: value for name, value in globals().items() if isinstance(value, type)}
NS.update({"torch": torch, "dataclasses": dataclasses, "collections": collections})

OPERATORS = [
    ("iadd_in_place_keeps_alias", "a = Acc(x)\nb = a\na += 1\nc = a + 2\nreturn b.t, a is b, c is a, a.log, c.t"),
    ("iadd_fallback_rebinds", "a = PlainAdd(x)\nb = a\na += 1\nreturn a is b, b.t, a.t"),
    ("iadd_on_list_element_and_attribute", "l = [Acc(x)]\nl[0] += 1\no = PlainAdd(x)\nholder = [o]\nholder[0] += 2\nreturn l[0].log, l[0].t, holder[0] is o, holder[0].t"),
    ("sum_of_objects_uses_radd", "s = sum([Summand(x), Summand(x * 2)])\nreturn s.t"),
    ("sum_with_start_object", "s = sum([Summand(x), Summand(x * 2)], Summand(x))\nreturn s.t"),
    ("notimplemented_hands_to_radd", "m = Meters(x) + Feet(x)\nreturn m.v, type(m).__name__"),
    ("notimplemented_both_sides_raises", "return Meters(x) + 3"),
    ("eq_without_hash_is_unhashable", "try:\n    hash(EqOnly(1))\nexcept TypeError:\n    return x + 1, EqOnly(1) == EqOnly(1), EqOnly(1) != EqOnly(2)\nreturn x"),
    ("custom_ne_is_returned", "return x, EqHash(1) != EqHash(1), EqHash(1) == EqHash(1)"),
    ("equal_objects_find_one_dict_entry", "d = {ByKey(1, x): 'first'}\nd[ByKey(1, x * 2)] = 'second'\nk = next(iter(d))\nreturn len(d), d[ByKey(1, None)], k.t"),
    ("in_finds_identity_before_eq", "n = Never()\nreturn x + (n in [n]), n in [Never()], n == n, [n].count(n)"),
    ("list_index_and_remove_by_eq", "l = [ByKey(1, x), ByKey(2, x * 2), ByKey(1, x * 3)]\ni = l.index(ByKey(1, None))\nl.remove(ByKey(1, None))\nreturn i, len(l), l[-1].t"),
    ("bool_prefers_dunder_bool_over_len", "return x + bool(BoolAndLen(0)), bool(Sized(0)), bool(Sized(2)), not Sized(0)"),
    ("len_drives_truth_of_and_or", "s = Sized(0) or Sized(3)\nt = Sized(2) and Sized(0)\nreturn x * s.n, t.n"),
    ("contains_falls_back_to_iteration", "it = Iterable([1, 2, 3, 4])\nfound = 2 in it\nsteps = it.steps\nmissing = 9 in it\nreturn x + found, steps, missing, it.steps"),
    ("getitem_gets_slice_tuple_ellipsis", "r = Recorder(x.view(-1, 1))\na = r[1:3]\nb = r[0, 0]\nc = r[...]\nd = r[::2, 0]\nreturn a, b, c, d, r.keys"),
    ("setitem_delitem_with_slices", "r = Recorder(x)\nr[1:3] = 0.0\nr[::2] = x[::2] * 10\ndel r[1:2]\ndel r[::-1]\nreturn r.t, r.keys"),
]
snippets("cpython/test_class", "sem_classes_ops", OPERATORS, namespace=NS)

ATTRIBUTES = [
    ("setattr_override_through_super", "g = Guarded()\ng.t = x\ng.k = 3\ndel g.k\nreturn g.t, g.log, hasattr(g, 'k')"),
    ("getattr_only_for_missing", "f = Fallback()\nf.present = x\nreturn f.present + f.real + f.abc, f.misses"),
    ("getattribute_counts_reads", "c = Counted(x)\ny = c.t + c.t\nc.t = y\nreturn c.t, c.reads"),
    ("data_descriptor_wins_over_instance_dict", "w = WithDescriptors()\nw.size = 9\nw.__dict__['size'] = 100\nreturn x * w.size, w.size, sorted(vars(w))"),
    ("non_data_descriptor_loses_to_instance", "w = WithDescriptors()\na = w.k\nw.k = x\nb = w.k\ndel w.k\nreturn a, b, w.k, WithDescriptors.k"),
    ("descriptor_accessed_on_class", "d = WithDescriptors.size\nreturn x + d.limit, d.name, type(d).__name__"),
    ("slots_with_dict_slot", "s = SlotsWithDict()\ns.a = x\ns.b = x * 2\nreturn s.a + s.b, sorted(vars(s))"),
    ("slots_subclass_has_dict", "c = SlotChild()\nc.a = x\nc.extra = 2\nreturn c.a * c.extra, sorted(vars(c)), hasattr(SlotBase(), '__dict__')"),
    ("class_attribute_list_shared_then_shadowed", "class C:\n    items = []\na, b = C(), C()\na.items.append(x)\nb.items = [x * 2]\nreturn len(C.items), len(a.items), b.items"),
    ("class_attribute_changed_seen_by_instances", "class C:\n    k = 1\na = C()\nC.k = x.shape[0]\nb = C()\nb.k = 0\nreturn x * a.k, b.k, C.k"),
    ("property_setter_deleter", "t = Temp(x)\nt.c = t.c + 1\nf = t.f\ndel t.c\nreturn f, t.log, t.c"),
    ("property_overridden_with_super", "k = TempK(x)\nc = k.c\nk.c = c + 1\nreturn c, k._c, k.log"),
    ("property_without_setter_raises", "t = Temp(x)\nt.f = 3\nreturn x"),
    ("classmethod_on_subclass_counts_there", "Factory.made = 0\nSubFactory.made = 0\na = SubFactory.make(x)\nb = Factory.make(x)\nc = a.make(x)\nreturn type(a).__name__, type(c).__name__, Factory.made, SubFactory.made, c.t"),
    ("staticmethod_via_instance_and_class", "f = Factory(x)\nreturn f.scale(x), Factory.scale(x, k=2), SubFactory.scale(x, 4)"),
    ("bound_method_identity_and_self", "f = Factory(x)\nm = f.scale\ng = Factory.make\nreturn m(x), g.__self__ is Factory, m is f.scale"),
]
snippets("cpython/test_descr", "sem_classes_attrs", ATTRIBUTES, namespace=NS)

CLASSES = [
    ("metaclass_call_pools_instances", "Item.pool.clear()\na = Item('k', x)\nb = Item('k', x * 2)\nc = Item('j', x * 3)\nreturn a is b, a.t, c.t, sorted(Item.pool)"),
    ("metaclass_new_adds_attribute", "class Local(Tagged):\n    pass\nclass Named(Tagged):\n    tag = 'own'\nreturn x, Tagged.tag, Local.tag, Named.tag, Local.describe()"),
    ("metaclass_method_not_on_instance", "return x, hasattr(Tagged, 'describe'), hasattr(Tagged(), 'describe'), type(Tagged).__name__"),
    ("init_subclass_registry_with_keywords", "registry = {}\nclass Plugin:\n    def __init_subclass__(cls, key=None, **kw):\n        super().__init_subclass__(**kw)\n        registry[key or cls.__name__] = cls\nclass A(Plugin, key='a'):\n    k = 2\nclass B(Plugin):\n    k = 3\nreturn x * registry['a'].k + registry['B'].k, sorted(registry)"),
    ("cooperative_super_init_with_keywords", "o = CoopAB(a=x, b=2, c=3)\nreturn o.a * o.b, o.order, o.rest, [c.__name__ for c in CoopAB.__mro__]"),
    ("super_in_class_made_inside", "class P:\n    def f(self, t):\n        return t + 1\nclass Q(P):\n    def f(self, t):\n        return super().f(t) * 2\nclass R(Q):\n    def f(self, t):\n        return super().f(t) - 3\nreturn R().f(x)"),
    ("type_three_args_with_method", "C = type('C', (Factory,), {'scale2': lambda self, t: t * 5, 'made': 0})\nc = C.make(x)\nreturn c.scale2(c.t), type(c).__name__, C.made"),
    ("instance_class_attribute_via_type", "f = Factory(x)\nreturn type(f).scale(x), f.__class__.__name__, isinstance(f, SubFactory)"),
]
snippets("cpython/test_descr", "sem_classes_meta", CLASSES, namespace=NS)

RECORDS = [
    ("dataclass_factory_fresh_per_instance", "a = Config(t=x)\nb = Config()\na.tags.append('a')\nreturn a.tags, b.tags, a.t * a.scale"),
    ("dataclass_replace_runs_post_init", "a = Config(scale=3.0, t=x)\nb = dataclasses.replace(a, scale=4.0)\nreturn b.t * b.scale, b.tags, a.tags is b.tags"),
    ("dataclass_inherited_post_init", "d = Derived(t=x, extra=2)\nreturn d.t * d.extra, d.tags, [f.name for f in dataclasses.fields(d)]"),
    ("dataclass_order_compare_false_field", "rs = sorted([Ranked(3, 'c'), Ranked(1, 'a'), Ranked(2, 'b')])\nreturn x * rs[0].rank, [r.name for r in rs], Ranked(1, 'x') == Ranked(1, 'y')"),
    ("dataclass_asdict_copies_lists", "c = Config(t=x)\nd = dataclasses.asdict(c)\nd['tags'].append('changed')\nreturn c.tags, d['tags'], d['t'] is c.t"),
    ("dataclass_returned_and_mutated", "c = Config(t=x)\nc.scale = c.scale + 1\nc.tags.append(str(c.scale))\nreturn c"),
    ("namedtuple_replace_asdict_make", "p = Point(x, 2)\nq = p._replace(z=x * 3)\nd = q._asdict()\nr = Point._make([1, 2, 3])\nreturn q, list(d), d['z'], r, Point._fields"),
    ("namedtuple_defaults_and_unpack", "p = Point(x, x * 2)\na, b, c = p\nreturn a + b + c, p.z, Point._field_defaults"),
    ("namedtuple_subclass_property_and_replace", "v = Vector(x, x * 2)\nw = v.scaled(3)\nreturn v.total, w.total, type(w).__name__, w[0] - v[0]"),
    ("typing_namedtuple_method_and_default", "p = Pair(x)\nq = Pair(x, 3)\nreturn p.mix(), q.mix(), q._replace(right=5).mix(), p == (x, 1) if False else len(p)"),
    ("namedtuple_compares_as_tuple", "p = Point(1, 2, 3)\nreturn x + (p == (1, 2, 3)), p < (1, 2, 4), p + (4,), hash(p) == hash((1, 2, 3))"),
]
snippets("cpython/test_dataclasses", "sem_classes_records", RECORDS, namespace=NS)

BREAKS = [
    ("iadd_object_across_break", "a = Acc(x)\nb = a\na += 1\nprint('break')\na += 2\nreturn b.t, b.log"),
    ("descriptor_set_across_break", "w = WithDescriptors()\nw.size = x.shape[0]\nprint('break')\nw.size = w.size + 1\nreturn x * w.size, sorted(vars(w))"),
    ("property_setter_and_getattr_across_break", "t = Temp(x)\nt.c = x * 2\nprint('break')\nf = Fallback()\nreturn t.c + f.abc, t.log, f.misses"),
    ("dataclass_mutated_across_break", "c = Config(t=x)\nc.tags.append('before')\nprint('break')\nc.tags.append('after')\nc.t = c.t * 2\nreturn c"),
    ("setattr_override_across_break", "g = Guarded()\ng.t = x\nprint('break')\ng.u = g.t + 1\nreturn g.u, g.log"),
]
snippets("dynamo/test_misc", "sem_classes_breaks", BREAKS, namespace=NS)
