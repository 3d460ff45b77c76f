"""Sympy index expressions and Python scalars as C++ source."""

from __future__ import annotations

import math

import sympy
import torch

from ...sizes import FloorDiv, PythonMod

CTYPES = {
    torch.float32: "float", torch.float64: "double", torch.float16: "_Float16", torch.bfloat16: "uint16_t",
    torch.int64: "int64_t", torch.int32: "int32_t", torch.int16: "int16_t", torch.int8: "int8_t",
    torch.uint8: "uint8_t", torch.bool: "bool",
}


def ctype(dtype: torch.dtype) -> str:
    return CTYPES[dtype]


def index(expr) -> str:
    """An int64 C++ expression; every symbol is a loop variable, a kernel argument or an indirect index."""
    expr = sympy.sympify(expr)
    if isinstance(expr, sympy.Integer):
        value = int(expr)
        return f"{value}L" if abs(value) >= 2**31 else str(value)
    if isinstance(expr, sympy.Symbol):
        return expr.name
    if isinstance(expr, sympy.Add):
        terms = [index(t) for t in expr.args]
        return "(" + " + ".join(terms) + ")"
    if isinstance(expr, sympy.Mul):
        return "(" + " * ".join(index(a) for a in expr.args) + ")"
    if isinstance(expr, FloorDiv):
        return f"({index(expr.args[0])} / {index(expr.args[1])})"
    if isinstance(expr, PythonMod):
        return f"({index(expr.args[0])} % {index(expr.args[1])})"
    if isinstance(expr, sympy.Max):
        return _fold("ptc_max<int64_t>", expr.args)
    if isinstance(expr, sympy.Min):
        return _fold("ptc_min<int64_t>", expr.args)
    if isinstance(expr, sympy.Pow) and isinstance(expr.exp, sympy.Integer) and expr.exp > 0:
        return "(" + " * ".join([index(expr.base)] * int(expr.exp)) + ")"
    raise NotImplementedError(f"C++ printing of index expression {expr} ({type(expr).__name__})")


def _fold(fn, args):
    out = index(args[0])
    for a in args[1:]:
        out = f"{fn}({out}, {index(a)})"
    return out


def constant(value, dtype: torch.dtype) -> str:
    if dtype == torch.bool:
        return "true" if value else "false"
    if dtype == torch.bfloat16:
        return f"float_to_bf16({constant(value, torch.float32)})"
    if dtype == torch.float16:
        return f"static_cast<_Float16>({constant(value, torch.float32)})"
    if dtype.is_floating_point:
        value = float(value)
        compute = "float" if dtype == torch.float32 else "double"
        if math.isnan(value):
            return f"std::numeric_limits<{compute}>::quiet_NaN()"
        if math.isinf(value):
            sign = "-" if value < 0 else ""
            return f"{sign}std::numeric_limits<{compute}>::infinity()"
        text = repr(value)
        return f"{text}f" if dtype == torch.float32 else text
    value = int(value)
    return f"static_cast<{ctype(dtype)}>({value}L)"
