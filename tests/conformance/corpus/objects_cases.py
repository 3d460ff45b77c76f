"""Cases modelled on CPython's test_descr/test_class/test_dataclasses/test_enum/test_copy and
PyTorch's test/dynamo/test_misc.py user-class tests: data descriptors with __set_name__,
__slots__, operator overloading with reflected and in-place forms, __eq__/__hash__ objects as
dict keys, super() chains through a diamond, __getattribute__ and __setattr__ overrides,
__init_subclass__ registries, class attributes shadowed by instance attributes, dataclasses
(order, InitVar, kw_only, frozen ones as keys, nested asdict/astuple), Flag enums and auto(),
and copy/deepcopy of containers holding tensors, recast in our own words."""

import abc
import copy
import dataclasses
import enum
import functools
import math

import torch
from torch import nn

from . import snippets, two_vecs


class Scaled:
    """A data descriptor: stores under a private name, reads back scaled."""

    def __set_name__(self, owner, name):
        self.private = "_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return getattr(obj, self.private) * 2

    def __set__(self, obj, value):
        setattr(obj, self.private, value + 1)


class Box:
    width = Scaled()

    def __init__(self, w):
        self.width = w


class NonData:
    """A non-data descriptor (no __set__): an instance attribute of the same name wins."""

    def __get__(self, obj, objtype=None):
        return 100 if obj is None else 7


class Shadowed:
    kind = "class-level"
    seven = NonData()


class Vec2:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __add__(self, other):
        if isinstance(other, Vec2):
            return Vec2(self.a + other.a, self.b + other.b)
        return Vec2(self.a + other, self.b + other)

    def __radd__(self, other):
        return Vec2(other + self.a, other - self.b)

    def __iadd__(self, other):
        self.a = self.a * 10 + other.a
        self.b = self.b * 10 + other.b
        return self

    def __sub__(self, other):
        return Vec2(self.a - other.a, self.b - other.b)

    def __mul__(self, k):
        return Vec2(self.a * k, self.b * k)

    def __rmul__(self, k):
        return Vec2(self.a * k + 1, self.b * k + 1)

    def __neg__(self):
        return Vec2(-self.a, -self.b)

    def __matmul__(self, other):
        return (self.a * other.a + self.b * other.b).sum()

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return (self.a, self.b)[i]

    def __bool__(self):
        return False

    def __contains__(self, item):
        return item == "a" or item == "b"


class OnlyAdd:
    """__add__ that declines other types: Python then tries the right operand's __radd__."""

    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        if isinstance(other, OnlyAdd):
            return OnlyAdd(self.v + other.v)
        return NotImplemented


class Key:
    def __init__(self, k):
        self.k = k

    def __eq__(self, other):
        return isinstance(other, Key) and self.k == other.k

    def __hash__(self):
        return hash(("Key", self.k))


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a):
        self.a = a


class Base:
    def f(self, t):
        return t + 1

    def name(self):
        return "Base"


class Left(Base):
    def f(self, t):
        return super().f(t) * 2

    def name(self):
        return "Left>" + super().name()


class Right(Base):
    def f(self, t):
        return super().f(t) - 3

    def name(self):
        return "Right>" + super().name()


class Diamond(Left, Right):
    def f(self, t):
        return super().f(t) + 0.5

    def name(self):
        return "Diamond>" + super().name()


class CountingReads:
    """__getattribute__ counts every attribute read of the instance."""

    def __init__(self, w):
        object.__setattr__(self, "reads", 0)
        object.__setattr__(self, "w", w)

    def __getattribute__(self, name):
        if name != "reads":
            object.__setattr__(self, "reads", object.__getattribute__(self, "reads") + 1)
        return object.__getattribute__(self, name)


class Validated:
    """__setattr__ that refuses negative sizes and records each write."""

    def __init__(self):
        object.__setattr__(self, "log", [])

    def __setattr__(self, name, value):
        if isinstance(value, int) and value < 0:
            raise ValueError(f"{name} must be non-negative")
        self.log.append(name)
        object.__setattr__(self, name, value)


class Forward:
    """__getattr__ forwards unknown names to the wrapped tensor."""

    def __init__(self, t):
        self.t = t

    def __getattr__(self, name):
        return getattr(self.t, name)


class Plugin:
    registry = []

    def __init_subclass__(cls, scale=1, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.scale = scale


class Doubler(Plugin, scale=2):
    pass


class Shape(abc.ABC):
    @abc.abstractmethod
    def area(self): ...

    def twice(self):
        return self.area() * 2


class Square(Shape):
    def __init__(self, s):
        self.s = s

    def area(self):
        return self.s * self.s


class Lazy:
    def __init__(self, t):
        self.t = t
        self.computed = 0

    @functools.cached_property
    def total(self):
        self.computed += 1
        return self.t.sum()


class ReadOnly:
    @property
    def value(self):
        return 3


@dataclasses.dataclass(order=True)
class Version:
    major: int
    minor: int = 0


@dataclasses.dataclass
class WithInitVar:
    t: torch.Tensor
    scale: dataclasses.InitVar[float] = 1.0

    def __post_init__(self, scale):
        self.t = self.t * scale


@dataclasses.dataclass(kw_only=True)
class KwOnly:
    a: int
    b: int = 2


@dataclasses.dataclass(frozen=True)
class FrozenKey:
    name: str
    n: int


@dataclasses.dataclass
class Inner:
    t: torch.Tensor
    tags: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Outer:
    inner: Inner
    k: int = 1
    note: str = dataclasses.field(default="", compare=False)


class Perm(enum.Flag):
    R = enum.auto()
    W = enum.auto()
    X = enum.auto()


class Mode(str, enum.Enum):
    TRAIN = "train"
    EVAL = "eval"


class Op(enum.Enum):
    ADD = "add"
    MUL = "mul"

    def apply(self, a, b):
        return a + b if self is Op.ADD else a * b


@functools.total_ordering
class Ranked:
    def __init__(self, r):
        self.r = r

    def __eq__(self, other):
        return self.r == other.r

    def __lt__(self, other):
        return self.r < other.r


class Celsius:
    def __init__(self, c):
        self._c = c

    @property
    def value(self):
        return self._c


class Kelvin(Celsius):
    @property
    def value(self):
        return super().value + 273


@dataclasses.dataclass
class Parent:
    a: int
    log: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        self.log.append("parent")


@dataclasses.dataclass
class Child(Parent):
    b: int = 0

    def __post_init__(self):
        super().__post_init__()
        self.log.append("child")


@dataclasses.dataclass(frozen=True)
class FrozenDerived:
    base: int
    twice: int = dataclasses.field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "twice", self.base * 2)


class Registry:
    count = 0

    def __init__(self):
        type(self).count += 1
        self.id = type(self).count


class Stateful(nn.Module):
    """A module whose forward changes its own Python attributes, as caches and counters do."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.calls = 0
        self.flag = True
        self.history = []
        self.cache = None
        self.stats = {"seen": 0}

    def forward(self, x):
        return self.lin(x)


def stateful_and_matrix(n):
    return Stateful(), torch.randn(n, 3)


NS2 = {"Ranked": Ranked, "Kelvin": Kelvin, "Parent": Parent, "Child": Child, "FrozenDerived": FrozenDerived, "Registry": Registry}

NS = {
    "torch": torch, "copy": copy, "dataclasses": dataclasses, "enum": enum, "abc": abc,
    "Box": Box, "Shadowed": Shadowed, "Vec2": Vec2, "OnlyAdd": OnlyAdd, "Key": Key, "Slotted": Slotted,
    "Base": Base, "Left": Left, "Right": Right, "Diamond": Diamond, "CountingReads": CountingReads,
    "Validated": Validated, "Forward": Forward, "Plugin": Plugin, "Doubler": Doubler, "Shape": Shape,
    "Square": Square, "Lazy": Lazy, "ReadOnly": ReadOnly, "Version": Version, "WithInitVar": WithInitVar,
    "KwOnly": KwOnly, "FrozenKey": FrozenKey, "Inner": Inner, "Outer": Outer, "Perm": Perm,
    "Mode": Mode, "Op": Op, **NS2,
}

DESCR = [
    # descriptors and attribute lookup order
    ("data_descriptor_set_name", "b = Box(x)\nb.width = b.width + 1\nreturn b.width, b._width, vars(b)"),
    ("data_descriptor_class_access", "return x + isinstance(Box.width, object) + (type(Box.__dict__['width']).__name__ == 'Scaled')"),
    ("non_data_descriptor_shadowed", "s = Shadowed()\na = s.seven\ns.seven = x.shape[0]\ns.kind = 'instance'\nreturn x + a + s.seven, s.kind, Shadowed.kind, Shadowed.seven"),
    ("instance_attribute_shadows_class_then_deleted", "s = Shadowed()\ns.kind = 'mine'\nfirst = s.kind\ndel s.kind\nreturn x + len(first), first, s.kind"),
    ("property_without_setter_raises", "r = ReadOnly()\nr.value = x.shape[0]\nreturn x"),
    ("cached_property_computed_once", "z = Lazy(x)\na = z.total + z.total\nreturn a, z.computed, 'total' in vars(z)"),
    # __slots__
    ("slots_read_write", "s = Slotted(x)\ns.b = x * 2\nreturn s.a + s.b, hasattr(s, '__dict__')"),
    ("slots_unset_raises_attribute_error", "s = Slotted(x)\nreturn s.b"),
    ("slots_new_attribute_raises", "s = Slotted(x)\ns.c = 1\nreturn x"),
    ("slots_hasattr_unset", "s = Slotted(x)\nr = hasattr(s, 'b')\ns.b = 1\nreturn x + r + hasattr(s, 'b')"),
    # operator overloading
    ("user_add_and_radd", "v = Vec2(x, x * 2)\nw = v + 1\nu = 3 + v\nreturn w.a, w.b, u.a, u.b"),
    ("user_iadd_mutates_in_place", "v = Vec2(x, x + 1)\nalias = v\nv += Vec2(x, x)\nreturn alias.a, alias.b, v is alias"),
    ("user_rmul_vs_mul", "v = Vec2(x, x)\nreturn (v * 2).a, (2 * v).a"),
    ("user_neg_sub_matmul", "v = Vec2(x, x + 1)\nw = -v - Vec2(x, x)\nreturn w.a, w.b, v @ w"),
    ("user_len_getitem_unpack", "v = Vec2(x, x * 3)\na, b = v\nreturn a + b, len(v), v[1], list(v)[0]"),
    ("user_bool_false_in_branch", "v = Vec2(x, x)\nif v:\n    return x + 1\nreturn x - 1, not v, bool(v)"),
    ("user_contains", "v = Vec2(x, x)\nreturn x + ('a' in v) + ('z' in v), 'z' not in v"),
    ("notimplemented_falls_back_to_radd", "a = OnlyAdd(x)\nb = a + OnlyAdd(x)\nv = Vec2(x, x)\nreturn b.v, type(a.__add__(v)).__name__"),
    ("notimplemented_both_sides_type_error", "a = OnlyAdd(x)\nreturn a + 1"),
    ("user_iadd_on_list_element", "vs = [Vec2(x, x), Vec2(x, x * 2)]\nvs[1] += vs[0]\nreturn vs[1].a, vs[1].b, vs[0].a"),
    # __eq__/__hash__ user keys
    ("user_key_dict_lookup", "d = {Key(1): x, Key(2): x * 2}\nd[Key(1)] = d[Key(1)] + 5\nreturn d[Key(1)], d[Key(2)], Key(3) in d, len(d)"),
    ("user_key_set_dedup", "s = {Key(x.shape[0]), Key(x.shape[0]), Key(0)}\nreturn x + len(s), Key(0) in s"),
    ("frozen_dataclass_as_key", "d = {FrozenKey('a', 1): x}\nd[FrozenKey('a', 1)] = d[FrozenKey('a', 1)] * 3\nd[FrozenKey('b', x.shape[0])] = x\nreturn d[FrozenKey('a', 1)], len(d), hash(FrozenKey('a', 1)) == hash(FrozenKey('a', 1))"),
    ("eq_without_hash_unhashable", "class K:\n    def __eq__(self, o):\n        return True\nd = {K(): x}\nreturn d"),
    # super chains and MRO
    ("super_diamond_method", "d = Diamond()\nreturn d.f(x), d.name(), [c.__name__ for c in Diamond.__mro__]"),
    ("super_two_arg_form", "d = Diamond()\nreturn super(Left, d).f(x), super(Diamond, d).name()"),
    ("super_explicit_base_call", "d = Diamond()\nreturn Base.f(d, x) + Right.f(d, x)"),
    ("super_in_locally_defined_subclass", "class Sub(Diamond):\n    def f(self, t):\n        return super().f(t) * 10\nreturn Sub().f(x), isinstance(Sub(), Left), issubclass(Sub, Right)"),
    # attribute hooks
    ("getattribute_counts_reads", "c = CountingReads(x)\ny = c.w + c.w\nreturn y, c.reads"),
    ("setattr_override_logs_and_validates", "v = Validated()\nv.n = x.shape[0]\nv.t = x * 2\nreturn v.t + v.n, v.log"),
    ("setattr_override_raises", "v = Validated()\nv.n = x.shape[0] - 100\nreturn x"),
    ("getattr_forwards_to_tensor", "f = Forward(x)\nreturn f.shape[0] + f.sum(), f.dtype"),
    ("getattr_missing_on_forwarded_tensor", "f = Forward(x)\nreturn f.not_a_tensor_attribute"),
    # class machinery
    ("init_subclass_keyword", "return x * Doubler.scale + Plugin.__dict__.get('scale', 0), Doubler.scale"),
    ("abstract_class_instantiation_raises", "s = Shape()\nreturn x"),
    ("abstract_subclass_method", "sq = Square(x)\nreturn sq.twice(), isinstance(sq, Shape)"),
    ("type_three_arg_made_class", "C = type('C', (Base,), {'g': lambda self, t: self.f(t) * 3})\nreturn C().g(x), C.__name__"),
    ("classmethod_on_subclass_sees_subclass", "class A:\n    @classmethod\n    def make(cls, t):\n        return cls.__name__, t * len(cls.__name__)\nclass Bee(A):\n    pass\nreturn A.make(x), Bee.make(x)"),
    ("staticmethod_called_via_self", "class A:\n    @staticmethod\n    def sq(t):\n        return t * t\n    def run(self, t):\n        return self.sq(t) + type(self).sq(t)\nreturn A().run(x)"),
    ("callable_instance", "class Affine:\n    def __init__(self, w):\n        self.w = w\n    def __call__(self, t, b=0):\n        return t * self.w + b\nf = Affine(3)\nreturn f(x), f(x, b=x), callable(f)"),
]
snippets("cpython/test_descr", "descr", DESCR, namespace=NS)

DATACLASS_ENUM = [
    ("dataclass_order_sorting", "vs = [Version(2, 1), Version(1, x.shape[0]), Version(2)]\nvs.sort()\nreturn x + len(vs), [(v.major, v.minor) for v in vs], Version(1) < Version(1, 1), max(vs)"),
    ("dataclass_initvar_post_init", "w = WithInitVar(x, scale=3.0)\nreturn w.t, hasattr(w, 'scale'), [f.name for f in dataclasses.fields(w)]"),
    ("dataclass_kw_only", "k = KwOnly(a=x.shape[0])\nreturn x + k.a + k.b, dataclasses.astuple(k)"),
    ("dataclass_kw_only_positional_raises", "k = KwOnly(1)\nreturn x + k.a"),
    ("dataclass_nested_asdict_astuple", "o = Outer(Inner(x, ['t']), k=x.shape[0])\nd = dataclasses.asdict(o)\nd['inner']['tags'].append('u')\nreturn d, dataclasses.astuple(o)[1], o.inner.tags"),
    ("dataclass_compare_false_field", "a = Outer(Inner(x), note='a')\nb = Outer(a.inner, note='b')\nreturn x + (a == b), a.note"),
    ("dataclass_replace_frozen", "f = FrozenKey('a', 1)\ng = dataclasses.replace(f, n=x.shape[0])\nreturn x + g.n, f.n, g"),
    ("dataclass_frozen_delattr_raises", "f = FrozenKey('a', 1)\ndel f.n\nreturn x"),
    ("dataclass_default_factory_fresh", "a = Inner(x)\nb = Inner(x)\na.tags.append(1)\nreturn x + len(b.tags), a.tags is b.tags, a.tags"),
    ("flag_enum_combination", "p = Perm.R | Perm.W\nreturn x * (Perm.W in p) + (Perm.X in p), p.value, bool(p & Perm.X)"),
    ("enum_auto_values_and_members", "return x + Perm.X.value, list(Perm.__members__), Perm['W'].value"),
    ("str_enum_compares_to_str", "m = Mode('eval')\nreturn (x * 2 if m == 'eval' else x), m.value, m is Mode.EVAL, m.upper()"),
    ("enum_method_dispatch", "return Op.ADD.apply(x, x), Op('mul').apply(x, 3), Op.MUL.name"),
    ("enum_bad_value_raises", "return x * Op('div').value"),
    ("enum_identity_in_dict_and_set", "d = {m: i for i, m in enumerate(Mode)}\nreturn x + d[Mode.EVAL], len({Mode.TRAIN, Mode('train')})"),
]
snippets("cpython/test_dataclasses", "dataclass_enum", DATACLASS_ENUM, namespace=NS)

COPY = [
    ("copy_list_shallow_shares_tensors", "a = [x, [x * 2]]\nb = copy.copy(a)\nb[1].append(x)\nb[0] = x + 1\nreturn a, b, a[1] is b[1]"),
    ("deepcopy_dict_of_tensors_then_inplace", "a = {'t': x.clone(), 'n': [1]}\nb = copy.deepcopy(a)\nb['t'].add_(1)\nb['n'].append(2)\nreturn a, b"),
    ("copy_user_object", "v = Vec2(x, [1])\nw = copy.copy(v)\nw.b.append(2)\nw.a = x * 3\nreturn v.a, v.b, w.a"),
    ("deepcopy_user_object", "v = Vec2(x.clone(), [1])\nw = copy.deepcopy(v)\nw.b.append(2)\nw.a.mul_(3)\nreturn v.a, v.b, w.a, w.b"),
    ("deepcopy_keeps_aliasing", "t = x.clone()\na = [t, t]\nb = copy.deepcopy(a)\nb[0].add_(1)\nreturn b[1], b[0] is b[1], a[0]"),
    ("copy_of_input_list_mutated", "b = copy.copy(xs)\nb.append(b[0] * 2)\nb[0] = b[0] + 1\nreturn b, xs", {"params": "xs", "make_args": lambda n: ([torch.randn(n), torch.randn(n)],)}),
    ("list_copy_method_and_slice_copy", "a = [x, x + 1]\nb = a.copy()\nc = a[:]\nb.append(x)\nc.pop()\nreturn len(a), len(b), len(c), b[0] is a[0]"),
    ("dict_copy_then_update", "a = {'p': x}\nb = a.copy()\nb['p'] = b['p'] * 2\nb['q'] = x\nreturn a, b"),
]
snippets("cpython/test_copy", "copying", COPY, namespace=NS)

TWO = [
    ("vec2_of_inputs_iadd_alias", "v = Vec2(x, y)\nw = v\nw += Vec2(y, x)\nreturn v.a, v.b"),
    ("user_key_dict_of_inputs", "d = {Key('x'): x, Key('y'): y}\nfor k in list(d):\n    d[Key(k.k + '2')] = d[k] * 2\nreturn [k.k for k in d], d[Key('y2')]"),
]
snippets("cpython/test_descr", "descr2", TWO, namespace=NS, params="x, y", make_args=two_vecs)

MODULE_STATE = [
    ("counter_attribute_scales_output", "m.calls += 1\nreturn m(x) * m.calls"),
    ("flag_toggled_each_call", "y = m(x) + 1 if m.flag else m(x) - 1\nm.flag = not m.flag\nreturn y"),
    ("history_list_appended", "m.history.append(x.shape[0])\nreturn m(x) + len(m.history)"),
    ("cache_tensor_attribute_set_and_read", "if m.cache is None:\n    m.cache = x.detach().sum(0)\nreturn m(x) + m.cache"),
    ("stats_dict_updated", "m.stats['seen'] += x.shape[0]\nm.stats['last'] = x.shape[0]\nreturn m(x) * m.stats['seen']"),
    ("new_attribute_then_hasattr", "had = hasattr(m, 'extra')\nm.extra = x.shape[0] * 2\nreturn m(x) + had + m.extra"),
    ("attribute_deleted_then_getattr_default", "m.tmp = 3\ndel m.tmp\nreturn m(x) + getattr(m, 'tmp', 10)"),
    ("weight_read_after_attribute_write", "m.scale = 0.5\nreturn m.lin.weight.sum() * m.scale + m(x)"),
]
snippets("dynamo/test_modules", "module_state", MODULE_STATE, namespace=NS, params="m, x", make_args=stateful_and_matrix, train=True)

OBJECTS2 = [
    ("total_ordering_generated_comparisons", "a, b = Ranked(x.shape[0]), Ranked(5)\nreturn x + (a > b) + (a >= b) * 2 + (a <= b) * 4, a != b, max(a, b).r"),
    ("property_overridden_calls_super_property", "k = Kelvin(x)\nreturn k.value, Kelvin.value.fget(k) - 273"),
    ("dataclass_inheritance_post_init_chain", "c = Child(x.shape[0], b=2)\nreturn x + c.a + c.b, c.log, [f.name for f in dataclasses.fields(c)]"),
    ("frozen_dataclass_post_init_object_setattr", "f = FrozenDerived(x.shape[0])\nreturn x + f.twice, f"),
    ("class_attribute_counter_through_type_self", "Registry.count = 0\na, b = Registry(), Registry()\nr = x + a.id * 10 + b.id + Registry.count\nRegistry.count = 0\nreturn r"),
    ("vars_dict_written_then_attribute_read", "b = Box(1.0)\nvars(b)['extra'] = x * 2\nreturn b.extra + 1, sorted(vars(b))"),
    ("instance_dict_update_then_read", "c = Shadowed()\nc.__dict__.update({'p': x, 'kind': 'upd'})\nreturn c.p * 2, c.kind"),
    ("getattr_with_built_name", "v = Vec2(x, x * 2)\nname = 'ab'[x.shape[0] % 2]\nreturn getattr(v, name), name"),
    ("setattr_on_class_seen_by_instances", "s = Shadowed()\nold = Shadowed.kind\nShadowed.kind = 'patched'\nr = s.kind\nShadowed.kind = old\nreturn x + len(r), r"),
    ("isinstance_with_abc_registration", "return x + isinstance(Square(1), Shape) + issubclass(Square, abc.ABC), isinstance(x, Shape)"),
]
snippets("cpython/test_descr", "objects2", OBJECTS2, namespace=NS)


def vec2_and_vec(n):
    return Vec2(torch.randn(n), torch.randn(n)), torch.randn(n)


def keyed_dict_and_vec(n):
    return {Key("a"): torch.randn(n), FrozenKey("b", 2): torch.randn(n)}, torch.randn(n)


INPUT_OBJECTS = [
    ("input_object_iadd_mutates_it", "alias = v\nv += Vec2(x, x)\nreturn v.a + v.b, v is alias", {"make_args": vec2_and_vec}),
    ("input_object_radd_and_neg", "w = 1 + v\nu = -v\nreturn w.a, w.b, u.a", {"make_args": vec2_and_vec}),
    ("input_object_bool_len_getitem", "a, b = v\nreturn (x if v else -x) + a * len(v) + v[1], 'a' in v", {"make_args": vec2_and_vec}),
    ("input_object_ne_of_eq", "return x + (v != v) + (v == v), v != Vec2(x, x)", {"make_args": vec2_and_vec}),
    ("input_dict_keyed_by_value_hashed_objects", "return v[Key('a')] + v[FrozenKey('b', 2)] + x, Key('a') in v, FrozenKey('b', 3) in v", {"make_args": keyed_dict_and_vec}),
    ("input_dict_keyed_objects_written", "v[Key('c')] = x\nv[Key('a')] = v[Key('a')] * 2\nreturn len(v)", {"make_args": keyed_dict_and_vec}),
]
snippets("cpython/test_descr", "input_objects", INPUT_OBJECTS, namespace=NS, params="v, x")


class Num:
    """Numeric protocols of a user class."""

    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return isinstance(other, Num) and self.v == other.v

    def __hash__(self):
        return hash(self.v)

    def __bool__(self):
        return self.v != 0

    def __neg__(self):
        return Num(-self.v)

    def __abs__(self):
        return Num(abs(self.v))

    def __invert__(self):
        return Num(~self.v)

    def __round__(self, n=None):
        return Num(round(self.v, n))

    def __trunc__(self):
        return int(self.v)

    def __floor__(self):
        return math.floor(self.v)

    def __int__(self):
        return int(self.v)

    def __index__(self):
        return int(self.v)

    def __lshift__(self, k):
        return Num(self.v << k)

    def __rmul__(self, other):
        return other * self.v

    def __lt__(self, other):
        return self.v < other.v


class InitReturns:
    def __init__(self):
        return 5


class OldIter:
    """Iteration by the old protocol: __getitem__ until IndexError."""

    def __getitem__(self, i):
        if i >= 3:
            raise IndexError(i)
        return i * 10


PROTOCOLS_NS = {**NS, "Num": Num, "InitReturns": InitReturns, "OldIter": OldIter, "math": math}

NUMERIC_PROTOCOLS = [
    ("index_and_count_through_eq", "ns = [Num(1), Num(x.shape[0]), Num(1)]\nreturn x + ns.index(Num(x.shape[0])), ns.count(Num(1)), Num(1) in ns"),
    ("truth_in_and_or", "return x, (Num(0) or 'z'), (Num(3) and 'y'), not Num(0)"),
    ("unary_methods", "n = Num(x.shape[0])\nreturn x, (-n).v, abs(Num(-2)).v, (~n).v"),
    ("math_protocols", "return x, round(Num(2.567), 1).v, math.trunc(Num(2.7)), math.floor(Num(2.5)), int(Num(7.9))"),
    ("index_protocol_in_range_and_slices", "n = Num(x.shape[0])\nreturn x[:Num(2)], list(range(n)), [1, 2, 3][Num(1)]"),
    ("shift_with_size_and_rmul_with_tensor", "return (Num(1) << x.shape[0]).v, x * Num(3), x.shape[0] * Num(2)"),
    ("init_returning_value_raises", "InitReturns()\nreturn x"),
    ("old_iteration_protocol", "return x + sum(OldIter()), list(OldIter()), 20 in OldIter(), 25 in OldIter()"),
    ("chained_comparison_of_objects", "return x, Num(1) < Num(x.shape[0]) < Num(10), Num(5) < Num(x.shape[0])"),
]
snippets("cpython/test_class", "numeric_protocols", NUMERIC_PROTOCOLS, namespace=PROTOCOLS_NS)
