"""What CPython does with the results of special methods, and how attribute lookup orders its
sources, as test_class and test_descr check them (recast in our own words): `in` is a bool
whatever __contains__ returns, iter() refuses a non-iterator from __iter__, len() refuses a
negative or huge length, bool() a non-bool from __bool__, format() a non-str from __format__;
data descriptors before the instance dict before non-data descriptors before __getattr__,
cached_property filling the instance dict once, property deleters, super() in methods and
classmethods, __missing__ of dict subclasses, and unhashable keys. The values come from the
input's size, so the third call (a new size) sees new ones.
"""

import functools

import torch

from .round5_support import sampled_snippets

SOURCE_CLASS = "cpython/test_class"
SOURCE_DESCR = "cpython/test_descr"


class Returns:
    """Every special method returns `value` as is."""

    def __init__(self, value):
        self.value = value

    def __contains__(self, item):
        return self.value

    def __iter__(self):
        return self.value

    def __len__(self):
        return self.value

    def __bool__(self):
        return self.value

    def __format__(self, spec):
        return self.value

    def __index__(self):
        return self.value


class Missing(dict):
    def __missing__(self, key):
        return key * 2


class NonData:
    def __get__(self, obj, cls):
        return "non-data"


class Data:
    def __get__(self, obj, cls):
        return ("data", obj.__dict__.get("_v") if obj is not None else None)

    def __set__(self, obj, value):
        obj.__dict__["_v"] = value


class Lookup:
    plain = "class"
    nd = NonData()
    d = Data()

    def __getattr__(self, name):
        return "getattr:" + name


class Cached:
    def __init__(self, v):
        self.v = v
        self.calls = 0

    @functools.cached_property
    def double(self):
        self.calls += 1
        return self.v * 2


class Prop:
    def __init__(self, v):
        self._v = v
        self.log = []

    @property
    def v(self):
        self.log.append("get")
        return self._v

    @v.setter
    def v(self, value):
        self.log.append("set")
        self._v = value

    @v.deleter
    def v(self):
        self.log.append("del")
        del self._v


class Base:
    def f(self, t):
        return t + 1

    @classmethod
    def name(cls):
        return cls.__name__


class Child(Base):
    def f(self, t):
        return super().f(t) * 2

    @classmethod
    def name(cls):
        return "child of " + super().name()


class Unhashable:
    __hash__ = None


class Holder:
    def __init__(self, t):
        self.t = t
        self.n = t.shape[0]


def tensor_and_holder(n):
    t = torch.randn(n)
    return t, Holder(t.clone())


NS = {
    "torch": torch,
    "Returns": Returns,
    "Missing": Missing,
    "Lookup": Lookup,
    "Cached": Cached,
    "Prop": Prop,
    "Child": Child,
    "Unhashable": Unhashable,
}


def tried(body: str, errors: str = "TypeError, ValueError, OverflowError") -> str:
    return f"try:\n    r = {body}\nexcept ({errors}) as e:\n    r = type(e).__name__ + ': ' + str(e)\nreturn x, r"


RESULTS = [
    ("contains_result_made_bool", "n = x.shape[0]\nreturn x, n in Returns([n]), n in Returns(0), n not in Returns('yes'), n in Returns(n - 4)"),
    ("iter_returns_list", tried("list(Returns([x.shape[0]]))")),
    ("iter_returns_iterator", "return x, list(Returns(iter(range(x.shape[0]))))"),
    ("iter_returns_tensor", tried("list(Returns(x))")),
    ("len_negative", tried("len(Returns(-x.shape[0]))")),
    ("len_huge", tried("len(Returns(2 ** 70 + x.shape[0]))")),
    ("len_float", tried("len(Returns(x.shape[0] / 2))")),
    ("len_size", "return x, len(Returns(x.shape[0])), bool(Returns(x.shape[0] - x.shape[0]))"),
    ("bool_returns_int", tried("bool(Returns(x.shape[0]))")),
    ("bool_in_if_returns_int", "try:\n    if Returns(1):\n        r = 'yes'\nexcept TypeError as e:\n    r = str(e)\nreturn x, r"),
    ("format_returns_int", tried("format(Returns(x.shape[0]))")),
    ("index_returns_float", tried("[1, 2, 3][Returns(1.0)]")),
    ("index_returns_size", "return x[Returns(x.shape[0] - 1)], list(range(9))[Returns(x.shape[0])]"),
    ("missing_of_dict_subclass", "m = Missing(a=1)\nreturn x, m['a'], m[x.shape[0]], m.get('q'), 'q' in m, dict(m)"),
    ("unhashable_object_key", tried("{Unhashable(): x}")),
    ("unhashable_list_in_set", tried("{(1,), [x.shape[0]]}")),
]
sampled_snippets(SOURCE_CLASS, "r6_protocol", RESULTS, namespace=NS)

LOOKUP = [
    ("lookup_order", "o = Lookup()\no.__dict__['nd'] = 'instance'\no.__dict__['d'] = 'instance'\no.plain = x.shape[0]\nreturn x, o.plain, o.nd, o.d, o.missing, Lookup.plain"),
    ("data_descriptor_set", "o = Lookup()\no.d = x.shape[0]\nreturn x, o.d, o._v"),
    ("non_data_shadowed_by_assignment", "o = Lookup()\na = o.nd\no.nd = x.shape[0]\nreturn x, a, o.nd"),
    ("cached_property_once", "c = Cached(x)\na, b = c.double, c.double\nreturn a, b is a, c.calls, 'double' in c.__dict__"),
    ("cached_property_reset_by_del", "c = Cached(x.shape[0])\na = c.double\ndel c.double\nc.v = 10\nreturn x, a, c.double, c.calls"),
    ("property_get_set_del", "p = Prop(x)\np.v = p.v * x.shape[0]\nv = p.v\ndel p.v\ntry:\n    p.v\nexcept AttributeError:\n    err = 'AttributeError'\nreturn v, p.log, err"),
    ("super_in_method_and_classmethod", "c = Child()\nreturn c.f(x), Child.name(), c.name()"),
]
sampled_snippets(SOURCE_DESCR, "r6_lookup", LOOKUP, namespace=NS)

DELETION = [
    ("del_missing_attribute_message", "try:\n    del o.missing\nexcept AttributeError as e:\n    return x, str(e)"),
    ("read_after_del_message", "del o.n\ntry:\n    o.n\nexcept AttributeError as e:\n    return x, str(e), hasattr(o, 'n')"),
    ("del_twice_message", "del o.t\ntry:\n    del o.t\nexcept AttributeError as e:\n    return x, str(e)"),
    ("del_then_set_again", "del o.t\no.t = x * o.n\nreturn o.t, sorted(vars(o))"),
    ("delattr_builtin_and_getattr_default", "delattr(o, 'n')\nreturn x, getattr(o, 'n', 'gone'), sorted(vars(o))"),
]
sampled_snippets(SOURCE_DESCR, "r6_delattr", DELETION, namespace=NS, params="x, o", make_args=tensor_and_holder)
