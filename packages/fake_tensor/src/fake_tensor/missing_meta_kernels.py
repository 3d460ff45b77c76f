"""Output metadata for ops that torch ships without a meta kernel or decomposition.

Each rule builds empty fakes with the shapes, dtypes and strides the eager CPU kernel
returns (checked by tests/conformance against eager). Without an entry here such an op
raises UnsupportedFakeOpError.
"""

from __future__ import annotations

import torch

from .cpu_kernels import column_major_strides
from .execution import run_on_meta
from .op_rules import bound_arguments, rule_for

aten = torch.ops.aten


def _empty(mode, like: torch.Tensor, shape, strides=None):
    with mode:
        if strides is None:
            return torch.empty(shape, dtype=like.dtype, device=like.device)
        return torch.empty_strided(shape, strides, dtype=like.dtype, device=like.device)


@rule_for(aten.histogram.bin_ct)
def _histogram_with_bin_count(mode, func, args, kwargs):
    x, bins = args[0], bound_arguments(func, args, kwargs)["bins"]
    return _empty(mode, x, (bins,)), _empty(mode, x, (bins + 1,))


@rule_for(aten.histogram.bins_tensor)
def _histogram_with_bin_edges(mode, func, args, kwargs):
    x, edges = args[0], bound_arguments(func, args, kwargs)["bins"]
    return _empty(mode, x, (edges.numel() - 1,)), _empty(mode, x, tuple(edges.shape))


@rule_for(aten._histogramdd_bin_edges.default)
def _histogramdd_edges(mode, func, args, kwargs):
    x, bins = args[0], bound_arguments(func, args, kwargs)["bins"]
    return [_empty(mode, x, (count + 1,)) for count in bins]


@rule_for(aten._histogramdd_from_bin_cts.default)
def _histogramdd_with_bin_counts(mode, func, args, kwargs):
    x, bins = args[0], bound_arguments(func, args, kwargs)["bins"]
    return _empty(mode, x, tuple(bins))


@rule_for(aten._histogramdd_from_bin_tensors.default)
def _histogramdd_with_bin_edges(mode, func, args, kwargs):
    x, edges = args[0], bound_arguments(func, args, kwargs)["bins"]
    return _empty(mode, x, tuple(e.numel() - 1 for e in edges))


@rule_for(aten.geqrf.default)
def _geqrf(mode, func, args, kwargs):
    (a,) = args
    *batch, m, n = a.shape
    return _empty(mode, a, a.shape, column_major_strides(a.shape)), _empty(mode, a, (*batch, min(m, n)))


# The `Tensor scalars` overloads of the foreach pointwise ops (what compiled Adam's step size
# is: `torch.stack` of per-parameter tensors) read the scalars' values, so their kernel only
# takes a CPU tensor, and a meta one fails ("Expected scalars to be on CPU"). The output
# metadata is that of the `ScalarList` overload, whose meta kernel checks the rest.
_SCALARS_TENSOR_OVERLOADS = {
    aten._foreach_addcdiv.Tensor: aten._foreach_addcdiv.ScalarList,
    aten._foreach_addcdiv_.Tensor: aten._foreach_addcdiv_.ScalarList,
    aten._foreach_addcmul.Tensor: aten._foreach_addcmul.ScalarList,
    aten._foreach_addcmul_.Tensor: aten._foreach_addcmul_.ScalarList,
}


@rule_for(*_SCALARS_TENSOR_OVERLOADS)
def _foreach_with_scalars_tensor(mode, func, args, kwargs):
    bound = bound_arguments(func, args, kwargs)
    scalars, count = bound["scalars"], len(bound["self"])
    if scalars.device.type != "cpu":
        raise RuntimeError(f"Expected scalars to be on CPU, got {scalars.device} instead.")
    if scalars.dim() != 1 or scalars.shape[0] != count:
        raise RuntimeError(f"Expected length of scalars to match input of length {count} but got {scalars.numel()} instead.")
    return run_on_meta(mode, _SCALARS_TENSOR_OVERLOADS[func], (bound["self"], bound["tensor1"], bound["tensor2"], [1.0] * count), {})


# The backwards of the margin losses (what autograd calls for their gradients): the CPU kernels
# return a contiguous gradient shaped as `self` (`at::empty_like(self, LEGACY_CONTIGUOUS_...)`).
@rule_for(aten.multi_margin_loss_backward.default, aten.multilabel_margin_loss_backward.default)
def _margin_loss_backward(mode, func, args, kwargs):
    x = bound_arguments(func, args, kwargs)["self"]
    return _empty(mode, x, tuple(x.shape))


# Torch's Python meta kernels cover the bilinear and lanczos antialiased backwards but not the
# bicubic one, whose C++ meta reads `input_size` as plain ints and fails on symbolic sizes
# ("Expected IntList but got GenericList"). Its CPU and CUDA kernels return a contiguous
# gradient shaped `input_size` in grad_output's dtype, whatever grad_output's layout.
@rule_for(aten._upsample_bicubic2d_aa_backward.default)
def _upsample_bicubic2d_aa_backward(mode, func, args, kwargs):
    bound = bound_arguments(func, args, kwargs)
    grad_output, input_size = bound["grad_output"], bound["input_size"]
    if grad_output.dim() != 4 or len(input_size) != 4:
        raise RuntimeError(f"Expected grad_output and input_size of dimension 4 but got: {grad_output.dim()}, {len(input_size)}")
    return _empty(mode, grad_output, tuple(input_size))
