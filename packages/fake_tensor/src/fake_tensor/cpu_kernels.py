"""Where eager's CPU kernels produce other output metadata than torch's meta kernels.

Meta kernels follow the CUDA kernels. A fake standing for a CPU tensor must describe what
the CPU kernel returns, so these rules run the meta kernel, then replace the outputs that
differ when the output device is CPU. Each difference below was observed against eager
(see tests/conformance).
"""

from __future__ import annotations

import torch
from torch._prims_common import suggest_memory_format

from .execution import run_on_meta
from .op_rules import bound_arguments, rule_for

aten = torch.ops.aten

_REDUCED_PRECISION = (torch.bfloat16, torch.float16)


def _stats_dtype(input: torch.Tensor, params: list) -> torch.dtype:
    # CPU norm kernels keep statistics in the input's dtype, except that a reduced-precision
    # input with float32 parameters ("mixed" mode) gets float32 statistics.
    if input.dtype in _REDUCED_PRECISION and any(
        isinstance(p, torch.Tensor) and p.dtype == torch.float32 for p in params
    ):
        return torch.float32
    return input.dtype


def _replace_stats(mode, outputs, stats_shape, dtype, count=2):
    out, *rest = outputs
    with mode:
        stats = [torch.empty(stats_shape(s), dtype=dtype, device=out.device) for s in rest[:count]]
    return (out, *stats, *rest[count:])


_BATCH_NORM_TRAINING_ARG = {
    aten.native_batch_norm.default: "training",
    aten._native_batch_norm_legit.default: "training",
    aten._native_batch_norm_legit.no_stats: "training",
    aten._native_batch_norm_legit_no_training.default: None,  # always eval
    aten._batch_norm_with_update.default: True,  # always training
    aten._batch_norm_no_update.default: None,
}


@rule_for(*_BATCH_NORM_TRAINING_ARG)
def _batch_norm_on_cpu(mode, func, args, kwargs):
    outputs = run_on_meta(mode, func, args, kwargs)
    if outputs[0].device.type != "cpu":
        return outputs
    bound = bound_arguments(func, args, kwargs)
    training = _BATCH_NORM_TRAINING_ARG[func]
    training = bound[training] if isinstance(training, str) else bool(training)
    params = [bound.get(name) for name in ("weight", "bias", "running_mean", "running_var")]
    dtype = _stats_dtype(bound["input"], params)
    # In eval mode the CPU kernel saves no statistics: empty tensors.
    stats_shape = (lambda s: s.shape) if training else (lambda s: (0,))
    return _replace_stats(mode, outputs, stats_shape, dtype)


# The functional forms functionalization makes of training batch norm (aot_autograd's graphs
# hold these): (out, save_mean, save_rstd[, reserve], new_running_mean, new_running_var). The CPU
# kernel returns every statistic in the stats dtype; meta says float32 for a bf16/fp16 input.
_FUNCTIONAL_BATCH_NORM_STATS = {
    aten._native_batch_norm_legit_functional.default: (1, 2, 3, 4),
    aten._batch_norm_with_update_functional.default: (1, 2, 4, 5),
}


@rule_for(*_FUNCTIONAL_BATCH_NORM_STATS)
def _functional_batch_norm_on_cpu(mode, func, args, kwargs):
    outputs = list(run_on_meta(mode, func, args, kwargs))
    if outputs[0].device.type != "cpu":
        return tuple(outputs)
    bound = bound_arguments(func, args, kwargs)
    params = [bound.get(name) for name in ("weight", "bias", "running_mean", "running_var")]
    dtype = _stats_dtype(bound["input"], params)
    with mode:
        for k in _FUNCTIONAL_BATCH_NORM_STATS[func]:
            outputs[k] = torch.empty(outputs[k].shape, dtype=dtype, device=outputs[k].device)
    return tuple(outputs)


@rule_for(aten.native_layer_norm.default)
def _layer_norm_on_cpu(mode, func, args, kwargs):
    outputs = run_on_meta(mode, func, args, kwargs)
    if outputs[0].device.type != "cpu":
        return outputs
    bound = bound_arguments(func, args, kwargs)
    dtype = _stats_dtype(bound["input"], [bound["weight"], bound["bias"]])
    if outputs[1].dtype == dtype:
        return outputs
    return _replace_stats(mode, outputs, lambda s: s.shape, dtype)


def column_major_strides(shape) -> list[int]:
    """LAPACK's layout: each (m, n) matrix column-major (strides (1, m)), batches contiguous."""
    *batch, m, n = shape
    strides = [1, max(m, 1)]
    step = m * n
    for size in reversed(batch):
        strides.insert(0, step)
        step *= size
    return strides


def _as_column_major(mode, t: torch.Tensor) -> torch.Tensor:
    with mode:
        return torch.empty_strided(t.shape, column_major_strides(t.shape), dtype=t.dtype, device=t.device)


# LAPACK-backed CPU kernels return these matrices column-major; the meta kernels row-major.
_COLUMN_MAJOR_OUTPUTS_ON_CPU = {
    aten._linalg_svd.default: 2,  # Vh
    aten.linalg_eig.default: 1,  # eigenvectors
}


@rule_for(*_COLUMN_MAJOR_OUTPUTS_ON_CPU)
def _lapack_layout_on_cpu(mode, func, args, kwargs):
    outputs = list(run_on_meta(mode, func, args, kwargs))
    index = _COLUMN_MAJOR_OUTPUTS_ON_CPU[func]
    matrix = outputs[index]
    if matrix.device.type == "cpu" and matrix.dim() >= 2:
        outputs[index] = _as_column_major(mode, matrix)
    return tuple(outputs)


@rule_for(aten.max_unpool2d.default)
def _max_unpool2d_keeps_channels_last_on_cpu(mode, func, args, kwargs):
    # The CPU kernel allocates its output in the input's suggested memory format; the meta
    # kernel always contiguous.
    out = run_on_meta(mode, func, args, kwargs)
    memory_format = suggest_memory_format(args[0])
    if out.device.type != "cpu" or memory_format != torch.channels_last:
        return out
    with mode:
        return torch.empty(out.shape, dtype=out.dtype, device=out.device, memory_format=memory_format)


@rule_for(aten.nonzero_static.default)
def _nonzero_static_row_major_on_cpu(mode, func, args, kwargs):
    # The meta kernel returns CUDA's column-major (size, ndim) layout; the CPU kernel row-major.
    out = run_on_meta(mode, func, args, kwargs)
    if out.device.type != "cpu" or out.is_contiguous():
        return out
    with mode:
        return torch.empty(out.shape, dtype=out.dtype, device=out.device)
