"""Binary operator dispatch as CPython's test_binop and test_class check it (recast in our own
words; dynamo's cpython/3_13 port guided the choice), on user classes beside tensors: a
Rational class with gcd-reduced arithmetic and mixed int/float operands, NotImplemented
falling through to the reflected method, a subclass's reflected method tried first, in-place
operators falling back to the binary ones (and rebinding the name), reflected comparisons
(`a < b` trying `b > a`), __eq__ returning NotImplemented on both sides (identity then),
operators between tensors and user objects (the tensor side returning NotImplemented), truth
from __len__, membership through __iter__ or __getitem__, and __index__/__int__/__float__."""

import math

import torch

from .round5_support import sampled_snippets
from .upstream4_support import graph_break


class Rational:
    """A fraction kept reduced (test_binop's Rat, in our own words)."""

    def __init__(self, num, den=1):
        if den == 0:
            raise ZeroDivisionError("zero denominator")
        g = math.gcd(num, den)
        if den < 0:
            g = -g
        self.num = num // g
        self.den = den // g

    def _coerce(self, other):
        if isinstance(other, Rational):
            return other
        if isinstance(other, int):
            return Rational(other)
        return NotImplemented

    def __add__(self, other):
        o = self._coerce(other)
        if o is NotImplemented:
            return float(self) + other if isinstance(other, float) else NotImplemented
        return Rational(self.num * o.den + o.num * self.den, self.den * o.den)

    __radd__ = __add__

    def __sub__(self, other):
        o = self._coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return Rational(self.num * o.den - o.num * self.den, self.den * o.den)

    def __rsub__(self, other):
        o = self._coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return o - self

    def __mul__(self, other):
        o = self._coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return Rational(self.num * o.num, self.den * o.den)

    __rmul__ = __mul__

    def __truediv__(self, other):
        o = self._coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return Rational(self.num * o.den, self.den * o.num)

    def __rtruediv__(self, other):
        o = self._coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return o / self

    def __neg__(self):
        return Rational(-self.num, self.den)

    def __float__(self):
        return self.num / self.den

    def __eq__(self, other):
        o = self._coerce(other)
        if o is NotImplemented:
            return float(self) == other if isinstance(other, float) else NotImplemented
        return self.num == o.num and self.den == o.den

    def __lt__(self, other):
        o = self._coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return self.num * o.den < o.num * self.den

    def __hash__(self):
        return hash((self.num, self.den))

    def __repr__(self):
        return f"Rational({self.num}, {self.den})"


class Base:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return ("Base.add", self.v, getattr(other, "v", other))

    def __radd__(self, other):
        return ("Base.radd", self.v, getattr(other, "v", other))


class Derived(Base):
    def __radd__(self, other):
        return ("Derived.radd", self.v, getattr(other, "v", other))


class OnlyAdd:
    """__add__ only: `+=` falls back to it and rebinds the name to a new object."""

    def __init__(self, items):
        self.items = list(items)

    def __add__(self, other):
        return OnlyAdd(self.items + list(other))


class InPlace(OnlyAdd):
    def __iadd__(self, other):
        self.items.extend(other)
        return self


class Declines:
    """Every operator returns NotImplemented: Python raises TypeError or compares identity."""

    def __add__(self, other):
        return NotImplemented

    def __radd__(self, other):
        return NotImplemented

    def __eq__(self, other):
        return NotImplemented

    def __lt__(self, other):
        return NotImplemented


class Gt:
    """Only __gt__: `a < b` with a plain left side is answered by b.__gt__(a)."""

    def __init__(self, v):
        self.v = v

    def __gt__(self, other):
        return self.v > (other.v if isinstance(other, Gt) else other)


class Scaler:
    """Multiplies tensors from either side (a tensor's __mul__ gives way for non-tensors it
    cannot convert)."""

    def __init__(self, k):
        self.k = k

    def __mul__(self, other):
        return other * self.k

    def __rmul__(self, other):
        return other * (self.k + 1)

    def __matmul__(self, other):
        return other.sum() * self.k

    def __rmatmul__(self, other):
        return other.sum() * -self.k


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


class IterOnly:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)


class GetItemOnly:
    def __init__(self, items):
        self.items = items

    def __getitem__(self, i):
        return self.items[i]


class Number:
    def __init__(self, v):
        self.v = v

    def __index__(self):
        return int(self.v)

    def __float__(self):
        return float(self.v) + 0.5

    def __int__(self):
        return int(self.v) * 10


NS = {
    "torch": torch,
    "math": math,
    "Rational": Rational,
    "Base": Base,
    "Derived": Derived,
    "OnlyAdd": OnlyAdd,
    "InPlace": InPlace,
    "Declines": Declines,
    "Gt": Gt,
    "Scaler": Scaler,
    "Sized": Sized,
    "IterOnly": IterOnly,
    "GetItemOnly": GetItemOnly,
    "Number": Number,
    "brk": graph_break,
}

BINOPS = [
    ("rational_reduced", "n = x.shape[0]\nr = Rational(2 * n, 4)\nreturn x * float(r), (r.num, r.den), repr(Rational(6, -4))"),
    ("rational_mixed_int", "n = x.shape[0]\nr = Rational(1, n)\nreturn x * float(r + 1), repr(1 + r), repr(r * 3), repr(2 - r), repr(1 / r)"),
    ("rational_mixed_float", "r = Rational(1, 2)\nreturn x * (r + 0.25), r == 0.5, 0.5 == r"),
    ("rational_compare_reflected", "n = x.shape[0]\na = Rational(1, n)\nreturn x, a < Rational(1, 2), 1 > a, a > 0, sorted([Rational(3, n), Rational(1, 1), Rational(1, n)], key=float)"),
    ("rational_hash_and_set", "n = x.shape[0]\ns = {Rational(2, 4), Rational(1, 2), Rational(n, n * 2)}\nreturn x, len(s), Rational(1, 2) in s"),
    ("rational_zero_division", "try:\n    Rational(1, x.shape[0] - x.shape[0])\nexcept ZeroDivisionError as e:\n    return x, str(e)"),
    ("rational_unsupported_operand", "try:\n    Rational(1, 2) - 'a'\nexcept TypeError as e:\n    return x, 'TypeError'"),
    ("rational_sum_builtin", "n = x.shape[0]\ntotal = sum((Rational(1, k) for k in range(1, n + 1)), Rational(0))\nreturn x * float(total), repr(total)"),
    ("subclass_reflected_first", "return x, Base(1) + Derived(2), Base(1) + Base(2), 3 + Derived(4)"),
    ("iadd_falls_back_to_add", "a = OnlyAdd([x])\nb = a\na += [x * 2]\nreturn len(a.items), len(b.items), a is b"),
    ("iadd_in_place", "a = InPlace([x])\nb = a\na += [x * 2]\nreturn len(a.items), len(b.items), a is b"),
    ("both_decline_typeerror", "try:\n    Declines() + Declines()\nexcept TypeError:\n    r = 'TypeError'\nreturn x, r"),
    ("eq_declined_falls_to_identity", "d = Declines()\nreturn x, d == d, d == Declines(), d != Declines(), d != d"),
    ("lt_declined_typeerror", "try:\n    Declines() < Declines()\nexcept TypeError:\n    return x, 'TypeError'"),
    ("reflected_comparison", "n = x.shape[0]\ng = Gt(n)\nreturn x, 3 < g, g > 3, Gt(1) < Gt(n), (5 < g) if n > 5 else 'small'"),
    ("tensor_times_user_object", "s = Scaler(2)\nreturn s * x, x * s"),
    ("tensor_matmul_user_object", "s = Scaler(3)\nreturn s @ x, x @ s"),
    ("int_times_user_object", "s = Scaler(x.shape[0])\nreturn x, s * 2, 2 * s"),
    ("truth_from_len", "return x if Sized(x.shape[0] - 4) else -x, bool(Sized(0)), not Sized(3)"),
    ("membership_through_iter", "it = IterOnly([1, x.shape[0], 9])\nreturn x, 7 in it, 4 in it, 2 in it"),
    ("membership_through_getitem", "g = GetItemOnly(['a', 'b', str(x.shape[0])])\nreturn x, '7' in g, 'z' in g, list(g)"),
    ("iteration_through_getitem", "g = GetItemOnly([x, x * 2, x * 3])\nreturn [t.sum() for t in g], list(enumerate(GetItemOnly('ab')))"),
    ("index_int_float_conversions", "num = Number(x.shape[0])\nreturn x[: num], [0, 1, 2, 3, 4, 5, 6, 7, 8][num], int(num), float(num), range(num)[-1], bin(num)"),
    ("index_for_repeat", "return x.repeat(Number(2)), [x] * Number(2) if False else len([0] * Number(3))"),
    ("operator_module_dispatch", "import operator\nr = Rational(1, x.shape[0])\nreturn x, repr(operator.add(r, 1)), repr(operator.mul(2, r)), operator.lt(r, 1), repr(operator.neg(r))"),
    ("binop_across_break", "r = Rational(x.shape[0], 2)\nbrk()\nr = r + 1\nreturn x * float(r), repr(r)"),
    ("augmented_on_attribute_and_item", "class Box:\n    pass\nb = Box()\nb.t = x\nb.t += 1\nd = {'k': x}\nd['k'] *= 2\nl = [x]\nl[0] -= 3\nreturn b.t, d['k'], l[0], x"),
    ("augmented_tensor_aliasing", "y = x\nx2 = x.clone()\nz = x2\nz += 1\ny = y + 1\nreturn x, x2, y, z is x2"),
]
sampled_snippets("cpython/test_binop", "binop5", BINOPS, namespace=NS)
