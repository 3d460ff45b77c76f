"""Copying an nn.Module onto fakes without copying any tensor data."""

from __future__ import annotations

import copy

import torch


def fake_module_copy(mode, module: torch.nn.Module, meta_device: torch.device) -> torch.nn.Module:
    # deepcopy looks every object up in its memo (by id) before copying it, so pre-filling
    # the memo with the fakes makes the copy use them: no tensor data is ever copied, and a
    # parameter shared by two submodules (tied weights) maps to one fake.
    memo: dict[int, object] = {}
    for tensor in _tensors_of(module):
        memo[id(tensor)] = mode._real_to_fake.convert(tensor, meta_device=meta_device)
    return copy.deepcopy(module, memo)


def _tensors_of(module: torch.nn.Module):
    for submodule in module.modules():
        yield from (p for p in submodule._parameters.values() if p is not None)
        yield from (b for b in submodule._buffers.values() if b is not None)
        yield from (v for v in vars(submodule).values() if isinstance(v, torch.Tensor))
