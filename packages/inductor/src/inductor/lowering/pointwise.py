"""Elementwise ATen ops: broadcasting, torch's type promotion, and the math itself.

Type promotion follows `torch._prims_common.elementwise_dtypes`: the computation dtype (float32
for float16/bfloat16 inputs) and the result dtype; the body computes in the former and casts
to the latter once.
"""

from __future__ import annotations

import dataclasses

import sympy
import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND as Kind
from torch._prims_common import elementwise_dtypes

from ..ir import IRNode, Pointwise
from ..ops import ops
from ..sizes import is_float_valued
from . import register_lowering

aten = torch.ops.aten


def _meta_like(value):
    if isinstance(value, IRNode):
        return torch.empty((1,) * min(len(value.size), 1), dtype=value.dtype, device="meta")
    if isinstance(value, sympy.Basic):
        return 1 if value.is_integer else 1.0
    return value


def promote(args, kind: Kind) -> tuple[torch.dtype, torch.dtype]:
    """(computation dtype, result dtype) for these operands, as eager would choose."""
    return elementwise_dtypes(*[_meta_like(a) for a in args], type_promotion_kind=kind)


def broadcast_sizes(*sizes) -> tuple:
    ndim = max((len(s) for s in sizes), default=0)
    out = []
    for dim in range(ndim):
        chosen = sympy.Integer(1)
        for size in sizes:
            k = dim - (ndim - len(size))
            if k >= 0 and size[k] != 1:
                chosen = size[k]
        out.append(chosen)
    return tuple(out)


def broadcast_loader(value: IRNode, size) -> callable:
    """A loader over `size` reading `value` with broadcast semantics (missing and size-1 dims pinned)."""
    loader = value.make_loader()
    offset = len(size) - len(value.size)
    own = value.size

    def load(index):
        return loader([sympy.Integer(0) if own[k] == 1 else index[k + offset] for k in range(len(own))])

    return load


def result_device(tensors) -> torch.device:
    """Eager's rule: a CPU 0-d tensor joins tensors of another device as a scalar, and the result
    lives on that device (a CUDA kernel reads such a scalar through the launcher's copy)."""
    for t in tensors:
        if t.device.type != "cpu" or len(t.size) != 0:
            return t.device
    # Python numbers alone (`torch.div(n, 4, rounding_mode="trunc")` of two ints): eager wraps
    # them into CPU tensors, so the result is a CPU tensor.
    return tensors[0].device if tensors else torch.device("cpu")


def opmath_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype eager's CPU and CUDA kernels compute a float16/bfloat16 op in."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def cast(value, from_dtype: torch.dtype, to_dtype: torch.dtype):
    return value if from_dtype == to_dtype else ops.to_dtype(value, to_dtype)


def scalar_operand(value, dtype: torch.dtype):
    """A number an op takes beside its tensors, as a kernel value of `dtype`. It may be symbolic:
    an integer the graph computed from sizes (`x.masked_fill(m, x.shape[0] - 1)`) is read as an
    index expression, which the kernel evaluates at each call; only a Python number is a literal.
    A float the graph computed from sizes (BatchNorm's `n / (n - 1)`) is evaluated in double, as
    Python computed it, then converted to `dtype` as eager converts a Python number."""
    if isinstance(value, sympy.Basic):
        if value.free_symbols:
            computed = torch.float64 if is_float_valued(value) else torch.int64
            return cast(ops.index_expr(value, computed), computed, dtype)
        value = int(value) if value.is_integer else float(value)
    return ops.constant(value, dtype)


def operand_loaders(args, size, compute_dtype):
    """For each operand: index -> ops value in `compute_dtype` (scalars become constants)."""
    loaders = []
    for arg in args:
        if isinstance(arg, IRNode):
            load = broadcast_loader(arg, size)
            loaders.append(lambda index, load=load, dt=arg.dtype: cast(load(index), dt, compute_dtype))
        elif isinstance(arg, RoundedScalar):
            loaders.append(lambda index, c=arg: cast(scalar_operand(c.value, c.dtype), c.dtype, compute_dtype))
        else:
            loaders.append(lambda index, c=arg: scalar_operand(c, compute_dtype))
    return loaders


def pointwise(fn, args, kind: Kind = Kind.DEFAULT, *, out_dtype=None, compute_dtype=None,
              scalars_in_opmath: bool = False) -> Pointwise:
    """Pointwise(fn(*operands)) over the broadcast of `args`, promoted by `kind`.
    `scalars_in_opmath`: the op reads a Python number beside a float16/bfloat16 tensor at full
    precision on CPU too (eager's CPU mul and div; see _narrowed_scalars)."""
    tensors = [a for a in args if isinstance(a, IRNode)]
    computation, result = promote(args, kind)
    computation = compute_dtype or computation
    result = out_dtype or result
    size = broadcast_sizes(*[t.size for t in tensors])
    device = result_device(tensors)
    if not scalars_in_opmath and device.type == "cpu":
        args = _narrowed_scalars(args, promote(args, Kind.NO_OPMATH)[1])
    loaders = operand_loaders(args, size, computation)
    fn_dtype = torch.bool if kind == Kind.ALWAYS_BOOL else computation

    def inner(index):
        return cast(fn(*[load(index) for load in loaders]), fn_dtype, result)

    return Pointwise(device, result, size, inner)


def _narrowed_scalars(args, common: torch.dtype) -> list:
    """`args` with each Python number rounded to `common` where that is float16 or bfloat16, as
    eager's CPU kernels read it: through the iterator's common dtype (`bf16 + 1.1` adds
    1.1015625, and `x <= 1.1` holds for x = 1.1015625). Only its mul and div read the number
    at full precision (`original_scalar_value`). ATen's CUDA kernels take scalars in opmath
    (gpu_kernel_with_scalars), so CUDA graphs are left as they were (not checked on a GPU)."""
    if common not in (torch.float16, torch.bfloat16):
        return args
    # ints too: bf16 + 257 adds 256; and numbers the graph computed from sizes (`n / (n - 1)`,
    # `n + 250`), which the kernel rounds.
    return [float(torch.tensor(a, dtype=torch.float64).to(common)) if type(a) in (int, float)
            else RoundedScalar(a, common) if isinstance(a, sympy.Basic) and a.free_symbols else a for a in args]


@dataclasses.dataclass(frozen=True)
class RoundedScalar:
    """A symbolic number an op reads rounded to `dtype` first (_narrowed_scalars)."""

    value: sympy.Expr
    dtype: torch.dtype


def register_pointwise(aten_ops, fn, kind: Kind = Kind.DEFAULT):
    aten_ops = aten_ops if isinstance(aten_ops, (list, tuple)) else [aten_ops]

    def lower(*args, **kwargs):
        return pointwise(fn, args, kind)

    register_lowering(*aten_ops)(lower)


def _by_name(name):
    return lambda *operands: getattr(ops, name)(*operands)


def _overloads(packet):
    """The tensor/scalar overloads of an elementwise packet (`Tensor`, `Scalar`, `default`)."""
    return [getattr(packet, n) for n in ("default", "Tensor", "Scalar") if n in packet.overloads()]


_UNARY = {
    Kind.INT_TO_FLOAT: "exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan tanh sinh cosh asin acos "
    "atan asinh acosh atanh erf erfc sigmoid reciprocal lgamma",
    Kind.DEFAULT: "neg floor ceil trunc round sign bitwise_not",
    Kind.COMPLEX_TO_FLOAT: "abs",
    Kind.ALWAYS_BOOL: "isnan isinf logical_not signbit",
}
_BINARY = {
    Kind.DEFAULT: "maximum minimum bitwise_and bitwise_or bitwise_xor fmod",
    Kind.INT_TO_FLOAT: "atan2 hypot copysign",
    Kind.ALWAYS_BOOL: "eq ne lt le gt ge logical_and logical_or logical_xor",
}
for _kind, _names in _UNARY.items():
    for _name in _names.split():
        register_pointwise(_overloads(getattr(aten, _name)), _by_name(_name), _kind)
for _kind, _names in _BINARY.items():
    for _name in _names.split():
        register_pointwise(_overloads(getattr(aten, _name)), _by_name(_name), _kind)
register_lowering(*_overloads(aten.mul))(
    lambda a, b: pointwise(_by_name("mul"), [a, b], scalars_in_opmath=True))
# ATen names that differ from the vocabulary's (Python's % and // semantics).
register_pointwise(_overloads(aten.remainder), _by_name("mod"))
register_lowering(*_overloads(aten.floor_divide))(
    lambda a, b: pointwise(_by_name("floordiv"), [a, b], scalars_in_opmath=True))


@register_lowering(aten.isfinite.default)
def _isfinite(x):
    if not x.dtype.is_floating_point:
        return pointwise(lambda a: ops.constant(True, torch.bool), [x], Kind.ALWAYS_BOOL)
    return pointwise(_by_name("isfinite"), [x], Kind.ALWAYS_BOOL)


@register_lowering(aten.add.Tensor, aten.add.Scalar)
def _add(a, b, alpha=1):
    return _with_alpha("add", a, b, alpha)


@register_lowering(aten.sub.Tensor, aten.sub.Scalar)
def _sub(a, b, alpha=1):
    return _with_alpha("sub", a, b, alpha)


def _with_alpha(name: str, a, b, alpha):
    """`a + alpha * b` (or -) in one computation, rounded once, as eager's kernel computes it
    (a separate mul rounded the product to a float16/bfloat16 result first)."""
    if alpha == 1:
        return pointwise(_by_name(name), [a, b])
    if not isinstance(b, IRNode):
        return pointwise(_by_name(name), [a, b * alpha])
    return pointwise(lambda x, y, scale: getattr(ops, name)(x, ops.mul(y, scale)), [a, b, alpha])


@register_lowering(aten.rsub.Tensor, aten.rsub.Scalar)
def _rsub(a, b, alpha=1):
    scaled = a if alpha == 1 else pointwise(_by_name("mul"), [a, alpha])
    return pointwise(lambda x, y: ops.sub(y, x), [scaled, b])


@register_lowering(aten.div.Tensor, aten.div.Scalar)
def _div(a, b):
    return pointwise(_by_name("truediv"), [a, b], Kind.INT_TO_FLOAT, scalars_in_opmath=True)


@register_lowering(aten.div.Tensor_mode, aten.div.Scalar_mode)
def _div_mode(a, b, *, rounding_mode=None):
    if rounding_mode is None:
        return _div(a, b)
    computation, _ = promote([a, b], Kind.DEFAULT)
    if computation.is_floating_point:
        if rounding_mode == "floor":
            return pointwise(_by_name("floordiv"), [a, b], scalars_in_opmath=True)
        return pointwise(lambda x, y: ops.trunc(ops.truediv(x, y)), [a, b], scalars_in_opmath=True)
    return pointwise(_by_name("floordiv" if rounding_mode == "floor" else "truncdiv"), [a, b])


# Exponents ATen's pow_tensor_scalar_optimized_kernel computes by multiplication and roots (the
# same roundings as eager; and unlike a pow call, they vectorize). Negative ones: floats only.
# Roots differ from pow at -inf and -0.0 (sqrt(-inf) is nan, pow(-inf, 0.5) inf): ATen's CPU
# kernel takes pow for float16, so roots are used only where eager uses them too.
_POW_BY_EXPONENT = {
    1: lambda x: x,
    2: lambda x: ops.mul(x, x),
    3: lambda x: ops.mul(ops.mul(x, x), x),
    0.5: lambda x: ops.sqrt(x),
    -0.5: lambda x: ops.rsqrt(x),
    -1: lambda x: ops.reciprocal(x),
    -2: lambda x: ops.reciprocal(ops.mul(x, x)),
}


@register_lowering(aten.pow.Tensor_Tensor, aten.pow.Tensor_Scalar, aten.pow.Scalar)
def _pow(a, b):
    if isinstance(a, IRNode) and isinstance(b, (int, float)) and not isinstance(b, bool) and b in _POW_BY_EXPONENT:
        root = b in (0.5, -0.5)
        if (b > 0 or a.dtype.is_floating_point) and not (root and a.dtype == torch.float16 and a.device.type == "cpu"):
            rule = _POW_BY_EXPONENT[b]
            if b in (3, -2) and a.dtype == torch.bfloat16 and a.device.type == "cpu":
                rule = _BF16_CPU_POW[b]
            return pointwise(lambda x, _: rule(x), [a, b])
    return pointwise(_by_name("pow"), [a, b])


def _bf16_square(x):
    return ops.to_dtype(ops.to_dtype(ops.mul(x, x), torch.bfloat16), torch.float32)


# ATen's CPU kernel multiplies bfloat16 vectors, which rounds x * x to bfloat16 before the cube's
# last multiply or the inverse square's division (float16 takes the float path: one rounding).
_BF16_CPU_POW = {
    3: lambda x: ops.mul(_bf16_square(x), x),
    -2: lambda x: ops.reciprocal(_bf16_square(x)),
}


@register_lowering(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def where(cond, a, b):
    computation, result = promote([a, b], Kind.DEFAULT)
    size = broadcast_sizes(*[t.size for t in (cond, a, b) if isinstance(t, IRNode)])
    load_cond = operand_loaders([cond], size, torch.bool)[0]
    load_a, load_b = operand_loaders([a, b], size, result)
    device = result_device([t for t in (cond, a, b) if isinstance(t, IRNode)])
    return Pointwise(device, result, size, lambda index: ops.where(load_cond(index), load_a(index), load_b(index)))


@register_lowering(aten.clamp.default, aten.clamp.Tensor)
def clamp(x, min=None, max=None):
    result = x
    if min is not None:
        result = pointwise(_by_name("maximum"), [result, min])
    if max is not None:
        result = pointwise(_by_name("minimum"), [result, max])
    return result


@register_lowering(aten.clamp_min.default, aten.clamp_min.Tensor)
def _clamp_min(x, min):
    return clamp(x, min=min)


@register_lowering(aten.clamp_max.default, aten.clamp_max.Tensor)
def _clamp_max(x, max):
    return clamp(x, max=max)


@register_lowering(aten.masked_fill.Scalar, aten.masked_fill.Tensor)
def _masked_fill(x, mask, value):
    if isinstance(value, IRNode):
        return where(mask, value, x)
    return pointwise(lambda a, m: ops.where(m, scalar_operand(value, x.dtype), a), [x, mask], out_dtype=x.dtype,
                     compute_dtype=x.dtype)


def to_dtype(x: IRNode, dtype: torch.dtype) -> IRNode:
    if x.dtype == dtype:
        return x
    load = x.make_loader()
    return Pointwise(x.device, dtype, x.size, lambda index: ops.to_dtype(load(index), dtype))


@register_lowering(aten._to_copy.default)
def _to_copy(x, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    if device is not None and torch.device(device) != x.device:
        from .extern import fallback

        return fallback(aten._to_copy.default, [x], dict(dtype=dtype, device=device))
    return to_dtype(_copy(x), dtype or x.dtype)


def _copy(x: IRNode) -> IRNode:
    load = x.make_loader()
    return Pointwise(x.device, x.dtype, x.size, load)


@register_lowering(aten.clone.default, aten.lift_fresh_copy.default)
def _clone(x, *, memory_format=None):
    return _copy(x)


@register_lowering(aten.copy.default)
def _copy_into(dst, src, non_blocking=False):
    size = dst.size
    load = broadcast_loader(src, size)
    return Pointwise(dst.device, dst.dtype, size, lambda index: cast(load(index), src.dtype, dst.dtype))


@register_lowering(aten.nan_to_num.default)
def _nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    if not x.dtype.is_floating_point:
        return _copy(x)
    info = torch.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    dt, _ = promote([x], Kind.DEFAULT)

    def fn(a):
        a = ops.where(ops.isnan(a), scalar_operand(nan, dt), a)
        inf = ops.isinf(a)
        return ops.where(
            inf, ops.where(ops.gt(a, ops.constant(0, dt)), scalar_operand(posinf, dt), scalar_operand(neginf, dt)), a
        )

    return pointwise(fn, [x])
