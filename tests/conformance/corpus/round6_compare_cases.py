"""Comparisons, membership and __index__ as CPython's test_richcmp, test_compare, test_contains
and test_index check them (recast in our own words), with tensors and sizes on either side:
reflected comparisons (the right operand's subclass first, NotImplemented falling back, `==`
falling back to identity), chained comparisons evaluating each operand once and stopping early,
`in` through __contains__, then __iter__, then __getitem__, identity before equality in list
membership (a NaN, a tensor), and objects used as indices, slice bounds and sizes through
__index__.
"""

import operator

import torch

from .round5_support import sampled_snippets
from .upstream4_support import graph_break

SOURCE_RICHCMP = "cpython/test_richcmp"
SOURCE_COMPARE = "cpython/test_compare"
SOURCE_CONTAINS = "cpython/test_contains"
SOURCE_INDEX = "cpython/test_index"


class Version:
    """Ordered by a tuple; comparisons with other types decline."""

    def __init__(self, *parts):
        self.parts = parts

    def __eq__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return self.parts == other.parts

    def __lt__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return self.parts < other.parts

    def __le__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return self.parts <= other.parts

    __hash__ = None


class LoudVersion(Version):
    """A subclass: its reflected methods are tried first."""

    log = []

    def __eq__(self, other):
        LoudVersion.log.append("sub eq")
        return super().__eq__(other)

    def __gt__(self, other):
        LoudVersion.log.append("sub gt")
        if not isinstance(other, Version):
            return NotImplemented
        return self.parts > other.parts


class Anything:
    """Equal to everything, and says so as a tensor (a vectorised comparison)."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


class Box:
    def __init__(self, items):
        self.items = items
        self.log = []


class WithContains(Box):
    def __contains__(self, item):
        self.log.append("contains")
        return item in self.items


class WithIter(Box):
    def __iter__(self):
        self.log.append("iter")
        return iter(self.items)


class WithGetitem(Box):
    def __getitem__(self, i):
        self.log.append(i)
        return self.items[i]


class Idx:
    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


class BadIdx:
    def __index__(self):
        return 1.5


class Counted:
    calls = 0

    def __init__(self, v):
        self.v = v

    def value(self):
        Counted.calls += 1
        return self.v


NS = {
    "torch": torch,
    "operator": operator,
    "Version": Version,
    "LoudVersion": LoudVersion,
    "Anything": Anything,
    "WithContains": WithContains,
    "WithIter": WithIter,
    "WithGetitem": WithGetitem,
    "Idx": Idx,
    "BadIdx": BadIdx,
    "Counted": Counted,
    "brk": graph_break,
}

RICHCMP = [
    ("objects_ordered_by_size", "a, b = Version(1, x.shape[0]), Version(1, 5)\nreturn x, a < b, a <= b, a > b, a >= b, a == b, a != b"),
    ("reflected_gt_used_for_lt", "a, b = Version(x.shape[0]), Version(5)\nreturn x, b > a, operator.gt(b, a)"),
    ("subclass_reflected_first", "LoudVersion.log.clear()\nv, w = Version(x.shape[0]), LoudVersion(x.shape[0])\nr = (v == w, v < w)\nreturn x, r, list(LoudVersion.log)"),
    ("eq_falls_back_to_identity", "v = Version(1)\nreturn x, v == 1, v != 'a', v == v, [v] == [v], v in [1, v]"),
    ("ordering_declined_raises", "try:\n    Version(1) < x.shape[0]\nexcept TypeError as e:\n    return x, str(e)"),
    ("tensor_vs_object_eq", "return x, x.shape[0] == Anything(), Anything() == x.shape[0], (x == x).all()"),
    ("tensor_eq_tensor_is_elementwise", "return x == x.flip(0), (x != x.flip(0)).sum(), x.eq(x).dtype"),
    ("tensor_compare_python_number", "n = x.shape[0]\nreturn x > n / 10, x <= -0.5, n < x.sum(), 0 == x[0]"),
    ("tensor_bool_ambiguous", "try:\n    if x > 0:\n        return x\nexcept RuntimeError as e:\n    return x * 0, 'RuntimeError'"),
    ("list_compare_elementwise_then_length", "n = x.shape[0]\nreturn x, [1, n] < [1, n, 0], [2] > [1, n], (n, 'a') < (n, 'b'), [n] == [float(n)]"),
    ("list_of_tensors_eq_needs_bool", "a, b = [x], [x.clone()]\ntry:\n    return x, a == b\nexcept RuntimeError:\n    return x, 'RuntimeError'"),
    ("list_of_same_tensor_eq_identity", "a = [x, x]\nreturn x, a == [x, x], a == list(a)"),
    ("mixed_numbers_compare", "n = x.shape[0]\nreturn x, n == n + 0.0, n == complex(n, 0), True == 1, n > True, float('nan') != float('nan')"),
    ("compare_size_with_torch_size", "return x, x.shape == (x.shape[0],), x.shape == [x.shape[0]], x.shape < (x.shape[0] + 1,), x.shape != torch.Size([4])"),
    ("max_min_use_lt", "vs = [Version(3), Version(x.shape[0]), Version(1)]\nreturn x, max(vs).parts, min(vs).parts, sorted(vs, reverse=True)[0].parts"),
]
sampled_snippets(SOURCE_RICHCMP, "r6_richcmp", RICHCMP, namespace=NS)

COMPARE = [
    ("chain_evaluates_middle_once", "Counted.calls = 0\nc = Counted(x.shape[0])\nr = 1 < c.value() < 100\nreturn x, r, Counted.calls"),
    ("chain_stops_early", "Counted.calls = 0\nc = Counted(x.shape[0])\nr = 10 < x.shape[0] < c.value()\nreturn x, r, Counted.calls"),
    ("chain_of_tensor_needs_bool", "try:\n    return 0 < x < 1\nexcept RuntimeError:\n    return x, 'RuntimeError'"),
    ("chain_mixed_sizes", "n = x.shape[0]\nreturn x, 0 < n <= 7 != 5, n == n < n + 1, 1 < 2 > n"),
    ("is_and_is_not", "y = x\nz = x.view(-1)\nreturn x, y is x, z is x, z is not x, x.shape is x.shape, None is None"),
    ("is_on_small_ints_from_size", "n = x.shape[0]\nreturn x, n == 4 or n == 7, type(n) is int"),
    ("not_of_size_and_tensor", "n = x.shape[0]\nreturn x, not n, not (n - n), not x.shape, not x[:0].shape[0]"),
]
sampled_snippets(SOURCE_COMPARE, "r6_compare", COMPARE, namespace=NS)

CONTAINS = [
    ("contains_method_used", "b = WithContains([1, x.shape[0]])\nreturn x, 4 in b, 5 not in b, b.log"),
    ("contains_falls_back_to_iter", "b = WithIter([1, 2, x.shape[0]])\nreturn x, x.shape[0] in b, 9 in b, b.log"),
    ("contains_falls_back_to_getitem", "b = WithGetitem([3, x.shape[0], 8])\nr = x.shape[0] in b\nreturn x, r, b.log"),
    ("contains_getitem_not_found_runs_out", "b = WithGetitem([3, 8])\nr = x.shape[0] in b\nreturn x, r, b.log"),
    ("list_contains_identity_first", "nan = float('nan')\nreturn x, nan in [nan], nan in [float('nan')], x in [x], x in (1, x)"),
    ("list_contains_tensor_eq_raises", "try:\n    return x, x in [x.clone()]\nexcept RuntimeError:\n    return x, 'RuntimeError'"),
    ("tensor_contains_value", "return x, 0.0 in x, x[0].item() in x, x[0] in x, (x.max() + 1) in x"),
    ("dict_contains_size_key", "d = {4: 'four', 7: 'seven'}\nreturn x, x.shape[0] in d, d.get(x.shape[0]), (x.shape[0],) in {(4,): 1}"),
    ("str_contains_and_range", "n = x.shape[0]\nreturn x, str(n) in '1234', n in range(0, 10, 2), n in range(10)[::3], -n in range(-10, 0)"),
    ("set_contains_size_and_float", "n = x.shape[0]\ns = {4, 7.0}\nreturn x, n in s, float(n) in s, n in frozenset({4})"),
    ("contains_not_supported", "try:\n    return x, 1 in x.shape[0]\nexcept TypeError as e:\n    return x, str(e)"),
    ("contains_dict_keys_values_items", "d = {'a': x.shape[0], 'b': 2}\nreturn x, 'a' in d.keys(), x.shape[0] in d.values(), ('b', 2) in d.items(), ('b', 3) in d.items()"),
]
sampled_snippets(SOURCE_CONTAINS, "r6_contains", CONTAINS, namespace=NS)

INDEX = [
    ("index_object_in_list_and_tensor", "i = Idx(x.shape[0] - 1)\nreturn x[i], [10, 20, 30, 40, 50, 60, 70][i], 'abcdefgh'[i]"),
    ("index_object_in_slices", "lo, hi = Idx(1), Idx(x.shape[0] - 1)\nreturn x[lo:hi], list(range(10))[lo:hi:Idx(2)]"),
    ("index_object_as_size", "k = Idx(x.shape[0])\nreturn torch.zeros(k) + x, x.new_ones(k, 2).shape, [0] * k, range(k)"),
    ("index_object_in_operator_index", "return x, operator.index(Idx(x.shape[0])), bin(Idx(5)), hex(Idx(x.shape[0]))"),
    ("index_returning_float_raises", "try:\n    [1, 2][BadIdx()]\nexcept TypeError as e:\n    return x, str(e)"),
    ("index_tensor_scalar_in_list", "i = torch.tensor(1)\nreturn x, [5, 6, 7][i], 'abc'[i], list(range(x.shape[0]))[torch.tensor(-1)]"),
    ("index_float_raises", "out = []\nfor k in (1.0, x.shape[0] / 2, 'a', None):\n    try:\n        out.append([1, 2][k])\n    except TypeError as e:\n        out.append(str(e))\nfor seq in ((1, 2), x.shape, list(range(x.shape[0]))):\n    try:\n        seq[0.5]\n    except TypeError as e:\n        out.append(str(e))\nreturn x, out"),
    ("index_float_in_slice_and_del", "l = list(range(x.shape[0]))\nout = []\ntry:\n    l[1.0:]\nexcept TypeError as e:\n    out.append(str(e))\ntry:\n    del l[x.shape[0] * 2]\nexcept IndexError as e:\n    out.append(str(e))\ntry:\n    l[1.5] = 0\nexcept TypeError as e:\n    out.append(str(e))\nreturn x, out, l"),
    ("index_bool_is_int", "return x, [10, 20][True], x[False], 'ab'[True]"),
    ("index_out_of_range_object", "try:\n    return [1, 2, 3][Idx(x.shape[0])]\nexcept IndexError as e:\n    return x, str(e)"),
]
sampled_snippets(SOURCE_INDEX, "r6_index", INDEX, namespace=NS)
