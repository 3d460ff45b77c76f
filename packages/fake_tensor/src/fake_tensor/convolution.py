"""Convolutions return their outputs in the memory format of the backend eager would pick.

torch's meta kernels return contiguous outputs for `convolution` and gradients laid out like
the input and weight for `convolution_backward`, while eager's backends (oneDNN and the slow
kernels on CPU, cuDNN on CUDA) choose one memory format for all of them: channels-last when
the input or the weight is (and the backend supports it), else contiguous. torch exposes its own choice of
backend and that backend's memory format (`torch._C._select_conv_backend`,
`torch._C._conv_determine_backend_memory_format`, the same calls eager's `convolution`
makes); both read only metadata, and fakes report the device they stand for, so they pick
what eager would on that device.
"""

from __future__ import annotations

import torch

from .execution import run_on_meta
from .op_rules import bound_arguments, rule_for

aten = torch.ops.aten


def _backend_memory_format(input, weight, bias, bound, bias_sizes=None) -> torch.memory_format | None:
    """The memory format of eager's outputs and gradients; None to keep the meta kernel's."""
    # Channels-last exists for 4-d and 5-d tensors only (and the backend choice for 3-d
    # inputs unsqueezes them, which is not safe to ask of a tensor without data).
    if weight.dim() not in (4, 5) or not _static(input, weight):
        return None
    parameters = [bound[name] for name in ("stride", "padding", "dilation", "transposed", "output_padding", "groups")]
    if bias_sizes is None:
        backend = torch._C._select_conv_backend(input, weight, bias, *parameters)
    else:
        backend = torch._C._select_conv_backend(input, weight, bias, *parameters, bias_sizes)
    return torch._C._conv_determine_backend_memory_format(input, weight, backend)


def _static(*tensors) -> bool:
    # Symbolic sizes cannot be read from C++: such convolutions keep the meta kernel's layout.
    return all(type(n) is int for t in tensors for n in (*t.shape, *t.stride()))


def _in_memory_format(mode, t, memory_format: torch.memory_format | None):
    if t is None or memory_format is None:
        return t
    with mode:
        laid_out = torch.empty(t.shape, dtype=t.dtype, device=t.device, memory_format=memory_format)
    return t if laid_out.stride() == t.stride() else laid_out


@rule_for(aten.convolution.default)
def _convolution(mode, func, args, kwargs):
    out = run_on_meta(mode, func, args, kwargs)
    bound = bound_arguments(func, args, kwargs)
    memory_format = _backend_memory_format(bound["input"], bound["weight"], bound["bias"], bound)
    return _in_memory_format(mode, out, memory_format)


@rule_for(aten.convolution_backward.default)
def _convolution_backward(mode, func, args, kwargs):
    grad_input, grad_weight, grad_bias = run_on_meta(mode, func, args, kwargs)
    bound = bound_arguments(func, args, kwargs)
    memory_format = _backend_memory_format(bound["input"], bound["weight"], None, bound, bound["bias_sizes"])
    return (
        _in_memory_format(mode, grad_input, memory_format),
        _in_memory_format(mode, grad_weight, memory_format),
        grad_bias,
    )
