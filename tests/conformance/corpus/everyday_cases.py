"""Everyday Python around tensors, modelled on dynamo's test_functions and test_misc: structural
pattern matching (match on sizes, sequences, mappings, classes with __match_args__, guards),
dataclasses (replace, asdict/astuple, default factories, __post_init__, frozen, field order,
InitVar), namedtuples (_replace, _asdict, _make, _fields, defaults), enums (Flag algebra,
IntEnum arithmetic, lookup by value and name, iteration, auto), isinstance against
collections.abc and typing protocols, closures made in loops (late binding, default-argument
capture), keyword-only and positional-only parameters, star unpacking, the walrus operator,
f-string format specs on sizes and floats, dict merge operators, sorted with keys, recursion,
__init_subclass__ registries, __class_getitem__, and generators driven by send/throw/close.
Recast in our own words."""

import collections
import dataclasses
import enum
import functools
import itertools
import operator
import typing
from collections.abc import Iterable, Mapping, Sequence, Sized

import torch

from . import matrix, snippets, two_vecs

SOURCE = "dynamo/test_misc"


@dataclasses.dataclass
class Point:
    x: torch.Tensor
    scale: float = 1.0
    tags: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        self.tags.append("made")

    def scaled(self):
        return self.x * self.scale


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: int
    b: int = 2


@dataclasses.dataclass
class WithInitVar:
    t: torch.Tensor
    shift: dataclasses.InitVar[float] = 0.0

    def __post_init__(self, shift):
        self.t = self.t + shift


Pair = collections.namedtuple("Pair", ["left", "right"], defaults=[None])


class Typed(typing.NamedTuple):
    value: torch.Tensor
    count: int = 1

    def total(self):
        return self.value * self.count


class Perm(enum.Flag):
    R = enum.auto()
    W = enum.auto()
    X = enum.auto()


class Level(enum.IntEnum):
    LOW = 1
    MID = 2
    HIGH = 3


class Color(enum.Enum):
    RED = "r"
    GREEN = "g"


class Vec2:
    __match_args__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b


class Registry:
    kinds: typing.ClassVar[dict] = {}

    def __init_subclass__(cls, kind=None, **kwargs):
        super().__init_subclass__(**kwargs)
        Registry.kinds[kind or cls.__name__] = cls


class Doubler(Registry, kind="double"):
    @staticmethod
    def run(t):
        return t * 2


class Negator(Registry, kind="neg"):
    @staticmethod
    def run(t):
        return -t


class Hashed:
    def __init__(self, k):
        self.k = k

    def __hash__(self):
        return self.k

    def __eq__(self, other):
        return isinstance(other, Hashed) and other.k == self.k


class Boxed:
    def __class_getitem__(cls, item):
        return f"{cls.__name__}[{item.__name__}]"


class Meters(Sequence):
    """A user Sequence: abc mixins give it __contains__, __iter__, index, count."""

    def __init__(self, values):
        self._values = list(values)

    def __getitem__(self, i):
        return self._values[i]

    def __len__(self):
        return len(self._values)


def accumulate():
    total = 0
    while True:
        try:
            value = yield total
        except ValueError:
            total = 0
            continue
        if value is None:
            return total
        total = total + value


def kw_only(t, *, scale, shift=0.0):
    return t * scale + shift


def pos_only(t, k, /, extra=1):
    return t * k + extra


def depth(t, n):
    return t if n == 0 else depth(t * 0.5, n - 1) + 1


NS = {
    "torch": torch, "dataclasses": dataclasses, "collections": collections, "enum": enum, "functools": functools,
    "itertools": itertools, "operator": operator, "typing": typing, "Iterable": Iterable, "Mapping": Mapping,
    "Sequence": Sequence, "Sized": Sized, "Point": Point, "Frozen": Frozen, "WithInitVar": WithInitVar, "Pair": Pair,
    "Typed": Typed, "Perm": Perm, "Level": Level, "Color": Color, "Vec2": Vec2, "Registry": Registry,
    "Boxed": Boxed, "Hashed": Hashed, "Meters": Meters, "accumulate": accumulate, "kw_only": kw_only, "pos_only": pos_only, "depth": depth,
}

MATCH = [
    ("match_on_size", "match x.shape[0]:\n    case 0 | 1:\n        return x\n    case n if n % 2 == 0:\n        return x * n\n    case _:\n        return x - 1"),
    ("match_sequence_star", "match list(x.shape) + [5]:\n    case [first, *rest]:\n        return x * first, rest"),
    ("match_mapping", "cfg = {'kind': 'scale', 'k': x.shape[0], 'unused': 1}\nmatch cfg:\n    case {'kind': 'shift', 'k': k}:\n        return x + k\n    case {'kind': 'scale', 'k': k, **rest}:\n        return x * k, sorted(rest)"),
    ("match_class_positional", "v = Vec2(x, x.shape[0])\nmatch v:\n    case Vec2(t, 0):\n        return t\n    case Vec2(t, n):\n        return t * n"),
    ("match_tensor_class", "match x:\n    case torch.Tensor() if x.dim() == 1:\n        return x + 1\n    case _:\n        return x"),
    ("match_literal_strings_and_none", "out = []\nfor item in ('a', None, 3, 'b'):\n    match item:\n        case 'a' | 'b':\n            out.append(x * 2)\n        case None:\n            out.append(x)\n        case int(k):\n            out.append(x + k)\nreturn out"),
    ("match_enum_members", "lvl = Level(1 + x.shape[0] % 3)\nmatch lvl:\n    case Level.LOW:\n        return x\n    case Level.MID:\n        return x * 2\n    case _:\n        return x * 3"),
]
MATCH += [
    ("match_dataclass_auto_match_args", "p = Point(x, 2.0)\nmatch p:\n    case Point(t, 1.0):\n        return t\n    case Point(t, s, tags=[*_, 'made']):\n        return t * s"),
    ("match_defaultdict_does_not_insert", "d = collections.defaultdict(int, a=x.shape[0])\nmatch d:\n    case {'b': v}:\n        r = x + v\n    case {'a': v}:\n        r = x * v\nreturn r, sorted(d)"),
    ("match_tuple_of_tensors", "pair = (x, x * 2)\nmatch pair:\n    case (a,):\n        return a\n    case (a, b):\n        return a + b"),
    ("match_missing_keyword_attribute", "v = Vec2(x, 1)\nmatch v:\n    case Vec2(c=c):\n        return c\n    case Vec2(a=a, b=b):\n        return a * b"),
    ("match_user_sequence_and_str", "out = []\nfor subject in (Meters([1.0, 2.0]), 'ab', [3.0], {'k': 1}):\n    match subject:\n        case [a, b]:\n            out.append(('two', a))\n        case [a]:\n            out.append(('one', a))\n        case str():\n            out.append('str')\n        case _:\n            out.append('other')\nreturn x, out"),
    ("match_too_many_positional_raises", "try:\n    match Vec2(x, 1):\n        case Vec2(a, b, c):\n            return a\nexcept TypeError as e:\n    return x, 'positional' in str(e)\nreturn x"),
    ("match_mapping_rest_copy", "d = {'a': x, 'b': 2, 'c': 3}\nmatch d:\n    case {'a': t, **rest}:\n        return t * len(rest), sorted(rest), len(d)"),
    ("match_or_capture_and_as", "match (x.shape[0], 'k'):\n    case (1 | 2 as n, _) | (n, 'z'):\n        return x * n\n    case (int() as n, str(s)) if n > 2:\n        return x + n, s"),
    ("match_value_pattern_dotted", "c = Color('r' if x.shape[0] % 2 else 'g')\nmatch c:\n    case Color.RED:\n        return x\n    case Color.GREEN:\n        return -x"),
]
snippets(SOURCE, "everyday_match", MATCH, namespace=NS)


def vec2_of(n):
    import random

    return Vec2(torch.randn(n), random.choice([0, 1, 2])), torch.randn(n)


snippets(SOURCE, "everyday_match_input", [
    ("match_input_object_attribute_changes", "match v:\n    case Vec2(t, 0):\n        return t + x\n    case Vec2(t, 1):\n        return t * x\n    case Vec2(b=k):\n        return x * k"),
    ("match_input_dict_keys_change", "match d:\n    case {'a': a, 'b': b}:\n        return x * a + b\n    case {'a': a}:\n        return x * a\n    case _:\n        return x", {"params": "d, x", "make_args": lambda n: (__import__('random').choice([{'a': 2}, {'a': 1, 'b': 3}, {}]), torch.randn(n))}),
], namespace=NS, params="v, x", make_args=vec2_of)

DATA = [
    ("dataclass_default_factory_and_post_init", "p = Point(x, 2.0)\nq = Point(x)\nreturn p.scaled() + q.scaled(), p.tags, q.tags is not p.tags"),
    ("dataclass_replace_asdict_astuple", "p = Point(x, 3.0)\nq = dataclasses.replace(p, scale=0.5)\nd = dataclasses.asdict(q)\nreturn q.scaled(), sorted(d), dataclasses.astuple(Frozen(1))"),
    ("dataclass_equality_and_fields", "a = Frozen(1, x.shape[0])\nb = Frozen(1, x.shape[0])\nreturn x * a.b, a == b, hash(a) == hash(b), [f.name for f in dataclasses.fields(a)]"),
    ("frozen_dataclass_assignment_raises", "f = Frozen(1)\ntry:\n    f.a = 3\nexcept dataclasses.FrozenInstanceError:\n    return x * f.a\nreturn x"),
    ("dataclass_initvar", "w = WithInitVar(x, shift=2.0)\nreturn w.t, hasattr(w, 'shift')"),
    ("namedtuple_methods", "p = Pair(x, x * 2)\nq = p._replace(right=x + 1)\nreturn q.left + q.right, p._asdict()['right'], Pair._fields, Pair._make([x, 1]).right, Pair(x).right"),
    ("typed_namedtuple_method_and_default", "t = Typed(x)\nu = Typed(x, 3)\nreturn t.total() + u.total(), u._replace(count=2).total(), len(u), u[1]"),
    ("namedtuple_unpack_and_compare", "a, b = Pair(x, 2)\nreturn a * b, Pair(1, 2) == (1, 2), Pair(1, 2) < Pair(1, 3)"),
    ("enum_flag_algebra", "p = Perm.R | Perm.W\nreturn x * (Perm.W in p) + (Perm.X in p), p & Perm.R == Perm.R, bool(p & Perm.X), (~Perm.R & p) == Perm.W"),
    ("int_enum_arithmetic", "return x * Level.HIGH + Level.LOW, Level.MID + 1, Level(2) is Level.MID, max(Level).name"),
    ("enum_lookup_and_iteration", "c = Color('g')\nreturn x, c.name, Color['RED'].value, [m.value for m in Color], len(Color), c in Color"),
    ("enum_in_dict_key", "table = {Color.RED: 1.0, Color.GREEN: 2.0}\nreturn x * table[Color('r')] + table[Color.GREEN]"),
]
snippets(SOURCE, "everyday_data", DATA, namespace=NS)

TYPES = [
    ("isinstance_abc", "return x, [isinstance(v, Sequence) for v in ([1], (1,), 'a', {1: 2}, x)], isinstance({}, Mapping), isinstance(x, Iterable), isinstance(range(3), Sized)"),
    ("user_sequence_mixins", "m = Meters([1.0, 2.0, 3.0])\nreturn x * sum(m), 2.0 in m, m.index(3.0), list(reversed(m)), m.count(1.0)"),
    ("typing_get_origin_args", "hint = dict[str, list[int]]\nreturn x, typing.get_origin(hint) is dict, typing.get_args(hint)[0] is str"),
    ("hash_of_user_objects", "ks = [Hashed(x.shape[0]), Hashed(-1), Hashed(2 ** 63), Hashed(2 ** 61 + 5), Frozen(1, 2)]\nreturn x, [hash(k) for k in ks], len({Hashed(1), Hashed(1), Hashed(2)}), hash(Frozen(1, 2)) == hash(Frozen(1, 2))"),
    ("iterate_enum_classes", "return x * len(Level), [c.value for c in Color], max(Level).name, list(Perm), sum(Level)"),
    ("class_getitem", "return x, Boxed[int], Boxed[float]"),
    ("init_subclass_registry", "return Registry.kinds['double'].run(x) + Registry.kinds['neg'].run(x), sorted(Registry.kinds)"),
    ("type_checks_on_values", "vals = [1, 1.5, True, 'a', None, x]\nreturn [type(v).__name__ for v in vals], [isinstance(v, int) for v in vals], callable(len), callable(x)"),
]
snippets(SOURCE, "everyday_types", TYPES, namespace=NS)

FUNCS = [
    ("late_binding_closures_in_loop", "fs = [lambda t: t * i for i in range(3)]\ngs = [lambda t, i=i: t * i for i in range(3)]\nreturn [f(x) for f in fs], [g(x) for g in gs]"),
    ("nonlocal_counter_factory", "def counter():\n    n = 0\n    def bump(k=1):\n        nonlocal n\n        n += k\n        return n\n    return bump\nc = counter()\nc()\nc(2)\nreturn x * c(), c.__closure__[0].cell_contents"),
    ("keyword_only_and_positional_only", "r = kw_only(x, scale=2.0) + pos_only(x, 3)\ntry:\n    kw_only(x, 2.0)\nexcept TypeError:\n    r = r + 1\ntry:\n    pos_only(t=x, k=1)\nexcept TypeError:\n    r = r + 1\nreturn r"),
    ("star_unpacking_everywhere", "first, *middle, last = range(x.shape[0])\nd = {**{'a': 1}, 'b': 2, **{'a': 3}}\nt = (*middle, *[last])\nreturn x[first] + x[last], middle, d, t, [*'ab', *range(2)]"),
    ("walrus_in_comprehension_and_if", "if (n := x.shape[0]) > 2:\n    x = x * n\nys = [y for v in range(n) if (y := v * v) % 2]\nreturn x, ys, n"),
    ("fstring_format_specs", "n = x.shape[0]\nv = float(n) / 3\nreturn x, f'{n:03d}|{v:.3f}|{v:>10.2e}|{n:#x}|{n:b}|{\"s\":^5}|{n!r}|{x.dtype}|{tuple(x.shape)}'"),
    ("percent_and_format_method", "n = x.shape[0]\nreturn x, '%d items, %.2f%%' % (n, 100 / n), '{0}-{1}-{0}'.format(n, 'a'), '{k}'.format(k=n), format(n / 7, '.4g')"),
    ("dict_merge_operators", "a = {'x': 1, 'y': 2}\nb = {'y': 3, 'z': 4}\nc = a | b\na |= {'w': 0}\nreturn x * c['y'], list(c), list(a)"),
    ("sorted_with_keys", "items = [('b', 2), ('a', 3), ('c', 1)]\nby_val = sorted(items, key=operator.itemgetter(1), reverse=True)\nby_len = sorted(['ccc', 'a', 'bb'], key=len)\nreturn x * by_val[0][1], by_val, by_len, min(items, key=lambda p: p[1])[0]"),
    ("recursion_helper", "return depth(x, 3)"),
    ("functools_reduce_and_accumulate", "parts = [x, x * 2, x * 3]\nreturn functools.reduce(operator.add, parts), list(itertools.accumulate([1, 2, 3], operator.mul))"),
    ("generator_send_throw_close", "g = accumulate()\nnext(g)\ng.send(x)\ng.send(x * 2)\ng.throw(ValueError)\ng.send(x + 1)\ntry:\n    g.send(None)\nexcept StopIteration as stop:\n    return stop.value"),
    ("generator_expression_consumed_twice", "g = (v * 2 for v in range(3))\nfirst = sum(g)\nsecond = sum(g)\nreturn x * first + second"),
    ("chained_comparisons_and_ternary", "n = x.shape[0]\nreturn x * (2 if 1 < n <= 10 else 3), 0 <= n < 5 < 6, n == n != n + 1"),
    ("zip_strict_and_enumerate_start", "pairs = list(zip(range(3), 'abc', strict=True))\ntry:\n    list(zip([1], [1, 2], strict=True))\nexcept ValueError:\n    pairs.append('short')\nreturn x, pairs, list(enumerate('xy', start=5))"),
    ("global_constant_table", "ops = {'add': operator.add, 'mul': operator.mul}\nout = x\nfor name in sorted(ops):\n    out = ops[name](out, 2)\nreturn out"),
]
snippets(SOURCE, "everyday_functions", FUNCS, namespace=NS)

snippets("dynamo/test_functions", "everyday_two", [
    ("args_kwargs_forwarding", "def inner(*args, **kwargs):\n    return sum(args) * kwargs.get('k', 1), sorted(kwargs)\ndef outer(*args, **kwargs):\n    return inner(*args, *args, k=2, **kwargs)\nreturn outer(x, y, z=1)"),
    ("default_mutable_argument_local", "def f(t, acc=[]):\n    acc.append(t)\n    return len(acc)\nreturn f(x) + f(y), x + y"),
    ("methods_of_tensor_by_name", "names = ['sin', 'cos', 'exp']\nreturn [getattr(x, n)() + getattr(torch, n)(y) for n in names]"),
    ("list_of_tensors_sorted_by_value", "ts = [x, y, x + y]\nts.sort(key=lambda t: float(t.sum()))\nreturn ts"),
], namespace=NS, params="x, y", make_args=two_vecs)

snippets("dynamo/test_misc", "everyday_matrix", [
    ("unpack_rows_with_star", "first, *rest = x\nreturn first + sum(rest), len(rest)"),
    ("shape_tuple_arithmetic", "n, m = x.shape\nreturn x.reshape(m, n) * (n * m), x.shape[::-1], x.size()[1:] + (2,)"),
], namespace=NS, make_args=matrix)
