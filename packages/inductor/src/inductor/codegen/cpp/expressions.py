"""Sympy index expressions and Python scalars as C++ source."""

from __future__ import annotations

import functools
import math

import sympy
import torch
from fake_tensor.symbolic.printing import ATOM, MUL, PYTHON, UNARY, ExpressionPrinter, binary, folded

from ...sizes import float_operand, float_operator, floats_only, integers_only

CTYPES = {
    torch.float32: "float", torch.float64: "double", torch.float16: "_Float16", torch.bfloat16: "uint16_t",
    torch.int64: "int64_t", torch.int32: "int32_t", torch.int16: "int16_t", torch.int8: "int8_t",
    torch.uint8: "uint8_t", torch.bool: "bool",
}


def ctype(dtype: torch.dtype) -> str:
    return CTYPES[dtype]


def _integer(expr, p):
    value = int(expr)
    return f"{value}L" if abs(value) >= 2**31 else str(value), ATOM if value >= 0 else UNARY


def _power(expr, p):
    """A positive integer power as repeated multiplication (C has no `**`); an integer to a
    symbolic power that cannot be negative (`3 ** n` of a size n) through the prelude's
    integer `ptc_pow` (a negative one would be a Python float: not an index)."""
    if isinstance(expr.exp, sympy.Integer) and expr.exp > 0:
        return "*".join([p.operand(expr.base, MUL + 1)] * int(expr.exp)), MUL
    if expr.base.is_integer and expr.exp.is_integer and expr.exp.is_nonnegative:
        return p.function("ptc_pow<int64_t>", expr.args)
    return p.unknown(expr, p)


def _unprintable(expr, p):
    raise NotImplementedError(f"C++ printing of index expression {expr} ({type(expr).__name__})")


def _rounding_down(c_operator: str, helper: str):
    """Index arithmetic (loop variables, sizes) is non-negative, where C's truncating `/` and `%`
    agree with Python's; a size the program computed (`-n % 3`) may not be: Python rounds
    toward -inf, so those call the prelude's Python-rounding helper."""
    c_rule = binary(c_operator, MUL)

    def rule(expr, p):
        if all(arg.is_nonnegative for arg in expr.args):
            return c_rule(expr, p)
        return p.function(f"{helper}<int64_t>", expr.args)

    return rule


def _absolute(expr, p):
    operand = p.text(expr.args[0], UNARY)
    return f"ptc_max<int64_t>({operand}, -{operand})", ATOM


def _float(expr, p):
    return repr(float(expr)), ATOM


# Integer arithmetic on sizes is exact in int64; its conversion to double rounds once.
_as_double = float_operand(lambda arg, p: f"static_cast<double>({p.text(arg, UNARY)})")


def _float_call(helper: str):
    return lambda expr, p: (f"{helper}({', '.join(_as_double(arg, p) for arg in expr.args)})", ATOM)


# What the program computes from sizes and feeds to a kernel also prints: `x + (n >= 3)`, `abs(n - 10)`,
# and its float arithmetic on sizes in double (BatchNorm's unbiased variance factor n / (n - 1)).
CPP_INDEX = PYTHON.only(
    "Symbol", "Add", "Mul", "Equality", "Unequality", "StrictLessThan", "LessThan", "StrictGreaterThan", "GreaterThan",
).with_rules({
    "Integer": _integer, "Pow": _power, "Float": _float, "Abs": integers_only(_absolute),
    "FloorDiv": _rounding_down("/", "ptc_floordiv"), "PythonMod": _rounding_down("%", "ptc_mod"),
    "Max": integers_only(folded("ptc_max<int64_t>")), "Min": integers_only(folded("ptc_min<int64_t>")),
    "ToFloat": lambda expr, p: (_as_double(expr.args[0], p), ATOM),
    "FloatAdd": float_operator("+", _as_double), "FloatSub": float_operator("-", _as_double),
    "FloatMul": float_operator("*", _as_double), "FloatTrueDiv": float_operator("/", _as_double),
    # Python's float `//` and `%` round toward -inf, as ATen's floating floor division does (the prelude's).
    "FloatFloorDiv": _float_call("ptc_floordiv<double>"), "FloatMod": _float_call("ptc_mod<double>"),
    "FloatPow": _float_call("ptc_libm::pow"),
    # int() of a float truncates toward zero, as C's conversion does.
    "TruncToInt": lambda expr, p: (f"static_cast<int64_t>({_as_double(expr.args[0], p)})", ATOM),
    # math.floor/ceil of a float (a float's `//` is floor of its `/`); of an integer sympy folds them away.
    "floor": floats_only(lambda expr, p: (f"static_cast<int64_t>(ptc_libm::floor({_as_double(expr.args[0], p)}))", ATOM)),
    "ceiling": floats_only(lambda expr, p: (f"static_cast<int64_t>(ptc_libm::ceil({_as_double(expr.args[0], p)}))", ATOM)),
})
_PRINTER = ExpressionPrinter(CPP_INDEX, unknown=_unprintable, ordered=False)


@functools.lru_cache(maxsize=4096)
def index(expr) -> str:
    """An int64 C++ expression (a double one where `expr` is float-valued); every symbol is a
    loop variable, a kernel argument or an indirect index. Parenthesized unless it is a name, a
    number or a call, so it reads as one operand."""
    return _PRINTER.text(expr, UNARY)


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
