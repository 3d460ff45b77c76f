"""Reductions: sum, mean, amax/amin, max/min.dim, argmax/argmin, var/std, prod, any/all,
softmax/log_softmax and layer norm.

A reduction is always realized into a buffer; its input stays lazy, so the producing
pointwise ops run inside the reduction loop (prologue fusion). On a GPU a reduction to a few
values over many elements is split in two later (passes/split_reductions.py). var/std read
their input once with Welford's running (mean, m2, weight), as eager does, where the device's
kernel backend declares `welford_variance` (Triton); elsewhere (C++) they take two passes, the
mean then the sum of squared deviations, which vectorize and which share one kernel.
"""

from __future__ import annotations

import sympy
import torch

from ..context import current_graph
from ..ir import IRNode, Pointwise, Reduction
from ..ops import ops
from ..sizes import product
from . import register_lowering
from .extern import extern
from .pointwise import broadcast_loader, cast, opmath_dtype, pointwise, to_dtype
from .views import squeeze, unsqueeze

aten = torch.ops.aten


def _dims(x: IRNode, dim) -> list[int]:
    ndim = len(x.size)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    if ndim == 0:
        # Eager accepts dim 0 or -1 of a 0-d tensor and reduces its one element: no dims.
        return []
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({(d + ndim) % ndim for d in dims})


def _acc_dtype(dtype: torch.dtype, reduction_type: str) -> torch.dtype:
    if reduction_type in ("any", "all"):
        return torch.bool
    if reduction_type in ("sum", "prod") and not dtype.is_floating_point:
        return torch.int64
    return opmath_dtype(dtype)


def reduce(x: IRNode, dim, keepdim: bool, reduction_type: str, *, out_dtype=None) -> IRNode:
    """Realize `reduction_type` of `x` over `dim`; keepdim restores size-1 dims as views."""
    dims = _dims(x, dim)
    acc = _acc_dtype(x.dtype, reduction_type)
    if out_dtype is None:
        out_dtype = {"argmax": torch.int64, "argmin": torch.int64}.get(reduction_type)
        out_dtype = out_dtype or (acc if acc in (torch.bool, torch.int64) else x.dtype)
    out_sizes, reduced, element = _reduction_input(x, dims, acc)
    result = current_graph().register_reduction(Reduction(x.device, out_dtype, out_sizes, reduced, reduction_type, element, acc))
    return _keep_dims(result, dims, keepdim)


def _reduction_input(x: IRNode, dims: list[int], acc: torch.dtype):
    """(output sizes, reduced sizes, element(index, rindex)): `x` read at the output index
    `index` and the reduced index `rindex`, cast to the accumulator dtype."""
    ndim = len(x.size)
    kept = [k for k in range(ndim) if k not in dims]
    load = x.make_loader()

    def element(index, rindex):
        full = [None] * ndim
        for k, i in zip(kept, index):
            full[k] = i
        for k, r in zip(dims, rindex):
            full[k] = r
        return cast(load(full), x.dtype, acc)

    return tuple(x.size[k] for k in kept), tuple(x.size[k] for k in dims), element


def _keep_dims(result: IRNode, dims: list[int], keepdim: bool) -> IRNode:
    if keepdim:
        for k in dims:
            result = unsqueeze(result, k)
    return result


def _numel(x: IRNode, dims) -> sympy.Expr:
    return product(x.size[d] for d in dims)


@register_lowering(aten.sum.dim_IntList, aten.sum.default)
def _sum(x, dim=None, keepdim=False, *, dtype=None):
    return _with_dtype(x, dim, keepdim, "sum", dtype)


@register_lowering(aten.prod.dim_int, aten.prod.default)
def _prod(x, dim=None, keepdim=False, *, dtype=None):
    return _with_dtype(x, dim, keepdim, "prod", dtype)


def _with_dtype(x, dim, keepdim, reduction_type: str, dtype):
    """`dtype=` is the result's dtype (`x.sum(dtype=torch.int32)` of int8 is int32, where
    without it integers sum to int64), and the input is cast to it first, as eager does."""
    if dtype is not None:
        x = to_dtype(x, dtype)
    return reduce(x, dim, keepdim, reduction_type, out_dtype=dtype)


def mean(x, dim=None, keepdim=False, *, dtype=None) -> IRNode:
    """The sum in the accumulator dtype, divided, then rounded once to the result dtype, as
    eager does: a float16 sum rounded first overflows (the mean of 5000 values of magnitude
    3000 came out -inf) or rounds twice."""
    if dtype is not None:
        x = to_dtype(x, dtype)
    total = reduce(x, dim, keepdim, "sum", out_dtype=opmath_dtype(x.dtype))
    count = _numel(x, _dims(x, dim))
    return divide_by_count(total, count, x.dtype)


register_lowering(aten.mean.dim, aten.mean.default)(mean)


def divide_by_count(total: IRNode, count, out_dtype: torch.dtype) -> IRNode:
    """`total / count` computed in the op-math dtype, as `out_dtype`."""
    load = total.make_loader()
    dtype = total.dtype
    compute = opmath_dtype(dtype)

    def inner(index):
        return cast(ops.truediv(cast(load(index), dtype, compute), _count(count, compute)), compute, out_dtype)

    return Pointwise(total.device, out_dtype, total.size, inner)


def _count(count, dtype):
    if isinstance(count, sympy.Integer):
        return ops.constant(int(count), dtype)
    return ops.to_dtype(ops.index_expr(count, torch.int64), dtype)


def _raising_over_empty(op, lower):
    """Eager's max/min/argmax/argmin raise where a reduced dim is empty (a kernel would return
    the reduction's identity, -inf): over a dim known to be empty, the aten call, which raises
    the same error when the graph runs."""

    def lowering(x, *args, **kwargs):
        dim = args[0] if args else kwargs.get("dim")
        if any(x.size[d] == 0 for d in _dims(x, dim)):
            return extern(op, (x, *args), kwargs)
        return lower(x, *args, **kwargs)

    register_lowering(op)(lowering)


for _name in ("amax", "amin"):
    _raising_over_empty(
        getattr(aten, _name).default, lambda x, dim=(), keepdim=False, _t=_name[1:]: reduce(x, dim, keepdim, _t)
    )
_raising_over_empty(aten.max.default, lambda x: reduce(x, None, False, "max"))
_raising_over_empty(aten.min.default, lambda x: reduce(x, None, False, "min"))
_raising_over_empty(aten.argmax.default, lambda x, dim=None, keepdim=False: reduce(x, dim, keepdim, "argmax"))
_raising_over_empty(aten.argmin.default, lambda x, dim=None, keepdim=False: reduce(x, dim, keepdim, "argmin"))
_raising_over_empty(aten.max.dim, lambda x, dim, keepdim=False: (reduce(x, dim, keepdim, "max"), reduce(x, dim, keepdim, "argmax")))
_raising_over_empty(aten.min.dim, lambda x, dim, keepdim=False: (reduce(x, dim, keepdim, "min"), reduce(x, dim, keepdim, "argmin")))


def _logical_reduction(kind):
    def lower(x, dim=None, keepdim=False):
        if x.dtype != torch.bool:
            load = x.make_loader()
            zero_dtype = x.dtype
            x = Pointwise(x.device, torch.bool, x.size, lambda index: ops.ne(load(index), ops.constant(0, zero_dtype)))
        return reduce(x, dim, keepdim, kind, out_dtype=torch.bool)

    return lower


register_lowering(aten.any.dim, aten.any.dims, aten.any.default)(_logical_reduction("any"))
register_lowering(aten.all.dim, aten.all.dims, aten.all.default)(_logical_reduction("all"))


def var_mean(x: IRNode, dim, correction, keepdim: bool) -> tuple[IRNode, IRNode]:
    """(variance, mean): in one Welford pass where the device's kernels have it, else in two."""
    dims = _dims(x, dim)
    count = _numel(x, dims)
    compute = opmath_dtype(x.dtype)
    # An empty reduction keeps two passes: its mean is 0 / 0 = nan, as eager's, where a Welford
    # fold of nothing gives 0 (symbolic sizes are >= 2, so only a static count can be 0).
    if current_graph().welford_variance(x.device) and count != 0:
        mean_out, m2 = _welford_mean_m2(x, dims, keepdim, compute)
    else:
        mean_out, m2 = _two_pass_mean_m2(x, dims, keepdim, compute)
    correction = 1 if correction is None else correction
    load_m2 = m2.make_loader()

    def denominator():
        # An index expression holds integers only: a correction of 1.0 (std_mean's) is the int
        # 1; a fractional one is subtracted in the compute dtype.
        if float(correction).is_integer():
            return _count(count - int(correction), compute)
        return ops.sub(_count(count, compute), ops.constant(float(correction), compute))

    def variance(index):
        if count == 0:
            return ops.constant(float("nan"), x.dtype)  # eager's variance of nothing, whatever the correction
        value = ops.truediv(load_m2(index), denominator())
        return cast(value, compute, x.dtype)

    var = Pointwise(x.device, x.dtype, m2.size, variance)
    return var, mean_out


def _welford_mean_m2(x: IRNode, dims, keepdim: bool, compute) -> tuple[IRNode, IRNode]:
    """Mean and sum of squared deviations from one read of `x`: two reductions of one element
    function, which the scheduler puts in one kernel and the backend folds once
    (codegen/triton/reductions.py), and which split_reductions splits into one partials kernel."""
    out_sizes, reduced, element = _reduction_input(x, dims, compute)
    graph = current_graph()
    mean_ = graph.register_reduction(Reduction(x.device, x.dtype, out_sizes, reduced, "welford_mean", element, compute))
    m2 = graph.register_reduction(Reduction(x.device, compute, out_sizes, reduced, "welford_m2", element, compute))
    return _keep_dims(mean_, dims, keepdim), _keep_dims(m2, dims, keepdim)


def _two_pass_mean_m2(x: IRNode, dims, keepdim: bool, compute) -> tuple[IRNode, IRNode]:
    """The mean, then the sum of squared deviations from it: both reductions land in one
    kernel, which reads `x` twice."""
    # The deviations are taken from the mean in the compute dtype: a bf16 mean of 100 + randn
    # is off by up to 0.25, which would add its square to the variance.
    load_x = x.make_loader()
    upcast = Pointwise(x.device, compute, x.size, lambda index: cast(load_x(index), x.dtype, compute))
    mean_kept = mean(upcast, dims, True)
    load_mean, load_upcast = broadcast_loader(mean_kept, x.size), upcast.make_loader()

    def squared_deviation(index):
        d = ops.sub(load_upcast(index), load_mean(index))
        return ops.mul(d, d)

    deviations = Pointwise(x.device, compute, x.size, squared_deviation)
    m2 = reduce(deviations, dims, keepdim, "sum", out_dtype=compute)
    mean_out = to_dtype(mean_kept, x.dtype)
    return (mean_out if keepdim else squeeze(mean_out, dims)), m2


def _correction(unbiased=None, correction=None):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


@register_lowering(aten.var_mean.correction)
def _var_mean(x, dim=None, *, correction=None, keepdim=False):
    return var_mean(x, dim, _correction(correction=correction), keepdim)


@register_lowering(aten.var.correction)
def _var(x, dim=None, *, correction=None, keepdim=False):
    return var_mean(x, dim, _correction(correction=correction), keepdim)[0]


@register_lowering(aten.std.correction)
def _std(x, dim=None, *, correction=None, keepdim=False):
    var = var_mean(x, dim, _correction(correction=correction), keepdim)[0]
    return pointwise(lambda v: ops.sqrt(v), [var])


def _softmax_parts(x: IRNode, dim: int, half_to_float: bool):
    compute = opmath_dtype(x.dtype)
    out_dtype = torch.float32 if half_to_float else x.dtype
    load_x = x.make_loader()
    upcast = Pointwise(x.device, compute, x.size, lambda index: cast(load_x(index), x.dtype, compute))
    row_max = reduce(upcast, dim, True, "max")
    load_max = broadcast_loader(row_max, x.size)
    load_up = upcast.make_loader()

    def shifted(index):
        return ops.sub(load_up(index), load_max(index))

    return compute, out_dtype, shifted


@register_lowering(aten._softmax.default)
def softmax(x, dim, half_to_float=False):
    compute, out_dtype, shifted = _softmax_parts(x, dim, half_to_float)
    # exp(x - max) is computed once: the kernel keeps a row of it for the normalizing pass.
    exps = current_graph().realize(Pointwise(x.device, compute, x.size, lambda index: ops.exp(shifted(index))))
    total = reduce(exps, dim, True, "sum")
    inverse = pointwise(lambda s: ops.reciprocal(s), [total])
    load_inverse, load_exps = broadcast_loader(inverse, x.size), exps.make_loader()
    return Pointwise(
        x.device, out_dtype, x.size,
        lambda index: cast(ops.mul(load_exps(index), load_inverse(index)), compute, out_dtype),
    )


@register_lowering(aten._log_softmax.default)
def log_softmax(x, dim, half_to_float=False):
    compute, out_dtype, shifted = _softmax_parts(x, dim, half_to_float)
    exps = Pointwise(x.device, compute, x.size, lambda index: ops.exp(shifted(index)))
    total = reduce(exps, dim, True, "sum")
    load_total = broadcast_loader(total, x.size)
    return Pointwise(
        x.device, out_dtype, x.size,
        lambda index: cast(ops.sub(shifted(index), ops.log(load_total(index))), compute, out_dtype),
    )


@register_lowering(aten._softmax_backward_data.default)
def _softmax_backward(grad, out, dim, input_dtype):
    # In float32 for bf16/fp16 throughout, as eager's kernel and torch's decomposition
    # (compute_only_pw_cast_for_opmath) do: `g - sum(g * y)` cancels, so a sum rounded to
    # bf16 (an ulp of 0.03 at 4) leaves errors of the size of the result.
    compute = opmath_dtype(grad.dtype)
    product_ = pointwise(lambda g, y: ops.mul(g, y), [grad, out], out_dtype=compute, compute_dtype=compute)
    total = reduce(product_, dim, True, "sum")
    return pointwise(lambda g, y, s: ops.mul(y, ops.sub(g, s)), [grad, out, total], out_dtype=grad.dtype, compute_dtype=compute)


@register_lowering(aten._log_softmax_backward_data.default)
def _log_softmax_backward(grad, out, dim, input_dtype):
    compute = opmath_dtype(grad.dtype)
    total = reduce(grad, dim, True, "sum", out_dtype=compute)
    return pointwise(
        lambda g, y, s: ops.sub(g, ops.mul(ops.exp(y), s)), [grad, out, total], out_dtype=grad.dtype, compute_dtype=compute
    )


@register_lowering(aten.native_layer_norm.default)
def native_layer_norm(x, normalized_shape, weight, bias, eps):
    ndim = len(x.size)
    dims = list(range(ndim - len(normalized_shape), ndim))
    compute = opmath_dtype(x.dtype)
    load_x = x.make_loader()
    upcast = Pointwise(x.device, compute, x.size, lambda index: cast(load_x(index), x.dtype, compute))
    var, mean_ = var_mean(upcast, dims, 0, True)
    rstd = pointwise(lambda v: ops.rsqrt(ops.add(v, ops.constant(eps, compute))), [var])
    loaders = [broadcast_loader(t, x.size) for t in (mean_, rstd)]
    affine = [(broadcast_loader(t, x.size), t.dtype) if t is not None else None for t in (weight, bias)]
    load_up = upcast.make_loader()

    def normalized(index):
        value = ops.mul(ops.sub(load_up(index), loaders[0](index)), loaders[1](index))
        if affine[0] is not None:
            value = ops.mul(value, cast(affine[0][0](index), affine[0][1], compute))
        if affine[1] is not None:
            value = ops.add(value, cast(affine[1][0](index), affine[1][1], compute))
        return cast(value, compute, x.dtype)

    out = Pointwise(x.device, x.dtype, x.size, normalized)
    # Eager returns mean/rstd in the input dtype on CPU, in float32 on CUDA (meta says float32).
    stats_dtype = x.dtype if x.device.type == "cpu" else compute
    return out, to_dtype(mean_, stats_dtype), to_dtype(rstd, stats_dtype)
