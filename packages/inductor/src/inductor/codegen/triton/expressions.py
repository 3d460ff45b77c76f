"""Sympy index expressions, dtypes and Python scalars as Triton source.

Index arithmetic is non-negative (sizes.py), so `FloorDiv` and `PythonMod` print as Triton's `//`
and `%`, whose C semantics (truncation) agree with Python's on non-negative operands; sizes the
program computed may be negative and get Python's rounding spelled out.
"""

from __future__ import annotations

import math

import sympy
import torch

from ...sizes import FloorDiv, PythonMod

TRITON_DTYPES = {
    torch.float32: "tl.float32", torch.float64: "tl.float64", torch.float16: "tl.float16",
    torch.bfloat16: "tl.bfloat16", torch.int64: "tl.int64", torch.int32: "tl.int32", torch.int16: "tl.int16",
    torch.int8: "tl.int8", torch.uint8: "tl.uint8", torch.bool: "tl.int1",
}


def triton_dtype(dtype: torch.dtype) -> str:
    return TRITON_DTYPES[dtype]


def index(expr) -> str:
    """A Triton expression; symbols are loop variables, kernel arguments or indirect indices."""
    expr = sympy.sympify(expr)
    if isinstance(expr, sympy.Integer):
        return str(int(expr))
    if isinstance(expr, sympy.Symbol):
        return expr.name
    if isinstance(expr, sympy.Add):
        return "(" + " + ".join(index(t) for t in _ordered(expr.args)) + ")"
    if isinstance(expr, sympy.Mul):
        return "(" + " * ".join(index(a) for a in _ordered(expr.args)) + ")"
    if isinstance(expr, (FloorDiv, PythonMod)):
        a, b = (index(x) for x in expr.args)
        # Triton's `//` and `%` truncate like C's; Python's round toward -inf, which differs when
        # a size the program computed is negative (`-n % 3`).
        if all(sympy.sympify(x).is_nonnegative for x in expr.args):
            return f"({a} {'//' if isinstance(expr, FloorDiv) else '%'} {b})"
        off = f"((({a} % {b}) != 0) & ((({a} % {b}) < 0) != ({b} < 0)))"
        if isinstance(expr, FloorDiv):
            return f"(({a} // {b}) - tl.where({off}, 1, 0))"
        return f"(({a} % {b}) + tl.where({off}, {b}, 0))"
    if isinstance(expr, sympy.Max):
        return _fold("tl.maximum", expr.args)
    if isinstance(expr, sympy.Min):
        return _fold("tl.minimum", expr.args)
    if isinstance(expr, sympy.Pow) and isinstance(expr.exp, sympy.Integer) and expr.exp > 0:
        return "(" + " * ".join([index(expr.base)] * int(expr.exp)) + ")"
    # What the program computes from sizes and feeds to a kernel: `x + (n >= 3)`, `abs(n - 10)`.
    if isinstance(expr, sympy.Rel) and expr.rel_op in ("<", "<=", ">", ">=", "==", "!="):
        return f"({index(expr.lhs)} {expr.rel_op} {index(expr.rhs)})"
    if isinstance(expr, sympy.Abs):
        return f"tl.abs({index(expr.args[0])})"
    if isinstance(expr, sympy.Float):
        return repr(float(expr))
    raise NotImplementedError(f"Triton printing of index expression {expr} ({type(expr).__name__})")


def _ordered(args):
    """Constants last, so `x0 + 128*x1 + 5` reads in loop order."""
    return sorted(args, key=lambda a: (a.is_number, sympy.default_sort_key(a)))


def _fold(fn, args):
    out = index(args[0])
    for a in args[1:]:
        out = f"{fn}({out}, {index(a)})"
    return out


def literal(value, dtype: torch.dtype) -> str:
    """A Python literal Triton reads as `dtype` when combined with a tensor of that dtype."""
    if dtype == torch.bool:
        return "True" if value else "False"
    if dtype.is_floating_point:
        value = float(value)
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    return str(int(value))
