"""Helpers the generated wrapper modules import."""

from __future__ import annotations

import torch


def with_strides(tensor: torch.Tensor | None, stride) -> torch.Tensor | None:
    """`tensor` if an extern op returned it with the strides the generated kernels index it by,
    else a copy laid out so. Kernels are compiled for one layout; an aten op may choose another
    (its meta kernel and real kernel disagree, or it follows an input laid out differently from
    the traced one), and reading it by the wrong strides would give wrong values silently.
    None (an output the op leaves undefined, as CUDA flash attention's `cum_seq_q`) stays None."""
    if tensor is None or tensor.stride() == stride:
        return tensor
    return torch.empty_strided(tensor.shape, stride, dtype=tensor.dtype, device=tensor.device).copy_(tensor)

