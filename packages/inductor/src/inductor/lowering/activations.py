"""Activation functions and their backward formulas, lowered to pointwise math (no
decomposition round trip): relu, hardtanh, gelu (exact and tanh), silu, leaky_relu, and the
sigmoid/tanh/threshold/gelu backward ops autograd emits."""

from __future__ import annotations

import math

import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND as Kind

from ..ops import ops
from . import register_lowering
from .pointwise import clamp, pointwise, promote, scalar_operand, to_dtype

aten = torch.ops.aten


@register_lowering(aten.relu.default)
def _relu(x):
    compute, _ = promote([x], Kind.DEFAULT)
    return pointwise(lambda a: ops.maximum(a, ops.constant(0, compute)), [x])


@register_lowering(aten.hardtanh.default)
def _hardtanh(x, min_val=-1.0, max_val=1.0):
    # Unlike clamp, eager's hardtanh writes into a tensor of the input's dtype: an integer input
    # with float bounds is clamped in float, then truncated back (hardtanh_out -> clamp_out).
    return to_dtype(clamp(x, min_val, max_val), x.dtype)


@register_lowering(aten.gelu.default)
def _gelu(x, *, approximate="none"):
    def exact(a):
        half = ops.constant(0.5, compute)
        cdf = ops.add(ops.constant(1.0, compute), ops.erf(ops.mul(a, ops.constant(math.sqrt(0.5), compute))))
        return ops.mul(ops.mul(a, half), cdf)

    def tanh(a):
        inner = ops.mul(
            ops.constant(math.sqrt(2 / math.pi), compute),
            ops.add(a, ops.mul(ops.constant(0.044715, compute), ops.mul(a, ops.mul(a, a)))),
        )
        return ops.mul(ops.mul(a, ops.constant(0.5, compute)), ops.add(ops.constant(1.0, compute), ops.tanh(inner)))

    compute, _ = promote([x], Kind.DEFAULT)
    return pointwise(tanh if approximate == "tanh" else exact, [x])


@register_lowering(aten.silu.default)
def _silu(x):
    return pointwise(lambda a: ops.mul(a, ops.sigmoid(a)), [x])


@register_lowering(aten.leaky_relu.default)
def _leaky_relu(x, negative_slope=0.01):
    compute, _ = promote([x], Kind.DEFAULT)
    return pointwise(
        lambda a: ops.where(ops.gt(a, ops.constant(0, compute)), a, ops.mul(a, scalar_operand(negative_slope, compute))), [x]
    )


@register_lowering(aten.sigmoid_backward.default)
def _sigmoid_backward(grad, out):
    compute, _ = promote([grad, out], Kind.DEFAULT)
    return pointwise(lambda g, y: ops.mul(ops.mul(g, y), ops.sub(ops.constant(1, compute), y)), [grad, out])


@register_lowering(aten.tanh_backward.default)
def _tanh_backward(grad, out):
    compute, _ = promote([grad, out], Kind.DEFAULT)
    return pointwise(lambda g, y: ops.mul(g, ops.sub(ops.constant(1, compute), ops.mul(y, y))), [grad, out])


@register_lowering(aten.threshold_backward.default)
def _threshold_backward(grad, x, threshold):
    compute, _ = promote([grad, x], Kind.DEFAULT)
    return pointwise(
        lambda g, a: ops.where(ops.le(a, scalar_operand(threshold, compute)), ops.constant(0, compute), g), [grad, x]
    )


@register_lowering(aten.gelu_backward.default)
def _gelu_backward(grad, x, *, approximate="none"):
    compute, _ = promote([grad, x], Kind.DEFAULT)

    def exact(g, a):
        c = lambda v: ops.constant(v, compute)  # noqa: E731
        cdf = ops.mul(c(0.5), ops.add(c(1.0), ops.erf(ops.mul(a, c(math.sqrt(0.5))))))
        pdf = ops.mul(c(1 / math.sqrt(2 * math.pi)), ops.exp(ops.mul(c(-0.5), ops.mul(a, a))))
        return ops.mul(g, ops.add(cdf, ops.mul(a, pdf)))

    def tanh(g, a):
        c = lambda v: ops.constant(v, compute)  # noqa: E731
        k, k1 = math.sqrt(2 / math.pi), 0.044715
        inner = ops.mul(c(k), ops.add(a, ops.mul(c(k1), ops.mul(a, ops.mul(a, a)))))
        t = ops.tanh(inner)
        left = ops.mul(c(0.5), ops.add(c(1.0), t))
        d_inner = ops.mul(c(k), ops.add(c(1.0), ops.mul(c(3 * k1), ops.mul(a, a))))
        right = ops.mul(ops.mul(c(0.5), a), ops.mul(ops.sub(c(1.0), ops.mul(t, t)), d_inner))
        return ops.mul(g, ops.add(left, right))

    return pointwise(tanh if approximate == "tanh" else exact, [grad, x])
