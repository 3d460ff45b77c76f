"""Helpers the generated wrapper modules and the runtime's launchers import."""

from __future__ import annotations

import operator

import torch


def with_layout(tensor: torch.Tensor | None, stride, dtype: torch.dtype) -> torch.Tensor | None:
    """`tensor` if an extern op returned it with the strides and dtype the generated kernels
    read it by, else a copy made so. Kernels are compiled for one layout; an aten op may choose
    another (its meta kernel and real kernel disagree, or it follows an input laid out
    differently from the traced one), and reading it by the wrong strides, or its bf16 bytes as
    float32, would give wrong values silently. A dtype differs only where fake tensors got the
    CPU kernel's dtype wrong (fake_tensor/cpu_kernels.py): the copy converts, as the graph's
    later casts assume it holds that dtype. None (an output the op leaves undefined, as CUDA
    flash attention's `cum_seq_q`) stays None."""
    if tensor is None or (tensor.stride() == stride and tensor.dtype == dtype):
        return tensor
    return torch.empty_strided(tensor.shape, stride, dtype=dtype, device=tensor.device).copy_(tensor)


def gather(positions):
    """A function taking the arguments at `positions` out of an argument tuple, as a tuple
    (one C-level itemgetter call on the hot path of a launch or a replay)."""
    if len(positions) == 1:
        [k] = positions
        return lambda args: (args[k],)
    return operator.itemgetter(*positions) if positions else lambda args: ()
