"""Pointwise math of the Triton printer: the ops handler's arithmetic, comparisons, casts and
math functions, each printed as the Triton expression that matches eager's result."""

from __future__ import annotations

import torch

from ...ops import BINARY, UNARY
from ...runtime.kernel_errors import ZERO_DIVISION
from .expressions import literal, triton_dtype
from .values import TritonValue

_INFIX = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "eq": "==", "ne": "!=", "lt": "<", "le": "<=",
    "gt": ">", "ge": ">=", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "lshift": "<<",
    "rshift": ">>", "fmod": "%",
}
_LOGICAL = {"logical_and": "&", "logical_or": "|", "logical_xor": "^"}
# CUDA's math library through libdevice: the functions eager's kernels call, so results agree.
_LIBDEVICE_UNARY = {
    "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10",
    "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh", "sinh": "sinh", "cosh": "cosh",
    "asin": "asin", "acos": "acos", "atan": "atan", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "erf": "erf", "erfc": "erfc", "lgamma": "lgamma", "rsqrt": "rsqrt", "floor": "floor", "ceil": "ceil",
    "trunc": "trunc", "round": "nearbyint",
}
_LIBDEVICE_BINARY = {"atan2": "atan2", "hypot": "hypot", "copysign": "copysign"}
# libdevice has no float16/bfloat16 overloads (the JIT rejects `libdevice.cos` of a bfloat16), and
# eager's kernels compute these in float32 anyway (opmath): such operands are widened for the call
# and its result rounded back, whatever lowering produced them.
_NARROW_FLOATS = (torch.float16, torch.bfloat16)
_ROUNDING = frozenset({"floor", "ceil", "trunc", "round"})
_INTEGER_DIVISIONS = frozenset({"truncdiv", "floordiv", "mod", "fmod"})  # eager raises on a zero divisor


class PointwiseOps:
    """Mixed into TritonKernel: the ops of ops.py's UNARY and BINARY, casts, `where` and constants."""

    def constant(self, value, dtype):
        return TritonValue(literal(value, dtype), dtype, (), literal=value)

    def to_dtype(self, x, dtype):
        if x.dtype == dtype:
            return x
        if x.literal is not None:
            # Converted as eager converts it (-25.7 to uint8 is 231), so the kernel holds a valid literal.
            return self.constant(torch.tensor(x.literal, dtype=x.dtype).to(dtype).item(), dtype)
        if dtype == torch.bool:
            return self._new(f"{x} != 0", dtype, x.dims)
        if dtype == torch.uint8 and x.dtype.is_floating_point:
            # Eager converts float to uint8 through int64 (c10's static_cast_with_inter_type), so
            # -25.0 wraps to 231; the GPU's own float-to-uint8 conversion saturates it to 0.
            return self._new(f"{x}.to(tl.int64).to(tl.uint8)", dtype, x.dims)
        return self._new(f"{x}.to({triton_dtype(dtype)})", dtype, x.dims)

    def where(self, cond, a, b):
        if cond.dtype != torch.bool:  # C++ tests any scalar; tl.where wants int1
            cond = self.to_dtype(cond, torch.bool)
        if a.literal is not None and b.literal is not None:
            a = self._tensor(a)
        dims = cond.dims | a.dims | b.dims
        return self._new(f"tl.where({cond}, {a}, {b})", a.dtype, dims)

    def rand(self, seed, offset):
        return self._random("tl.rand", seed, offset)

    def randn(self, seed, offset):
        return self._random("tl.randn", seed, offset)

    def _random(self, fn, seed, offset):
        seed, offset = self._tensor(seed), self._tensor(offset)
        return self._new(f"{fn}({seed}, {offset}.to(tl.uint32))", torch.float32, seed.dims | offset.dims)

    def __getattr__(self, name):
        if name in BINARY:
            return lambda a, b: self._binary(name, a, b)
        if name in UNARY:
            return lambda x: self._unary(name, x)
        raise AttributeError(name)

    def _binary(self, name, a, b):
        if _is_identity(name, a, b):
            return a  # `i * 1 + 0` from an arange or view: exact to drop (no -0.0 + 0 for floats)
        if a.literal is not None and b.literal is not None:
            a = self._tensor(a)
        dims = a.dims | b.dims
        dtype = a.dtype if a.literal is None else b.dtype
        if name in _INTEGER_DIVISIONS and not dtype.is_floating_point and dtype != torch.bool and b.literal is None:
            self.flag_error(f"{b} == 0", b.dims, ZERO_DIVISION)
        if name in ("eq", "ne", "lt", "le", "gt", "ge"):
            return self._new(f"{a} {_INFIX[name]} {b}", torch.bool, dims)
        if name in _LOGICAL:
            a, b = (x if x.dtype == torch.bool else self.to_dtype(x, torch.bool) for x in (a, b))
            return self._new(f"{a} {_LOGICAL[name]} {b}", torch.bool, dims)
        if dtype == torch.bool and name in ("add", "mul", "maximum", "minimum"):
            symbol = "|" if name in ("add", "maximum") else "&"
            return self._new(f"{a} {symbol} {b}", dtype, dims)
        if name in _INFIX:
            return self._new(f"{a} {_INFIX[name]} {b}", dtype, dims)
        # Function calls: a Python literal argument would be typed float32 or int32 there.
        a, b = self._tensor(a), self._tensor(b)
        if name in _LIBDEVICE_BINARY:
            return self._math(f"libdevice.{_LIBDEVICE_BINARY[name]}", (a, b), dtype, dims)
        if name == "truncdiv":
            return self._new(f"{a} // {b}", dtype, dims)
        if name == "floordiv":
            if dtype.is_floating_point:
                return self._math("helpers.floordiv_float", (a, b), dtype, dims)
            return self._new(f"helpers.floordiv_int({a}, {b})", dtype, dims)
        if name == "mod":
            return self._math("helpers.remainder", (a, b), dtype, dims)
        if name == "pow":
            if dtype.is_floating_point:
                return self._math("libdevice.pow", (a, b), dtype, dims)
            return self._new(f"helpers.pow_int({a}, {b})", dtype, dims)
        return self._new(f"helpers.{name}({a}, {b})", dtype, dims)  # maximum, minimum

    def _unary(self, name, x):
        x = self._tensor(x)
        floating = x.dtype.is_floating_point
        if name == "neg":
            return self._new(f"-{x}", x.dtype, x.dims)
        if name == "abs":
            return self._new(f"tl.abs({x})", x.dtype, x.dims)
        if name in _ROUNDING and not floating:
            return x
        if name == "sqrt":  # correctly rounded, as eager's; tl.sqrt_rn takes float32 only
            fn = "libdevice.sqrt" if x.dtype == torch.float64 else "tl.sqrt_rn"
            return self._math(fn, (x,), x.dtype, x.dims)
        if name == "reciprocal":
            return self._new(f"1.0 / {x}", x.dtype, x.dims)
        if name == "sigmoid":
            wide = self._widened(x)
            return self._narrowed(self._new(f"1.0 / (1.0 + libdevice.exp(-{wide}))", wide.dtype, x.dims), x.dtype)
        if name == "sign":
            if x.dtype == torch.bool:
                # sign(b) is b; helpers.sign would subtract two int1s, which a GPU wraps but the
                # interpreter's numpy refuses.
                return x
            return self._new(f"helpers.sign({x})", x.dtype, x.dims)
        if name in _LIBDEVICE_UNARY:
            return self._math(f"libdevice.{_LIBDEVICE_UNARY[name]}", (x,), x.dtype, x.dims)
        if name in ("logical_not",) or (name == "bitwise_not" and x.dtype == torch.bool):
            return self._new(f"{x} == 0", torch.bool, x.dims)
        if name == "bitwise_not":
            return self._new(f"~{x}", x.dtype, x.dims)
        return self._new(_PREDICATES[name](x, floating), torch.bool, x.dims)

    def _math(self, fn: str, args, dtype, dims):
        """`fn(*args)` computed in float32 when `dtype` is float16/bfloat16, then rounded back."""
        if dtype not in _NARROW_FLOATS:
            return self._new(f"{fn}({', '.join(map(str, args))})", dtype, dims)
        wide = [self._widened(a) for a in args]
        return self._narrowed(self._new(f"{fn}({', '.join(map(str, wide))})", torch.float32, dims), dtype)

    def _widened(self, x):
        return self.to_dtype(x, torch.float32) if x.dtype in _NARROW_FLOATS else x

    def _narrowed(self, x, dtype):
        return self.to_dtype(x, dtype) if dtype in _NARROW_FLOATS else x


_PREDICATES = {
    "isnan": lambda x, floating: f"{x} != {x}",
    "isinf": lambda x, floating: f'tl.abs({x}) == float("inf")' if floating else f"{x} != {x}",
    "isfinite": lambda x, floating: f'tl.abs({x}) < float("inf")' if floating else f"{x} == {x}",
    "signbit": lambda x, floating: (
        f"{x}.to({'tl.int64' if x.dtype == torch.float64 else 'tl.int32'}, bitcast=True) < 0" if floating else f"{x} < 0"
    ),
}


def _is_identity(name: str, a: TritonValue, b: TritonValue) -> bool:
    if b.literal is None or a.literal is not None or isinstance(b.literal, bool):
        return False
    if name == "mul":
        return b.literal == 1
    return name in ("add", "sub") and b.literal == 0 and not a.dtype.is_floating_point and a.dtype != torch.bool
