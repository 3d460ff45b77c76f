"""Integer functions with Python semantics that sympy lacks: `//`, `%`, `round` and `int`; and
Python's float arithmetic, which sympy would do in its own order.

The one vocabulary of symbolic integer functions: shape guards, aot_autograd's size
arithmetic and inductor's index arithmetic all build and print these classes.

sympy's `floor(a / b)` and `Mod` do not simplify the way shape arithmetic needs (sizes are
positive integers, divisors of sizes are almost always positive), and printing them back as
Python needs to know that they mean `//` and `%`. Both evaluate eagerly on numbers, cancel
exact divisions (`FloorDiv(6*s0, 3) -> 2*s0`, `FloorDiv(s0*s1, s1) -> s0`) and take the
multiples of the divisor out of a sum (`(4*i0 + i1) // 4 -> i0 + i1 // 4`, an identity for
all integers), which folds the index arithmetic of views of views.

Float arithmetic on symbols (`(n - 7) / 3 + 1`) is kept as the program wrote it, one
`FloatOperation` per operator (`FloatAdd(FloatTrueDiv(n - 7, 3), 1)`), not as sympy's exact
real arithmetic: sympy rearranges it (`n/3 - 1.3333333333333335`), which rounds otherwise
(2.9999999999999996 at n = 13, where the program gets 3.0), so a size rounded from it, a guard
on it, or a comparison sympy decides by algebra (`n * 0.1 * 10 > n`: False to sympy, True at
n = 3) would disagree with the program. The integer arithmetic in their operands is exact and
stays sympy's.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable

import sympy


# Memoized: every FloorDiv and PythonMod built asks it, and again for each term of a sum; an
# inductor view rebuilds the same quotients at every load of every pass over a body, and
# `together` of nested sizes is slow (MobileViT at a new image size: 1776 questions).
@functools.lru_cache(maxsize=8192)
def _exact_quotient(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
    """a / b when it is an integer for every integer value of the symbols, else None."""
    quotient = a / b
    # sympy calls `2**(20*s0)/10**19` an integer (it weighs the twos of the power against the
    # denominator's and overlooks its fives): trusted only where no denominator is left. The
    # cancelled form is the answer: `(s0 + 1)*(2*s0 + 2)/2` is `(s0 + 1)**2`, and a size left
    # with the 1/2 has no C++ spelling (inductor's loops over Swin's padded windows).
    numerator, denominator = sympy.fraction(sympy.together(quotient))
    if quotient.is_integer and denominator == 1:
        return numerator
    return None


# sympy.factor_terms of function applications (FloorDiv, PythonMod, Max...) already seen.
# factor_terms works inside every argument too, and padded sizes nest the same `%` and `//`
# terms stage after stage (DaViT, Swin): redone for each new term and each question, that
# was most of a capture at a new image size.
_FACTORED_CALLS: dict[sympy.Basic, sympy.Basic] = {}
_FACTORED_CALLS_LIMIT = 8192


def factor_terms(expr: sympy.Expr) -> sympy.Expr:
    """sympy.factor_terms(expr), with each function application factored once (remembered)
    and standing as a plain symbol while the terms around it are factored."""
    calls: dict[sympy.Basic, sympy.Dummy] = {}
    pending = [expr]
    while pending:
        e = pending.pop()
        if e.is_Function:
            calls.setdefault(e, sympy.Dummy())
        elif not e.is_Atom:
            pending.extend(e.args)
    factored = sympy.factor_terms(expr.xreplace(calls))
    return factored.xreplace({dummy: _factored_call(call) for call, dummy in calls.items()})


def _factored_call(call: sympy.Basic) -> sympy.Basic:
    factored = _FACTORED_CALLS.get(call)
    if factored is None:
        if len(_FACTORED_CALLS) >= _FACTORED_CALLS_LIMIT:
            _FACTORED_CALLS.clear()
        factored = _FACTORED_CALLS[call] = call.func(*(factor_terms(arg) for arg in call.args))
    return factored


def _without_common_factor(a: sympy.Expr, b: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr] | None:
    """(a positive factor common to a and b, a and b divided by it), or None if none is found.

    Works on the products sympy keeps (`3*s0*s1`, `6*(s0 + 1)`): the gcd of the integer
    coefficients times the factors both share. Cancelling it keeps `a // b` and `a % b`
    readable: `(3*s0*s1*s2) // (6*s0)` is `(s1*s2) // 2`. The factors are dropped, not divided
    out: sympy does not cancel `(128*s0 + 128)/(32*s0 + 32)`, which would stay a quotient of
    sums (a float, 4.0, in generated code) where `(128*s0 + 128) // (32*s0 + 32)` is 4.
    """
    a_coeff, a_rest = factor_terms(a).as_coeff_Mul()
    b_coeff, b_rest = factor_terms(b).as_coeff_Mul()
    if not (a_coeff.is_Integer and b_coeff.is_Integer):
        return None
    gcd = math.gcd(int(a_coeff), int(b_coeff))
    a_factors, b_factors = list(sympy.Mul.make_args(a_rest)), list(sympy.Mul.make_args(b_rest))
    shared = [f for f in a_factors if f in b_factors and f.is_positive]
    if gcd == 1 and not shared:
        return None
    for factor in shared:
        a_factors.remove(factor)
        b_factors.remove(factor)
    return (
        sympy.Integer(gcd) * sympy.Mul(*shared),
        sympy.Integer(int(a_coeff) // gcd) * sympy.Mul(*a_factors),
        sympy.Integer(int(b_coeff) // gcd) * sympy.Mul(*b_factors),
    )


def _multiples_of(a: sympy.Expr, b: sympy.Expr) -> tuple[sympy.Expr | None, sympy.Expr]:
    """(sum of the terms of `a` that are multiples of `b`, divided by `b`; the other terms), or
    (None, a) when `a` is not a sum with terms of both kinds."""
    if not isinstance(a, sympy.Add):
        return None, a
    whole, rest = [], []
    for term in a.args:
        quotient = _exact_quotient(term, b)
        (whole if quotient is not None else rest).append(term if quotient is None else quotient)
    if not whole or not rest:
        return None, a
    return sympy.Add(*whole), sympy.Add(*rest)


class FloorDiv(sympy.Function):
    """Python's `a // b` on integers."""

    is_integer = True
    nargs = (2,)

    @classmethod
    def eval(cls, a, b):
        if b == 0:
            raise ZeroDivisionError(f"{a} // 0 in a symbolic size expression")
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(int(a) // int(b))
        if b == 1:
            return a
        if a == 0:
            return sympy.Integer(0)
        exact = _exact_quotient(a, b)
        if exact is not None:
            return exact
        multiples, rest = _multiples_of(a, b)
        if multiples is not None:
            return multiples + FloorDiv(rest, b)
        if isinstance(a, FloorDiv) and b.is_positive and a.args[1].is_positive:
            # (x // m) // n == x // (m * n) for positive m, n.
            return FloorDiv(a.args[0], a.args[1] * b)
        cancelled = _without_common_factor(a, b)
        if cancelled is not None:
            _, a, b = cancelled
            return FloorDiv(a, b)
        return None

    def _eval_is_nonnegative(self):
        a, b = self.args
        if a.is_nonnegative and b.is_positive:
            return True
        return None


class PythonMod(sympy.Function):
    """Python's `a % b` on integers: the result has the sign of `b`."""

    is_integer = True
    nargs = (2,)

    @classmethod
    def eval(cls, a, b):
        if b == 0:
            raise ZeroDivisionError(f"{a} % 0 in a symbolic size expression")
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(int(a) % int(b))
        if b == 1 or a == 0:
            return sympy.Integer(0)
        if _exact_quotient(a, b) is not None:
            return sympy.Integer(0)
        multiples, rest = _multiples_of(a, b)
        if multiples is not None:
            return PythonMod(rest, b)
        cancelled = _without_common_factor(a, b)
        if cancelled is not None:
            common, a, b = cancelled
            return common * PythonMod(a, b)
        return None

    def _eval_is_nonnegative(self):
        if self.args[1].is_positive:
            return True
        return None


class RoundToInt(sympy.Function):
    """Python's `round(x)`: the nearest integer, ties to even."""

    is_integer = True
    nargs = (1,)

    @classmethod
    def eval(cls, x):
        if x.is_Number:
            return sympy.Integer(round(float(x)) if x.is_Float else round(sympy.Rational(x)))
        if x.is_integer:
            return x
        return None


def _python_number(x: sympy.Number) -> int | float:
    return int(x) if x.is_Integer else float(x)


class TruncToInt(sympy.Function):
    """Python's `int(x)` of a float: rounded toward zero. (As a Piecewise of floor and
    ceiling, sympy folds relations over it into ITEs and spends seconds canonicalizing nested
    ones: moonshine's three int()s in a row.)"""

    is_integer = True
    nargs = (1,)

    @classmethod
    def eval(cls, x):
        if x.is_Number:
            return sympy.Integer(math.trunc(_python_number(x)))
        if x.is_integer:
            return x
        if x.is_nonnegative:
            return sympy.floor(x)
        if x.is_nonpositive:
            return sympy.ceiling(x)
        return None


class CopySign(sympy.Function):
    """`math.copysign(magnitude, x)`. Guards use it for the one thing sympy cannot say: a float
    specialized to zero, whose sign Python still tells apart (`f"{s}"`, `math.copysign`) though
    `-0.0 == 0.0`. Sympy has no negative zero, so a zero argument stays unevaluated."""

    nargs = (2,)

    @classmethod
    def eval(cls, magnitude, x):
        if magnitude.is_Number and x.is_Number and x != 0:
            return sympy.Float(math.copysign(float(magnitude), float(x)))
        return None


class ToFloat(sympy.Function):
    """Python's `float(n)` of an integer expression. fake_tensor's SymFloat for `float(n)` keeps
    `n` as its expression (its node says float); handed on as an expression alone (inductor's
    kernels read the graph's numbers as expressions), its value needs this to stay a float:
    `int_tensor * float(n)` is a float tensor, and kernels compute it in floating point."""

    is_real = True
    nargs = (1,)

    @classmethod
    def eval(cls, x):
        if x.is_Number:
            return sympy.Float(_python_number(x))
        if x.is_integer is False:  # already a float: float(x) is x
            return x
        return None


class FloatOperation(sympy.Function):
    """One of Python's float operators, applied in the program's order (see the module
    docstring). On numbers it is Python's own result; on symbols sympy leaves it alone (no
    reordering, no cancelling: `FloatMul(FloatMul(n, 0.1), 10)` is not `1.0*n`). Subclasses
    name the operator; printers spell each as that operator."""

    is_real = True
    nargs = (2,)
    python_operator: Callable[[float, float], float]

    @classmethod
    def eval(cls, a, b):
        if a.is_Number and b.is_Number:
            return sympy.Float(cls.python_operator(_python_number(a), _python_number(b)))
        return None


def _both_nonnegative(self) -> bool | None:
    # Rounding keeps a result's sign (it may round a positive one to 0.0): so `int(n * 0.5)`
    # of a size is floor(n * 0.5), with no branch for negative values.
    return True if all(arg.is_nonnegative for arg in self.args) else None


class FloatAdd(FloatOperation):
    python_operator = operator.add
    _eval_is_nonnegative = _both_nonnegative


class FloatSub(FloatOperation):
    python_operator = operator.sub


class FloatMul(FloatOperation):
    python_operator = operator.mul
    _eval_is_nonnegative = _both_nonnegative


class FloatTrueDiv(FloatOperation):
    python_operator = operator.truediv
    _eval_is_nonnegative = _both_nonnegative


class FloatFloorDiv(FloatOperation):
    python_operator = operator.floordiv


class FloatMod(FloatOperation):
    python_operator = operator.mod


class FloatPow(FloatOperation):
    python_operator = operator.pow


FLOAT_OPERATIONS: dict[Callable, type[FloatOperation]] = {
    cls.python_operator: cls for cls in (FloatAdd, FloatSub, FloatMul, FloatTrueDiv, FloatFloorDiv, FloatMod, FloatPow)
}
