"""Integer functions with Python semantics that sympy lacks.

sympy's `floor(a / b)` and `Mod` do not simplify the way shape arithmetic needs (sizes are
positive integers, divisors of sizes are almost always positive), and printing them back as
Python needs to know that they mean `//` and `%`. Both evaluate eagerly on numbers and
cancel exact divisions (`FloorDiv(6*s0, 3) -> 2*s0`, `FloorDiv(s0*s1, s1) -> s0`).
"""

from __future__ import annotations

import sympy


def _exact_quotient(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
    """a / b when it is an integer for every integer value of the symbols, else None."""
    quotient = a / b
    if quotient.is_integer:
        return quotient
    return None


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
        if isinstance(a, FloorDiv) and b.is_positive and a.args[1].is_positive:
            # (x // m) // n == x // (m * n) for positive m, n.
            return FloorDiv(a.args[0], a.args[1] * b)
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
        return None

    def _eval_is_nonnegative(self):
        if self.args[1].is_positive:
            return True
        return None
