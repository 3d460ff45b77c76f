"""Sympy index expressions, dtypes and Python scalars as Triton source.

Indices print with fake_tensor's one printer (fake_tensor/symbolic/printing.py) in Python's
spelling, Triton's own Max/Min and powers aside. Index arithmetic is non-negative (sizes.py), so
`FloorDiv` and `PythonMod` print as Triton's `//` and `%`, whose C semantics (truncation) agree
with Python's on non-negative operands; sizes the program computed may be negative and get
Python's rounding spelled out. Floats the program computed from sizes (`n / (n - 1)`) are
float64 scalars computed from the integer size arguments, in the program's order.
"""

from __future__ import annotations

import functools
import math

import sympy
import torch
from fake_tensor.symbolic.printing import ATOM, MUL, PYTHON, UNARY, ExpressionPrinter, call, folded

from ...sizes import float_operand, float_operator, floats_only, integers_only

TRITON_DTYPES = {
    torch.float32: "tl.float32", torch.float64: "tl.float64", torch.float16: "tl.float16",
    torch.bfloat16: "tl.bfloat16", torch.int64: "tl.int64", torch.int32: "tl.int32", torch.int16: "tl.int16",
    torch.int8: "tl.int8", torch.uint8: "tl.uint8", torch.bool: "tl.int1",
}


def triton_dtype(dtype: torch.dtype) -> str:
    return TRITON_DTYPES[dtype]


def _power(expr, p):
    """A positive integer power as repeated multiplication."""
    if not (isinstance(expr.exp, sympy.Integer) and expr.exp > 0):
        return p.unknown(expr, p)
    return "*".join([p.operand(expr.base, MUL + 1)] * int(expr.exp)), MUL


def _unprintable(expr, p):
    raise NotImplementedError(f"Triton printing of index expression {expr} ({type(expr).__name__})")


def _rounding_down(floor: bool):
    """Triton's `//` and `%` truncate like C's; Python's round toward -inf, which differs when a
    size the program computed is negative (`-n % 3`): then the correction is spelled out."""
    truncating = PYTHON["FloorDiv" if floor else "PythonMod"]

    def rule(expr, p):
        if all(arg.is_nonnegative for arg in expr.args):
            return truncating(expr, p)
        a, b = (p.text(x, UNARY) for x in expr.args)
        off = f"((({a} % {b}) != 0) & ((({a} % {b}) < 0) != ({b} < 0)))"
        if floor:
            return f"(({a} // {b}) - tl.where({off}, 1, 0))", ATOM
        return f"(({a} % {b}) + tl.where({off}, {b}, 0))", ATOM

    return rule


def _float(expr, p):
    return repr(float(expr)), ATOM


# Integer arithmetic on sizes is exact; its conversion to float64 rounds once. (Triton's `/`
# of two integers would compute in float32.)
_as_double = float_operand(lambda arg, p: f"tl.cast({p.text(arg)}, tl.float64)")


# What the program computes from sizes and feeds to a kernel also prints: `x + (n >= 3)`, `abs(n - 10)`,
# and its float arithmetic on sizes in float64 (BatchNorm's unbiased variance factor n / (n - 1)).
TRITON_INDEX = PYTHON.only(
    "Symbol", "Integer", "Add", "Mul",
    "Equality", "Unequality", "StrictLessThan", "LessThan", "StrictGreaterThan", "GreaterThan",
).with_rules({
    "Pow": _power, "Max": integers_only(folded("tl.maximum")), "Min": integers_only(folded("tl.minimum")),
    "Float": _float, "Abs": integers_only(call("tl.abs")),
    "FloorDiv": _rounding_down(floor=True), "PythonMod": _rounding_down(floor=False),
    "ToFloat": lambda expr, p: (_as_double(expr.args[0], p), ATOM),
    "FloatAdd": float_operator("+", _as_double), "FloatSub": float_operator("-", _as_double),
    "FloatMul": float_operator("*", _as_double), "FloatTrueDiv": float_operator("/", _as_double),
    "FloatPow": lambda expr, p: (f"libdevice.pow({_as_double(expr.args[0], p)}, {_as_double(expr.args[1], p)})", ATOM),
    # int() of a float truncates toward zero, as Triton's float-to-int conversion does.
    "TruncToInt": lambda expr, p: (f"tl.cast({_as_double(expr.args[0], p)}, tl.int64)", ATOM),
    # math.floor/ceil of a float (a float's `//` is floor of its `/`); of an integer sympy folds them away.
    "floor": floats_only(lambda expr, p: (f"tl.cast(tl.floor({_as_double(expr.args[0], p)}), tl.int64)", ATOM)),
    "ceiling": floats_only(lambda expr, p: (f"tl.cast(tl.ceil({_as_double(expr.args[0], p)}), tl.int64)", ATOM)),
})
_PRINTER = ExpressionPrinter(TRITON_INDEX, unknown=_unprintable, ordered=False)


@functools.lru_cache(maxsize=4096)
def index(expr) -> str:
    """A Triton expression; symbols are loop variables, kernel arguments or indirect indices.
    Parenthesized unless it is a name, a number or a call, so it reads as one operand."""
    return _PRINTER.text(expr, UNARY)


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
