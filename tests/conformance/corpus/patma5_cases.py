"""Structural pattern matching as CPython's test_patma checks it (recast in our own words;
dynamo's cpython/3_13 port of the file guided the choice), with subjects built from tensors and
their sizes, so that the third call (a new size) takes another branch or binds another value:
literal and value patterns (dotted names, enums, int enums equal to ints, True/1/1.0), or-patterns
with captures, guards seeing earlier captures, sequence patterns on tuples, lists, ranges, strings
(never sequences) and custom Sequence classes, star captures (always lists), mapping patterns
(extra keys allowed, **rest, keys looked up with get, defaultdicts not filled), class patterns
(__match_args__, keyword attributes, builtins matching by self, isinstance against subclasses),
captures leaking after a failed case, and match inside loops, nested functions and comprehensions.
"""

import collections
import dataclasses
import enum

import torch

from .round5_support import sampled_snippets
from .upstream4_support import graph_break

SOURCE = "cpython/test_patma"


@dataclasses.dataclass
class Point:
    x: object
    y: object


class Color(enum.Enum):
    RED = 0
    GREEN = 1
    BLUE = 2


class IntColor(int, enum.Enum):
    RED = 0
    GREEN = 1
    BLUE = 2


class Consts:
    FOUR = 4
    SEVEN = 7


class Pair:
    __match_args__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b


class NoArgs:
    """No __match_args__: positional sub-patterns are a TypeError."""

    def __init__(self, v):
        self.v = v


class Counted(collections.abc.Sequence):
    """A Sequence whose item reads are counted (a star pattern reads every item)."""

    reads = 0

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        type(self).reads += 1
        return i * 10


class LoggingMap(collections.abc.Mapping):
    """A Mapping that records the keys a mapping pattern asks for (via get, not __getitem__)."""

    def __init__(self, data):
        self.data = dict(data)
        self.asked = []

    def __getitem__(self, key):
        self.asked.append(("getitem", key))
        return self.data[key]

    def get(self, key, default=None):
        self.asked.append(("get", key))
        return self.data.get(key, default)

    def __iter__(self):
        return iter(self.data)

    def __len__(self):
        return len(self.data)


class Sub(Point):
    pass


NS = {
    "torch": torch,
    "collections": collections,
    "Point": Point,
    "Sub": Sub,
    "Color": Color,
    "IntColor": IntColor,
    "Consts": Consts,
    "Pair": Pair,
    "NoArgs": NoArgs,
    "Counted": Counted,
    "LoggingMap": LoggingMap,
    "brk": graph_break,
}

LITERALS = [
    ("literal_size", "match x.shape[0]:\n    case 4:\n        return x + 4\n    case 7:\n        return x - 7\nreturn x"),
    ("literal_or_pattern_size", "match x.shape[0]:\n    case 0 | 1 | 2 | 3 | 4:\n        y = x * 2\n    case _:\n        y = x * 3\nreturn y"),
    ("literal_no_match_keeps_default", "y = None\nmatch x.shape[0] + 10:\n    case 0 | 1 | 2:\n        y = x\nreturn x, y"),
    ("literal_first_of_equal_cases", "match x.shape[0] % 2:\n    case 0:\n        r = 'a'\n    case 0:\n        r = 'b'\n    case _:\n        r = 'c'\nreturn x, r"),
    ("literal_guard_false_then_true", "n = x.shape[0]\nmatch n:\n    case 4 if n > 100:\n        r = 0\n    case 4 if n < 100:\n        r = 1\n    case _:\n        r = 2\nreturn x * r"),
    ("literal_true_is_not_one", "out = []\nfor v in (True, 1, 1.0, x.shape[0] > 5):\n    match v:\n        case True:\n            out.append('T')\n        case 1:\n            out.append('1')\n        case _:\n            out.append('?')\nreturn x, out"),
    ("literal_none_and_false", "out = []\nfor v in (None, False, 0, '', x.shape[0] == 7):\n    match v:\n        case None:\n            out.append('none')\n        case False:\n            out.append('false')\n        case 0:\n            out.append('zero')\n        case _:\n            out.append('other')\nreturn x, out"),
    ("literal_float_matches_int", "match float(x.shape[0]):\n    case 4:\n        return x + 0.5\n    case 7:\n        return x - 0.5\nreturn x"),
    ("literal_negative_and_complex", "out = []\nfor v in (-x.shape[0], -4, 2j, -1 + 2j):\n    match v:\n        case -4:\n            out.append('m4')\n        case -1 + 2j:\n            out.append('c')\n        case 2j:\n            out.append('j')\n        case _:\n            out.append('?')\nreturn x, out"),
    ("literal_strings_and_bytes", "name = 'even' if x.shape[0] % 2 == 0 else 'odd'\nmatch name:\n    case 'even':\n        r = x[::2]\n    case 'odd':\n        r = x[1::2]\nmatch b'ab':\n    case 'ab':\n        k = 'str'\n    case b'ab':\n        k = 'bytes'\nreturn r, k"),
    ("value_pattern_dotted_name", "match x.shape[0]:\n    case Consts.FOUR:\n        return x * 4\n    case Consts.SEVEN:\n        return x * 7\nreturn x"),
    ("value_pattern_enum", "c = Color(x.shape[0] % 3)\nmatch c:\n    case Color.RED:\n        r = x + 0\n    case Color.GREEN:\n        r = x + 1\n    case Color.BLUE:\n        r = x + 2\nreturn r, c.name"),
    ("value_pattern_enum_not_int", "out = []\nfor v in (0, 1, Color.RED, False):\n    match v:\n        case Color.RED:\n            out.append('red')\n        case _:\n            out.append('no')\nreturn x, out"),
    ("value_pattern_int_enum_equals_int", "out = []\nfor v in (0, 1, 2, 3, True, 2 + 0j, x.shape[0] - 3):\n    match v:\n        case IntColor.RED:\n            out.append('r')\n        case IntColor.GREEN:\n            out.append('g')\n        case IntColor.BLUE:\n            out.append('b')\n        case _:\n            out.append('-')\nreturn x, out"),
    ("http_status_table", "def status(code):\n    match code:\n        case 400:\n            return 'bad'\n        case 401 | 403 | 404:\n            return 'denied'\n        case 418:\n            return 'teapot'\n        case _:\n            return 'other'\nreturn x, [status(c) for c in (400, 403, 418, 401 | 403 | 404, '400', x.shape[0] * 100)]"),
    ("guard_sees_capture", "n = x.shape[0]\nmatch n:\n    case (0 as z) | (1 as z) | (4 as z) | (7 as z) if z == n % 2 or z > 3:\n        y = x * z\n    case _:\n        y = x\nreturn y"),
    ("guard_with_tensor_value", "match x.shape[0]:\n    case n if bool((x > 0).any()):\n        return x + n\n    case n:\n        return x - n"),
    ("guard_raises", "def check(v):\n    raise KeyError(v)\ntry:\n    match x.shape[0]:\n        case n if check(n):\n            return x\nexcept KeyError as e:\n    return x * 2, e.args"),
    ("capture_binds_identity", "match x:\n    case t:\n        pass\nreturn t is x, t + 1"),
    ("wildcard_binds_nothing", "t = 'unbound'\nmatch x:\n    case _:\n        pass\nreturn x, t"),
    ("as_pattern_on_or", "out = []\nfor v in (x.shape[0], 0, 9):\n    match v:\n        case (4 | 7) as hit:\n            out.append(hit * 10)\n        case other:\n            out.append(-other)\nreturn x, out"),
    ("capture_leaks_from_failed_case", "z = None\nmatch (x.shape[0], 'no'):\n    case (z, 'yes'):\n        r = 1\n    case _:\n        r = 2\nreturn x * r, z"),
]
sampled_snippets(SOURCE, "patma5_literal", LITERALS, namespace=NS)

SEQUENCES = [
    ("seq_empty_tuple_and_list", "out = []\nfor v in ((), [], (x,), [x, x]):\n    match v:\n        case []:\n            out.append(0)\n        case [t]:\n            out.append(t.sum())\n        case [a, b]:\n            out.append((a + b).sum())\nreturn out"),
    ("seq_star_capture_is_list", "match (x, x + 1, x + 2):\n    case [*rest]:\n        pass\nreturn type(rest).__name__, rest"),
    ("seq_star_middle", "match tuple(range(x.shape[0])):\n    case [first, *mid, last]:\n        return x + first + last, mid"),
    ("seq_star_front_and_back", "v = list(range(x.shape[0]))\nmatch v:\n    case [*front, 5, 6]:\n        r = ('f', front)\n    case [0, 1, *back]:\n        r = ('b', back)\nreturn x, r"),
    ("seq_star_empty", "match (x, x * 2):\n    case [a, *mid, b]:\n        return a + b, mid"),
    ("seq_star_wildcard", "match (1, 2, 3, x):\n    case [1, *_, t]:\n        return t * 2\nreturn x"),
    ("seq_length_dispatch", "parts = list(x.unbind(0))\nmatch parts:\n    case [a, b, c, d]:\n        return a + b + c + d\n    case [a, *others] if len(others) > 4:\n        return a * len(others)\n    case _:\n        return x.sum()"),
    ("seq_shape_tuple", "m = x.reshape(1, -1) if x.shape[0] % 2 else x.reshape(2, -1)\nmatch m.shape:\n    case (1, n):\n        return m * n\n    case (2, n):\n        return m - n\n    case _:\n        return m"),
    ("seq_shape_torch_size_class", "match x.shape:\n    case torch.Size([n]):\n        return x + n\n    case _:\n        return x"),
    ("seq_nested", "data = [(x, 1), (x * 2, [x.shape[0], 'a'])]\nmatch data:\n    case [(t1, 1), (t2, [n, str() as s])]:\n        return t1 + t2 + n, s"),
    ("seq_str_not_sequence", "out = []\nfor v in ('ab', b'ab', bytearray(b'ab'), ['a', 'b'], ('a', 'b')):\n    match v:\n        case [a, b]:\n            out.append('seq')\n        case _:\n            out.append('no')\nreturn x, out"),
    ("seq_range", "match range(x.shape[0]):\n    case [a, b, *rest]:\n        return x + a + b, rest"),
    ("seq_range_large", "match range(1 << 20):\n    case (a, b, *_):\n        return x + a + b"),
    ("seq_dict_not_sequence", "match {0: x}:\n    case [t]:\n        return t\n    case _:\n        return x * 0"),
    ("seq_iterator_not_sequence", "match iter([x]):\n    case [t]:\n        return t\n    case _:\n        return -x"),
    ("seq_custom_sequence_reads", "Counted.reads = 0\nmatch Counted(x.shape[0]):\n    case [a, *_, b]:\n        r = (a, b)\nreturn x, r, Counted.reads"),
    ("seq_custom_sequence_no_star", "Counted.reads = 0\nmatch Counted(x.shape[0]):\n    case [a, b]:\n        r = 'two'\n    case [a, b, c, d]:\n        r = 'four'\n    case _:\n        r = 'other'\nreturn x, r, Counted.reads"),
    ("seq_deque_and_userlist", "out = []\nfor v in (collections.deque([x, 1]), collections.UserList([x, 2])):\n    match v:\n        case [t, k]:\n            out.append(t * k)\nreturn out"),
    ("seq_of_tensors_unbind", "match x.chunk(2):\n    case (a, b):\n        return a.sum() - b.sum()\n    case _:\n        return x"),
    ("seq_star_unpack_then_mutate", "match [x, x + 1, x + 2]:\n    case [a, *rest]:\n        rest.append(a)\nreturn rest"),
    ("seq_or_of_sequences", "v = [x.shape[0], 0]\nmatch v:\n    case [0, n] | [n, 0]:\n        return x * n\n    case _:\n        return x"),
    ("seq_across_graph_break", "t = (x, x.shape[0])\nbrk()\nmatch t:\n    case (a, 4):\n        return a + 4\n    case (a, n):\n        return a * n"),
]
sampled_snippets(SOURCE, "patma5_seq", SEQUENCES, namespace=NS)

MAPPINGS = [
    ("map_empty_matches_any_dict", "out = []\nfor d in ({}, {0: x}, [], 'a'):\n    match d:\n        case {}:\n            out.append('map')\n        case _:\n            out.append('no')\nreturn x, out"),
    ("map_extra_keys_ok", "d = {'w': x, 'b': x.shape[0], 'name': 'lin'}\nmatch d:\n    case {'w': w, 'b': b}:\n        return w + b"),
    ("map_rest", "d = {'w': x, 'b': 1, 'k': x.shape[0]}\nmatch d:\n    case {'w': w, **rest}:\n        return w, rest"),
    ("map_rest_is_new_dict", "d = {'w': x}\nmatch d:\n    case {'w': w, **rest}:\n        rest['new'] = 1\nreturn d, rest"),
    ("map_missing_key", "d = {'w': x}\nmatch d:\n    case {'w': w, 'b': b}:\n        return w + b\n    case {'w': w}:\n        return w * 2"),
    ("map_value_subpattern", "d = {0: x.shape[0] % 3}\nmatch d:\n    case {0: (0 | 1) as z}:\n        r = ('low', z)\n    case {0: z}:\n        r = ('high', z)\nreturn x, r"),
    ("map_config_dispatch", "cfg = {'op': 'scale' if x.shape[0] < 5 else 'shift', 'k': 3}\nmatch cfg:\n    case {'op': 'scale', 'k': k}:\n        return x * k\n    case {'op': 'shift', 'k': k}:\n        return x + k"),
    ("map_nested", "cfg = {'layer': {'kind': 'relu', 'n': x.shape[0]}, 'p': [1, 2]}\nmatch cfg:\n    case {'layer': {'kind': 'tanh'}}:\n        return x.tanh()\n    case {'layer': {'kind': 'relu', 'n': n}, 'p': [_, p]}:\n        return x.relu() * n + p"),
    ("map_defaultdict_not_filled", "d = collections.defaultdict(int)\nd['a'] = x.shape[0]\nmatch d:\n    case {'missing': v}:\n        r = v\n    case {'a': v}:\n        r = -v\nreturn x, r, sorted(d)"),
    ("map_custom_mapping_uses_get", "m = LoggingMap({'a': x, 'b': 2})\nmatch m:\n    case {'a': t, 'b': k}:\n        r = t * k\nreturn r, m.asked"),
    ("map_ordered_and_userdict", "out = []\nfor d in (collections.OrderedDict(a=x), collections.UserDict(a=x * 2)):\n    match d:\n        case {'a': t}:\n            out.append(t)\nreturn out"),
    ("map_keys_are_values", "K = 'weight'\nd = {'weight': x}\nmatch d:\n    case {Consts.FOUR: v}:\n        return v\n    case {'weight': v}:\n        return v + 1"),
    ("map_duplicate_key_error", "try:\n    exec(\"match {}:\\n    case {'a': 1, 'a': 2}:\\n        pass\")\nexcept SyntaxError:\n    return x, 'syntax'"),
    ("map_with_tensor_values_mutated", "d = {'t': x}\nmatch d:\n    case {'t': t}:\n        t.add_(1)\nreturn x"),
]
sampled_snippets(SOURCE, "patma5_map", MAPPINGS, namespace=NS)

CLASSES = [
    ("class_dataclass_positional", "p = Point(x.shape[0] % 2, x)\nmatch p:\n    case Point(0, t):\n        return t + 1\n    case Point(1, t):\n        return t - 1"),
    ("class_dataclass_keywords", "p = Point(x, x.shape[0])\nmatch p:\n    case Point(y=4, x=t):\n        return t * 4\n    case Point(x=t, y=n):\n        return t + n"),
    ("class_wrong_type", "match (x, 1):\n    case Point(a, b):\n        return a\n    case _:\n        return x * 3"),
    ("class_subclass_matches", "p = Sub(x, 2)\nmatch p:\n    case Point(t, k):\n        return t * k, type(p).__name__"),
    ("class_bare_isinstance", "out = []\nfor v in (x, x.shape[0], 2.5, 'a', [x], None, Point(1, 2)):\n    match v:\n        case torch.Tensor():\n            out.append('tensor')\n        case bool():\n            out.append('bool')\n        case int():\n            out.append('int')\n        case float():\n            out.append('float')\n        case str():\n            out.append('str')\n        case list():\n            out.append('list')\n        case Point():\n            out.append('point')\n        case _:\n            out.append('?')\nreturn x, out"),
    ("class_builtin_self_match", "out = []\nfor v in (x.shape[0], 3.5, 'hi', (1, 2)):\n    match v:\n        case int(n):\n            out.append(n * 2)\n        case float(f):\n            out.append(f / 2)\n        case str(s):\n            out.append(s.upper())\n        case tuple(t):\n            out.append(len(t))\nreturn x, out"),
    ("class_bool_is_int", "match x.shape[0] > 5:\n    case int(b):\n        return x + int(b), b"),
    ("class_match_args_custom", "p = Pair(x, x.shape[0])\nmatch p:\n    case Pair(t, 7):\n        return t * 7\n    case Pair(t, n):\n        return t + n"),
    ("class_match_args_too_many", "try:\n    match Pair(x, 1):\n        case Pair(a, b, c):\n            return a\nexcept TypeError as e:\n    return x, 'TypeError'"),
    ("class_no_match_args_positional", "try:\n    match NoArgs(x):\n        case NoArgs(v):\n            return v\nexcept TypeError:\n    return x * 2, 'TypeError'"),
    ("class_no_match_args_keyword", "match NoArgs(x):\n    case NoArgs(v=t):\n        return t + 1"),
    ("class_missing_attribute", "match Pair(x, 1):\n    case Pair(c=t):\n        return t\n    case Pair(a=t):\n        return t * 5"),
    ("class_points_list", "def where(ps):\n    match ps:\n        case []:\n            return 'none'\n        case [Point(0, 0)]:\n            return 'origin'\n        case [Point(x, y)]:\n            return f'one {x} {y}'\n        case [Point(0, y1), Point(0, y2)]:\n            return f'two {y1} {y2}'\n        case _:\n            return 'many'\nn = x.shape[0]\nreturn x, [where(v) for v in ([], [Point(0, 0)], [Point(n, 1)], [Point(0, n), Point(0, 2)], [Point(0, 0)] * n)]"),
    ("class_guard_on_fields", "p = Point(x.shape[0], 4)\nmatch p:\n    case Point(a, b) if a == b:\n        return x * a, 'diag'\n    case Point(a, b):\n        return x + a - b, 'off'"),
    ("class_tensor_attrs", "match x:\n    case torch.Tensor(shape=(n,), dtype=torch.float32):\n        return x * n\n    case _:\n        return x"),
    ("class_tensor_ndim_attr", "m = x.reshape(2, -1) if x.shape[0] % 2 == 0 else x\nmatch m:\n    case torch.Tensor(ndim=2):\n        return m.sum(0)\n    case torch.Tensor(ndim=1):\n        return m.cumsum(0)"),
    ("class_module", "lin = torch.nn.Linear(x.shape[0], 2)\nmatch lin:\n    case torch.nn.Linear(in_features=n, bias=None):\n        return n\n    case torch.nn.Linear(in_features=n, out_features=m):\n        return lin(x).shape, n, m"),
    ("class_enum_in_tuple", "c = Color.GREEN if x.shape[0] == 4 else Color.BLUE\nmatch (c, x):\n    case (Color.GREEN, t):\n        return t + 1\n    case (Color.BLUE, t):\n        return t + 2"),
    ("class_nested_points", "w = [Point(-1, 0), Point(x.shape[0], x)]\nmatch w:\n    case (Point(x1, y1), Point(x2, y2) as p2):\n        return y2 * x2 + x1, p2 is w[1]"),
]
sampled_snippets(SOURCE, "patma5_class", CLASSES, namespace=NS)

FLOW = [
    ("match_in_loop_accumulate", "acc = x\nfor i in range(x.shape[0]):\n    match i % 3:\n        case 0:\n            acc = acc + 1\n        case 1:\n            acc = acc * 2\n        case _:\n            acc = acc - i\nreturn acc"),
    ("match_return_inside_function", "def kind(v):\n    match v:\n        case torch.Tensor():\n            return 't'\n        case [*_]:\n            return 'seq'\n        case {}:\n            return 'map'\n    return 'none'\nreturn x, [kind(v) for v in (x, [x], {'a': x}, 3)]"),
    ("match_in_comprehension_helper", "def size_class(n):\n    match n:\n        case 0 | 1:\n            return 'tiny'\n        case n if n < 5:\n            return 'small'\n        case _:\n            return 'big'\nreturn x, [size_class(i) for i in range(x.shape[0] + 2)]"),
    ("match_break_continue", "out = []\nfor v in [1, 'skip', 2, 'stop', 3]:\n    match v:\n        case 'skip':\n            continue\n        case 'stop':\n            break\n        case n:\n            out.append(x * n)\nreturn out"),
    ("match_tree_eval", "def ev(e):\n    match e:\n        case ('add', a, b):\n            return ev(a) + ev(b)\n        case ('mul', a, b):\n            return ev(a) * ev(b)\n        case ('neg', a):\n            return -ev(a)\n        case torch.Tensor() | int() | float():\n            return e\nreturn ev(('add', ('mul', x, x.shape[0]), ('neg', ('add', x, 1.5))))"),
    ("match_exception_in_body", "try:\n    match x.shape[0]:\n        case 4:\n            raise ValueError('four')\n        case n:\n            raise KeyError(n)\nexcept (ValueError, KeyError) as e:\n    return x, type(e).__name__, e.args"),
    ("match_walrus_in_guard", "match x.shape[0]:\n    case n if (m := n * 2) > 10:\n        return x * m\n    case n:\n        return x + n"),
    ("match_closure_captures", "match (x, x.shape[0]):\n    case (t, n):\n        f = lambda: t * n\nreturn f()"),
    ("match_subject_evaluated_once", "calls = []\ndef subj():\n    calls.append(1)\n    return x.shape[0]\nmatch subj():\n    case 1:\n        r = 1\n    case 2:\n        r = 2\n    case n:\n        r = n\nreturn x * r, len(calls)"),
    ("match_data_dependent_subject", "match int(x.argmax()):\n    case 0:\n        return x + 1\n    case i:\n        return x * i"),
    ("match_grad_mode_branch", "match torch.is_grad_enabled():\n    case True:\n        return x * 2\n    case False:\n        return x * 3"),
    ("match_dtype", "def cast(t, kind):\n    match kind:\n        case torch.float32 | torch.float64:\n            return t * 1.5\n        case torch.int64:\n            return t // 2\nreturn cast(x, x.dtype), cast((x * 10).long(), torch.int64)"),
]
sampled_snippets(SOURCE, "patma5_flow", FLOW, namespace=NS)
