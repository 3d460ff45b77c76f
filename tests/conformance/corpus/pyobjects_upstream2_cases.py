"""Cases modelled on dynamo's test_misc and test_functions tests of user classes and Python's
data model (recast in our own words): closures made in loops (late binding) and bound by
defaults, nonlocal through two levels, classes built with type() and with __init_subclass__,
class-level descriptors read through the class, properties with setters and deleters,
functools.cached_property, __slots__, classmethods reached through subclasses and super(),
binary operators falling back to the reflected method (NotImplemented), __iadd__ declining,
__bool__ and __len__ returning what they must not, `in` through __iter__ or __getitem__,
iteration through __getitem__ alone, __index__ in slices, unhashable classes, comparisons
between unrelated types, and sort stability and errors."""

import functools

import torch

from . import snippets


class Meter:
    def __init__(self):
        self._v = 1.0
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
        self._v = 0.0


class Cached:
    calls = 0

    def __init__(self, t):
        self.t = t

    @functools.cached_property
    def doubled(self):
        Cached.calls += 1
        return self.t * 2


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a):
        self.a = a


class Registry:
    members = []

    def __init_subclass__(cls, tag="none", **kwargs):
        super().__init_subclass__(**kwargs)
        cls.tag = tag


class Base:
    @classmethod
    def make(cls, t):
        return cls, t * cls.factor()

    @classmethod
    def factor(cls):
        return 1


class Child(Base):
    @classmethod
    def factor(cls):
        return 3

    @classmethod
    def make(cls, t):
        kind, value = super().make(t)
        return kind, value + 1


class Left:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return NotImplemented

    def __eq__(self, other):
        return NotImplemented


class Right:
    def __init__(self, v):
        self.v = v

    def __radd__(self, other):
        return other.v * 10 + self.v

    def __eq__(self, other):
        return isinstance(other, Left) and other.v == self.v


class Acc:
    def __init__(self, v):
        self.v = v

    def __iadd__(self, other):
        return NotImplemented

    def __add__(self, other):
        return Acc(self.v + other)


class BadBool:
    def __bool__(self):
        return 1


class NegativeLen:
    def __len__(self):
        return -1


class IterOnly:
    def __iter__(self):
        return iter([1, 2, 3])


class GetItemOnly:
    def __getitem__(self, i):
        if i >= 3:
            raise IndexError(i)
        return i * 10


class Idx:
    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


class Unhashable:
    __hash__ = None


class Rev:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


NS = {
    "torch": torch, "functools": functools, "Meter": Meter, "Cached": Cached, "Slotted": Slotted, "Registry": Registry,
    "Base": Base, "Child": Child, "Left": Left, "Right": Right, "Acc": Acc, "BadBool": BadBool,
    "NegativeLen": NegativeLen, "IterOnly": IterOnly, "GetItemOnly": GetItemOnly, "Idx": Idx,
    "Unhashable": Unhashable, "Rev": Rev,
}

CASES = [
    ("closures_in_loop_late_binding", "fs = [lambda: x * i for i in range(3)]\nreturn [f() for f in fs]"),
    ("closures_in_loop_bound_by_default", "fs = [lambda i=i: x * i for i in range(3)]\nreturn [f() for f in fs]"),
    ("nonlocal_two_levels", "n = 0\ndef outer():\n    def inner():\n        nonlocal n\n        n += 1\n    inner()\n    inner()\nouter()\nreturn x * n, n"),
    ("nonlocal_rebinds_list_cell", "acc = []\ndef add(t):\n    nonlocal acc\n    acc = acc + [t]\nadd(x)\nadd(x * 2)\nreturn acc"),
    ("type_three_argument_class", "K = type('K', (object,), {'scale': 3, 'apply': lambda self, t: t * self.scale})\nk = K()\nreturn k.apply(x), K.__name__, isinstance(k, K)"),
    ("init_subclass_keyword", "class A(Registry, tag='a'):\n    pass\nclass B(Registry):\n    pass\nreturn x, A.tag, B.tag"),
    ("property_get_set_delete", "m = Meter()\na = m.v\nm.v = 4.0\nb = m.v\ndel m.v\nreturn x * a + b + m.v, m.log"),
    ("property_object_through_class", "p = Meter.v\nreturn x, type(p).__name__, p.fget is Meter.__dict__['v'].fget"),
    ("cached_property_computed_once", "c = Cached(x)\nbefore = Cached.calls\na = c.doubled\nb = c.doubled\nreturn a, a is b, Cached.calls - before, 'doubled' in vars(c)"),
    ("cached_property_deleted_recomputes", "c = Cached(x)\na = c.doubled\ndel c.doubled\nc.t = x + 1\nreturn a, c.doubled"),
    ("slots_set_and_missing", "s = Slotted(x)\ns.b = x * 2\ntry:\n    s.c = 1\nexcept AttributeError:\n    missing = True\nreturn s.a + s.b, missing, hasattr(s, '__dict__')"),
    ("slots_unset_slot_raises", "s = Slotted(x)\nreturn s.b"),
    ("classmethod_through_subclass_and_super", "k, v = Child.make(x)\nk2, v2 = Base.make(x)\nreturn k is Child, v, k2 is Base, v2"),
    ("classmethod_through_instance", "return Child().make(x)[1], Base().factor()"),
    ("reflected_add_after_not_implemented", "return x + (Left(2) + Right(3)), Left(2) + Right(3)"),
    ("reflected_eq_after_not_implemented", "return x, Left(1) == Right(1), Left(1) != Right(2), Left(1) == Left(1)"),
    ("iadd_not_implemented_falls_back", "a = Acc(1)\nb = a\na += 5\nreturn x + a.v, a is b, b.v"),
    ("bool_returning_int_raises", "if BadBool():\n    return x\nreturn x + 1"),
    ("negative_len_raises", "return x, len(NegativeLen())"),
    ("contains_through_iter", "return x, 2 in IterOnly(), 5 in IterOnly()"),
    ("contains_and_iteration_through_getitem", "g = GetItemOnly()\nreturn x + sum(g), 20 in g, list(g), 25 in g"),
    ("index_dunder_in_slices", "l = list(range(10))\nreturn x, l[Idx(2):Idx(8):Idx(2)], x[Idx(1):], 'abcdef'[Idx(3)]"),
    ("unhashable_class_as_key_raises", "return {Unhashable(): x}"),
    ("unhashable_class_in_set_caught", "try:\n    s = {Unhashable()}\nexcept TypeError as e:\n    return x, 'unhashable' in str(e)\nreturn x, s"),
    ("compare_unrelated_types_raises", "return x, 1 < 'a'"),
    ("sort_mixed_types_raises", "return x, sorted([3, 'a', 1])"),
    ("sort_stable_with_ties_and_reverse", "items = [('b', 1), ('a', 1), ('c', 0), ('d', 1)]\nreturn x, sorted(items, key=lambda p: p[1]), sorted(items, key=lambda p: p[1], reverse=True)"),
    ("reversed_custom_sequence", "return x, list(reversed(Rev([1, 2, 3]))), [v * x.shape[0] for v in reversed(Rev('ab'))]"),
    ("min_max_key_default", "ts = [x, x * 2, x - 1]\nreturn min(ts, key=lambda t: float(t.sum())), max([], default=x), max(3, 7, key=lambda v: -v)"),
    ("round_divmod_pow", "n = x.shape[0]\nreturn x, round(n / 3, 2), divmod(-n, 3), pow(n, 3, 5), round(2.5), round(-0.5)"),
    ("int_float_parsing", "return x, int('10', 2), int('  -7 '), float('inf') > 1e308, float('-0.0'), int(3.99), int(-3.99)"),
    ("zip_strict_mismatch_raises", "return list(zip([x], [1, 2], strict=True))"),
    ("map_multiple_iterables", "return list(map(lambda a, b: a * b, x.unbind(), range(10)))"),
    ("filter_none_truthiness", "return x, list(filter(None, [0, 1, '', 'a', [], [0], None, 2.0]))"),
    ("callable_and_hash_of_tuples", "return x, callable(Meter), callable(Meter()), hash((1, 'a')) == hash((1, 'a')), callable(x.add)"),
    ("walrus_in_comprehension_leaks", "vals = [y := v * 2 for v in range(3)]\nreturn x + y, vals"),
    ("class_body_reads_enclosing", "k = x.shape[0]\nclass C:\n    size = k\n    doubled = [k * 2 for _ in range(2)]\nreturn x * C.size, C.doubled"),
]
snippets("dynamo/test_misc", "pyobjects2", CASES, namespace=NS)
