"""Helpers the generated wrapper modules import."""

from __future__ import annotations

import torch


def reinterpret(tensor: torch.Tensor, size, stride, offset):
    """A strided view of `tensor`'s storage, `offset` elements past the tensor's own start."""
    return tensor.as_strided(size, stride, tensor.storage_offset() + offset)


def random_seed(device: str) -> torch.Tensor:
    """One int64 seed from torch's default generator, so torch.manual_seed makes runs repeatable."""
    return torch.randint(0, 2**62, (1,), dtype=torch.int64, device=device)
