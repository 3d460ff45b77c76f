"""The module `infer_shapes` runs: a copy whose parameters and buffers are fakes.

Like `FakeTensorMode.from_module`, plus one case: a model built on the meta device
(`with torch.device("meta"): model = Model(config)`) allocates nothing and initializes
nothing, which is the cheap way to analyse a large model. Its meta tensors become fakes on
the device of the inputs, so they meet the inputs the way real weights would.
"""

from __future__ import annotations

import copy

import torch


def _tensors_of(module: torch.nn.Module):
    for submodule in module.modules():
        yield from (p for p in submodule._parameters.values() if p is not None)
        yield from (b for b in submodule._buffers.values() if b is not None)
        yield from (v for v in vars(submodule).values() if isinstance(v, torch.Tensor))


def _fake_of_meta(mode, t: torch.Tensor, device) -> torch.Tensor:
    with mode:
        fake = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=device)
    if isinstance(t, torch.nn.Parameter):
        fake = torch.nn.Parameter(fake, requires_grad=t.requires_grad)
    return fake


def fake_module(mode, module: torch.nn.Module, device) -> torch.nn.Module:
    """A copy of `module` on fakes; meta tensors stand for tensors on `device`."""
    tensors = list(_tensors_of(module))
    if not any(t.device.type == "meta" for t in tensors):
        return mode.from_module(module)
    # deepcopy consults its memo (by id) before copying, so pre-filled fakes replace the
    # tensors, and a tensor shared by two submodules (tied weights) maps to one fake.
    memo: dict[int, object] = {}
    for t in tensors:
        if id(t) not in memo:
            memo[id(t)] = _fake_of_meta(mode, t, device) if t.device.type == "meta" else mode.from_real(t)
    return copy.deepcopy(module, memo)
