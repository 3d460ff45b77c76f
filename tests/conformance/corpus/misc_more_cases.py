"""More cases modelled on PyTorch's test/dynamo/test_misc.py, around the Python object model as
compiled code meets it: class attributes against instance attributes (shadowing, `del`
revealing the class value, counters kept on `type(self)`), properties (setters, deleters,
cached_property, a getter whose AttributeError falls back to __getattr__), data and non-data
descriptors, __setattr__/__getattr__ overrides, __slots__, inheritance with super() (chains,
diamonds, classmethods, explicit two-argument form), dunder operators of user classes mixed
with tensors (__radd__, __index__, __bool__, __len__, __contains__, __iadd__), abstract base
classes, objects built inside and returned (their attributes compared after the call),
in-place ops through views, setattr chains and object.__setattr__ on dataclasses, a class's
own __getattribute__, __format__, __new__ and metaclass __call__, equal-by-value dict keys,
methods that return their tensor itself (`x.contiguous() is x`), and the same with a graph
break in the middle. Recast in our own words."""

import abc
import collections.abc
import dataclasses
import functools

import torch

from . import snippets, vec_grad

SOURCE = "dynamo/test_misc"


class Base:
    scale = 2.0

    def __init__(self, k):
        self.k = k

    def apply(self, t):
        return t * self.scale + self.k

    def describe(self):
        return type(self).__name__


class Child(Base):
    scale = 3.0

    def apply(self, t):
        return super().apply(t) - 1


class GrandChild(Child):
    def __init__(self, k):
        super().__init__(k * 2)

    def apply(self, t):
        return super().apply(t) * 0.5


class Root:
    def tag(self, t):
        return t + 1


class Left(Root):
    def tag(self, t):
        return super().tag(t) * 2


class Right(Root):
    def tag(self, t):
        return super().tag(t) - 3


class Diamond(Left, Right):
    def tag(self, t):
        return super().tag(t) + 10


class Maker:
    factor = 2

    @classmethod
    def build(cls, t):
        return cls(t * cls.factor)

    def __init__(self, t):
        self.t = t


class TripleMaker(Maker):
    factor = 3

    @classmethod
    def build(cls, t):
        made = super().build(t)
        made.t = made.t + 1
        return made


class Doubled:
    """A data descriptor: it stores each instance's value under a private name, one more than
    what was assigned, and reads it back doubled."""

    def __set_name__(self, owner, name):
        self.private = "_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return getattr(obj, self.private) * 2

    def __set__(self, obj, value):
        setattr(obj, self.private, value + 1)


class Fixed:
    """A non-data descriptor (no __set__): an instance's own attribute hides it."""

    def __init__(self, value):
        self.value = value

    def __get__(self, obj, objtype=None):
        return self.value


class Holder:
    weight = Doubled()
    bias = Fixed(0.5)


class Registry:
    items = []  # shared by every instance
    limit = 3


class LazyAttrs:
    @property
    def broken(self):
        raise AttributeError("broken")  # makes Python fall back to __getattr__

    def __getattr__(self, name):
        return len(name)


class Stats:
    def __init__(self, t):
        self.t = t
        self.computed = 0

    @functools.cached_property
    def total(self):
        self.computed += 1
        return self.t.sum()


class Box:
    def __init__(self, t):
        self._t = t
        self.log = []

    @property
    def t(self):
        self.log.append("get")
        return self._t

    @t.setter
    def t(self, value):
        self.log.append("set")
        self._t = value

    @t.deleter
    def t(self):
        self.log.append("del")
        self._t = None


class Prefixed:
    def __setattr__(self, key, value):
        object.__setattr__(self, "p_" + key, value)

    def __getattr__(self, key):
        if key.startswith("p_"):
            raise AttributeError(key)
        return self.__dict__["p_" + key]


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b


class Vec:
    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        return Vec(self.t + (other.t if isinstance(other, Vec) else other))

    def __radd__(self, other):
        return Vec(other + self.t)

    def __iadd__(self, other):
        self.t = self.t + other
        return self

    def __neg__(self):
        return Vec(-self.t)

    def __len__(self):
        return self.t.shape[0]

    def __bool__(self):
        return self.t.shape[0] > 5

    def __contains__(self, value):
        return value < self.t.shape[0]

    def __getitem__(self, index):
        return self.t[index]

    def __call__(self, scale):
        return self.t * scale


class Index:
    def __init__(self, i):
        self.i = i

    def __index__(self):
        return self.i


class Shape(abc.ABC):
    @abc.abstractmethod
    def area(self, t): ...

    def doubled(self, t):
        return self.area(t) * 2


class Square(Shape):
    def area(self, t):
        return t * t


@dataclasses.dataclass
class Point:
    x: torch.Tensor
    y: float = 1.0


@dataclasses.dataclass(frozen=True)
class FrozenPoint:
    x: torch.Tensor

    def __post_init__(self):
        object.__setattr__(self, "y", self.x + 2)


class Pt:
    def __init__(self, a, b):
        self.a = a
        self.b = b


def obj_and_vec(n):
    return Pt(torch.randn(n), torch.randn(n)), torch.randn(n)


NS = {name: value for name, value in globals().items() if isinstance(value, type)}
NS.update({"torch": torch, "abc": abc, "collections": collections, "dataclasses": dataclasses, "functools": functools})

OBJECTS = [
    # class attributes against instance attributes
    ("instance_attribute_shadows_class", "r = Registry()\nr.limit = 5\nreturn x * r.limit + Registry.limit, vars(r)"),
    ("del_instance_attribute_reveals_class", "r = Registry()\nr.limit = 7\na = r.limit\ndel r.limit\nreturn x + a + r.limit, 'limit' in vars(r)"),
    ("class_list_shared_through_instance", "a, b = Registry(), Registry()\na.items.append(x)\nn = len(b.items)\nRegistry.items.clear()\nreturn x + n, len(Registry.items)"),
    ("augmented_assign_creates_instance_attr", "r = Registry()\nr.limit += 1\nreturn x * r.limit, Registry.limit, vars(r)"),
    ("counter_on_type_of_self", "class C:\n    count = 0\n    def bump(self):\n        type(self).count += 1\n        return self\nC().bump()\nC().bump().bump()\nreturn x + C.count, C.count"),
    ("class_attribute_via_subclass_override", "return Base(1).apply(x), Child(1).apply(x), GrandChild(1).apply(x), Child.scale, GrandChild.scale"),
    ("class_attribute_set_on_subclass_only", "class P:\n    v = 1\nclass Q(P):\n    pass\nQ.v = 5\nreturn x * P.v + Q.v, 'v' in vars(Q)"),
    ("describe_uses_runtime_type", "return x, Base(0).describe(), GrandChild(0).describe(), type(GrandChild(0)).__mro__[1].__name__"),
    # inheritance and super()
    ("super_diamond_mro", "return Diamond().tag(x), [c.__name__ for c in Diamond.__mro__]"),
    ("super_explicit_two_argument", "d = Diamond()\nreturn super(Left, d).tag(x), super(Diamond, d).tag(x)"),
    ("super_in_classmethod", "m = TripleMaker.build(x)\nreturn m.t, type(m).__name__, Maker.build(x).t"),
    ("super_init_with_keyword", "class P:\n    def __init__(self, a, b=2):\n        self.total = a * b\nclass Q(P):\n    def __init__(self, a):\n        super().__init__(a, b=5)\n        self.extra = self.total + 1\nq = Q(x)\nreturn q.total, q.extra"),
    ("method_resolved_on_instance_dict_first", "b = Base(2)\nb.apply = lambda t: t - 100\nreturn b.apply(x), Base.apply(b, x)"),
    ("unbound_method_called_with_instance", "c = Child(3)\nreturn Base.apply(c, x), Child.apply(c, x)"),
    ("isinstance_issubclass_chain", "g = GrandChild(1)\nreturn x + isinstance(g, Base), issubclass(GrandChild, Child), isinstance(g, (int, Child)), issubclass(Base, Child)"),
    ("abstract_base_subclass", "s = Square()\nreturn s.doubled(x), isinstance(s, Shape)"),
    ("abstract_base_instantiation_raises", "Shape()\nreturn x"),
    ("abc_sequence_checks", "return x, isinstance([x], collections.abc.Sequence), isinstance(x.shape, collections.abc.Sequence), isinstance({}, collections.abc.Mapping), isinstance(x, collections.abc.Iterable)"),
    # properties and descriptors
    ("property_getter_setter_deleter_log", "b = Box(x)\nb.t = b.t * 2\ny = b.t\ndel b.t\nreturn y, b.log, b._t is None"),
    ("property_error_falls_back_to_getattr", "l = LazyAttrs()\nreturn x + l.broken + l.anything, l.broken"),
    ("cached_property_computed_once", "s = Stats(x)\na = s.total\nb = s.total\nreturn a + b, s.computed, 'total' in vars(s)"),
    ("data_descriptor_set_and_get", "h = Holder()\nh.weight = x\nreturn h.weight, h._weight, 'weight' in vars(h)"),
    ("non_data_descriptor_shadowed", "h = Holder()\na = h.bias\nh.bias = x\nreturn x * a, h.bias, Holder.bias"),
    ("descriptor_read_through_class", "return x, type(Holder.weight).__name__, Holder.bias"),
    ("setattr_override_prefixes", "p = Prefixed()\np.val = x * 2\nreturn p.val + 1, sorted(vars(p))"),
    ("slots_object_attributes", "s = Slotted(x, 2)\ns.b = s.b + 1\nreturn s.a * s.b, hasattr(s, '__dict__'), Slotted.__slots__"),
    ("slots_unknown_attribute_raises", "s = Slotted(x, 2)\ns.c = 1\nreturn x"),
    ("getattr_default_on_missing_property", "b = Box(x)\nreturn getattr(b, 'missing', x + 1), getattr(b, 't', None) * 2, b.log"),
    # dunder operators
    ("user_radd_with_size", "v = x.shape[0] + Vec(x)\nreturn v.t"),
    ("user_add_chain_and_neg", "v = -(Vec(x) + Vec(x * 2) + 1.5)\nreturn v.t"),
    ("user_iadd_mutates_self", "v = Vec(x)\nw = v\nv += 3\nreturn w.t, v is w"),
    ("user_len_bool_contains", "v = Vec(x)\nreturn x + len(v), bool(v), 2 in v, 9 in v"),
    ("user_getitem_slice_and_call", "v = Vec(x)\nreturn v[1:], v[0], v(2.5)"),
    ("user_index_into_tensor_and_list", "i = Index(1)\nl = [10, 20, 30]\nreturn x[i], l[i], x[Index(0):Index(2)], range(5)[i]"),
    ("user_index_in_operator_index", "import operator\nreturn x * operator.index(Index(3)), [1, 2, 3, 4][Index(-1)]"),
    ("user_bool_in_branch", "if Vec(x):\n    return x + 1\nreturn x - 1"),
    # objects built inside and returned, or mutated
    ("setattr_chain_on_input_object", "o.c = o.a * o.b + 1\no.b = o.a * o.c + 2\no.a = o.b * o.c + 3\nreturn o", {"params": "o, x", "make_args": obj_and_vec}),
    ("input_object_attribute_deleted", "del o.b\no.a = o.a + x\nreturn hasattr(o, 'b'), sorted(vars(o))", {"params": "o, x", "make_args": obj_and_vec}),
    ("input_object_attr_swapped", "o.a, o.b = o.b, o.a\nreturn o.a - o.b", {"params": "o, x", "make_args": obj_and_vec}),
    ("object_built_inside_returned", "o = Pt(x + 1, x + 2)\no.c = o.a * o.b\nreturn o"),
    ("dataclass_object_setattr", "p = Point(x)\nobject.__setattr__(p, 'x', x + 2)\nreturn p, p.y"),
    ("frozen_dataclass_post_init_setattr", "p = FrozenPoint(x)\nreturn p.x, p.y"),
    ("dataclass_eq_same_tensor_field", "p = Point(x)\nreturn x + (p == Point(x)), p == Point(x, 2.0)"),
    ("type_copy_of_sequence", "a, b = seq\nreturn type(seq)([a + 1, b + 2, a + b])", {"params": "seq", "make_args": lambda n: ([torch.randn(n), torch.randn(n)],)}),
    ("type_copy_of_tuple", "a, b = seq\nreturn type(seq)([a + 1, b + 2])", {"params": "seq", "make_args": lambda n: ((torch.randn(n), torch.randn(n)),)}),
    ("class_reassigned_dunder_class", "class P:\n    def f(self):\n        return 1\nclass Q(P):\n    def f(self):\n        return 2\no = P()\no.__class__ = Q\nreturn x + o.f(), isinstance(o, Q)"),
    ("vars_and_dict_of_object", "o = Pt(x, 2)\no.__dict__['c'] = 3\nreturn o.a * o.c + o.b, sorted(o.__dict__)"),
    ("getattr_with_computed_name", "o = Pt(x, x * 2)\nname = 'a' if x.shape[0] > 5 else 'b'\nreturn getattr(o, name) + 1"),
    ("hasattr_on_tensor_attribute", "if hasattr(x, 'shape') and not hasattr(x, 'nope'):\n    return x + 1\nreturn x"),
    ("tensor_bound_method_getattr_default", "view = getattr(x, 'view', None)\nreturn view(-1, 1) * 2"),
    ("mro_of_tensor_type", "names = [c.__name__ for c in type(x).__mro__]\nreturn x + len(names), names[0]"),
]
snippets(SOURCE, "misc_more", OBJECTS, namespace=NS)


def leaf_with_grad(n):
    w = torch.randn(n, requires_grad=True)
    w.grad = torch.randn(n)
    return (w,)


GRADS = [
    ("sgd_step_under_no_grad", "with torch.no_grad():\n    x.sub_(0.1 * x.grad)\nreturn x * 1", {"make_args": leaf_with_grad}),
    ("grad_attribute_read_and_zeroed", "g = x.grad.clone()\nx.grad.zero_()\nreturn g + 1, x.grad.sum()", {"make_args": leaf_with_grad}),
    ("grad_set_to_none", "old = x.grad * 2\nx.grad = None\nreturn old, x.grad is None", {"make_args": leaf_with_grad}),
    ("inplace_on_leaf_requiring_grad_raises", "x.add_(1)\nreturn x", {"make_args": vec_grad}),
    ("inplace_on_clone_of_leaf", "y = x.clone()\ny.mul_(2)\ny[0] = 0.0\nreturn y", {"make_args": vec_grad, "train": True}),
    ("view_of_leaf_then_inplace_on_clone", "y = x.view(-1, 1).clone()\ny.add_(x.view(-1, 1))\nreturn y.sum(0)", {"make_args": vec_grad, "train": True}),
    ("detach_shares_storage_with_input", "d = x.detach()\nd.mul_(2)\nreturn x + 1", {"params": "x", "make_args": lambda n: (torch.randn(n),)}),
    ("requires_grad_flags_of_results", "y = x * 2\nz = y.detach()\nw = z.requires_grad_()\nreturn y.requires_grad, z.requires_grad, w is z, w * 3", {"make_args": vec_grad}),
    ("retain_grad_on_intermediate", "y = x * 2\ny.retain_grad()\nreturn (y * y).sum(), y.requires_grad", {"make_args": vec_grad, "train": True}),
    ("grad_enabled_query_inside_no_grad", "with torch.no_grad():\n    inside = torch.is_grad_enabled()\n    y = x * 2\nreturn y, inside, torch.is_grad_enabled()", {"make_args": vec_grad}),
    ("where_with_python_scalars_grad", "return torch.where(x > 0, x * 2, 0.5)", {"make_args": vec_grad, "train": True}),
    ("unbind_then_stack_grad", "parts = x.view(-1, 1).unbind(0)\nreturn torch.stack([p * i for i, p in enumerate(parts)])", {"make_args": vec_grad, "train": True}),
    ("requires_grad_input_inplace_on_view_of_clone", "y = x.clone()\ny[1:].mul_(y[:-1].clone())\nreturn y", {"make_args": vec_grad, "train": True}),
    ("leaf_flags_of_parameter_made_inside", "p = torch.nn.Parameter(x.detach() * 2)\nreturn p * 1, p.is_leaf, p.requires_grad, isinstance(p, torch.nn.Parameter)"),
]
snippets(SOURCE, "misc_grad", GRADS, namespace=NS)


def matrix(n):
    return (torch.randn(n, 3),)


VIEWS = [
    ("diagonal_view_zeroed", "y = x.clone()\ny.diagonal().zero_()\nreturn y", {"make_args": matrix}),
    ("chained_views_mutated", "y = x.clone()\ny.t()[1:].mul_(10)\nreturn y", {"make_args": matrix}),
    ("narrow_view_fill", "y = x.clone()\ny.narrow(0, 1, 2).fill_(7)\nreturn y", {"make_args": matrix}),
    ("unbind_views_mutated", "y = x.clone()\nfor i, row in enumerate(y.unbind(0)):\n    row.add_(i)\nreturn y", {"make_args": matrix}),
    ("split_views_mutated", "y = x.clone()\na, b = y.split([1, y.shape[0] - 1])\na.zero_()\nb.mul_(2)\nreturn y", {"make_args": matrix}),
    ("input_row_mutated_through_view", "x[0].fill_(1.0)\nx[:, -1] += 2\nreturn x.sum()", {"make_args": matrix}),
    ("expand_then_inplace_raises", "y = x[:1].expand(4, 3)\ny.add_(1)\nreturn y", {"make_args": matrix}),
    ("inplace_on_view_seen_by_other_view", "y = x.clone()\na = y[:, 0]\nb = y.t()[0]\na.mul_(3)\nreturn b * 1, y", {"make_args": matrix}),
    ("mask_assignment_on_clone", "y = x.clone()\ny[y > 0] = 0.0\ny[:, 1] = torch.arange(y.shape[0], dtype=y.dtype)\nreturn y", {"make_args": matrix}),
    ("view_as_then_sub", "y = x.clone()\ny.view_as(y).sub_(1)\nreturn y", {"make_args": matrix}),
    ("as_strided_view_mutated", "y = x.clone().flatten()\ny.as_strided((2,), (2,)).mul_(-1)\nreturn y", {"make_args": matrix}),
    ("swapdims_view_contiguous_flag", "y = x.swapdims(0, 1)\nreturn y.is_contiguous(), y.contiguous().is_contiguous(), y.stride(), y + 1", {"make_args": matrix}),
    ("squeeze_unsqueeze_inplace_input", "x.unsqueeze_(1)\nx.squeeze_(1)\nreturn x.shape, x * 2", {"make_args": matrix}),
    ("tensor_iteration_adds_to_rows", "for row in x:\n    row.add_(1.0)\nreturn row * 1", {"make_args": matrix}),
]
snippets(SOURCE, "misc_views", VIEWS, namespace=NS)

BREAKS = [
    ("object_attrs_swapped_across_break", "o.a = o.a + x\nprint('break')\no.a, o.b = o.b, o.a\nreturn o.a * 1", {"params": "o, x", "make_args": obj_and_vec}),
    ("property_setter_across_break", "b = Box(x)\nb.t = b.t + 1\nprint('break')\nb.t = b.t * 2\nreturn b.t, b.log"),
    ("class_attribute_written_then_break", "r = Registry()\nr.limit = x.shape[0]\nprint('break')\nreturn x * r.limit, Registry.limit, vars(r)"),
    ("super_call_after_break", "c = GrandChild(2)\nprint('break')\nreturn c.apply(x), c.k"),
    ("view_mutated_across_break", "y = x.clone()\nv = y[1:]\nprint('break')\nv.mul_(3)\nreturn y, v"),
    ("input_mutated_before_break_read_after", "x.mul_(2)\nprint('break')\nreturn x + 1"),
]
snippets(SOURCE, "misc_breaks", BREAKS, namespace=NS)


class Tenfold:
    """A class's own __getattribute__: every read of `v` goes through it."""

    def __init__(self):
        self.v = 2

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        return value * 10 if name == "v" else value


class Key:
    """Equal keys by value: two distinct objects find one dict entry."""

    def __init__(self, k):
        self.k = k

    def __eq__(self, other):
        return isinstance(other, Key) and self.k == other.k

    def __hash__(self):
        return hash(self.k)


class OldIterable:
    """Iterable through __getitem__ alone (the sequence protocol before __iter__)."""

    def __init__(self, t):
        self.t = t

    def __getitem__(self, i):
        if i >= 3:
            raise IndexError(i)
        return self.t * i


class Formatted:
    def __init__(self, n):
        self.n = n

    def __format__(self, spec):
        return f"<{self.n}:{spec}>"

    def __str__(self):
        return f"F{self.n}"

    def __repr__(self):
        return f"Formatted({self.n})"


class Singleton(type):
    instances = {}

    def __call__(cls, *args):
        if cls not in Singleton.instances:
            Singleton.instances[cls] = super().__call__(*args)
        return Singleton.instances[cls]


class Only(metaclass=Singleton):
    def __init__(self, v):
        self.v = v


class Cached:
    pool = {}

    def __new__(cls, k):
        if k not in cls.pool:
            cls.pool[k] = super().__new__(cls)
        return cls.pool[k]

    def __init__(self, k):
        self.k = k


@functools.total_ordering
class Rank:
    def __init__(self, r):
        self.r = r

    def __eq__(self, other):
        return self.r == other.r

    def __lt__(self, other):
        return self.r < other.r


class Scaler:
    def __init__(self, k):
        self.k = k

    def scale(self, t, extra=0):
        return t * self.k + extra

    triple = functools.partialmethod(scale, extra=3)


NS.update({"Tenfold": Tenfold, "Key": Key, "OldIterable": OldIterable, "Formatted": Formatted, "Only": Only,
           "Singleton": Singleton, "Cached": Cached, "Rank": Rank, "Scaler": Scaler})

OBJECT_MODEL = [
    ("own_getattribute_runs_on_reads", "t = Tenfold()\nreturn x * t.v, t.v"),
    ("equal_user_keys_find_one_entry", "d = {Key(1): x}\nd[Key(1)] = d[Key(1)] + 1\nreturn d[Key(1)], len(d), Key(2) in d, Key(1) in [Key(1)]"),
    ("sequence_protocol_iteration", "o = OldIterable(x)\nreturn list(o), sum(o), 2 in [i for i, _ in enumerate(o)]"),
    ("custom_format_str_repr", "f = Formatted(x.shape[0])\nreturn x, f'{f:>5}|{f}|{f!r}', str(f), repr([f])"),
    ("metaclass_call_returns_one_instance", "a = Only(x)\nb = Only(x * 2)\nr = (a is b, a.v * 1)\nSingleton.instances.clear()\nreturn r"),
    ("new_returns_pooled_instance", "a = Cached(1)\nb = Cached(1)\nc = Cached(2)\nr = x + (a is b) + (a is c), a.k\nCached.pool.clear()\nreturn r"),
    ("total_ordering_derived_comparisons", "a, b = Rank(1), Rank(x.shape[0])\nreturn x, a <= b, a >= b, b > a, sorted([b, a])[0].r, max(a, b).r"),
    ("partialmethod_bound", "s = Scaler(2)\nreturn s.triple(x), s.scale(x)"),
    ("method_type_bound_by_hand", "import types\nclass C:\n    pass\no = C()\nm = types.MethodType(lambda self, t: t * 2, o)\nreturn m(x), m.__self__ is o", {}),
    ("sum_of_objects_uses_radd", "return sum([Vec(x), Vec(x * 2)]).t"),
    ("nan_identity_in_containers", "import math\nv = math.nan\nreturn x, v in [v], v == v, [v] == [v], [v].count(v)"),
]
snippets(SOURCE, "misc_objmodel", OBJECT_MODEL, namespace=NS)

IDENTITY = [
    ("methods_returning_self", "return x.contiguous() is x, x.float() is x, x.to(torch.float32) is x, x.cpu() is x, x.type_as(x) is x, x.detach() is x, x.clone() is x, x.view_as(x) is x, x.t().contiguous() is x", {"make_args": matrix}),
    ("inplace_methods_return_self", "y = x.clone()\nreturn y.add_(1) is y, y.mul_(2).clamp_(-1, 1) is y, y"),
    ("shape_objects_identity_and_types", "return x, x.shape is x.shape, x.shape == x.size(), type(x.shape) is torch.Size, x.dtype is torch.float32, x.device == torch.device('cpu')"),
    ("input_attribute_tensor_iadd_in_place", "o.a += x\nreturn o.a is l[0], l[0] * 1", {"params": "o, l, x", "make_args": lambda n: (lambda o: (o, [o.a], torch.randn(n)))(Pt(torch.randn(n), 0))}),
    ("input_attribute_list_iadd_in_place", "o.b += [x]\nreturn o.b is l, len(l)", {"params": "o, l, x", "make_args": lambda n: (lambda o: (o, o.b, torch.randn(n)))(Pt(torch.randn(n), []))}),
]
snippets(SOURCE, "misc_identity", IDENTITY, namespace=NS)
