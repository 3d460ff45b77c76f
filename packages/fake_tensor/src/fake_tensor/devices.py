"""The device an op's outputs stand for.

Inner tensors all live on `meta`, so the meta kernel cannot tell us the device: we apply
eager PyTorch's rule ourselves. An explicit `device=` argument wins; otherwise all tensor
inputs must agree, except that 0-dim CPU tensors mix with tensors on any device (eager
treats them like Python scalars); copies and indexing read other devices and write `self`'s.
"""

from __future__ import annotations

import torch

from .errors import DeviceMismatchError

aten = torch.ops.aten
CPU = torch.device("cpu")

# Ops whose outputs live where their first tensor (self or dst) lives, whatever the devices
# of the other tensors: copies between devices, and indexing with CPU index tensors.
_FOLLOWS_SELF = {
    aten._to_copy.default,
    aten.copy_.default,
    aten.copy.default,
    aten._copy_from.default,
    aten._copy_from_and_resize.default,
    aten.index.Tensor,
    aten.index_put.default,
    aten.index_put_.default,
    aten._index_put_impl_.default,
}


def output_device(func, devices: list[tuple[torch.device, bool]], explicit: torch.device | None) -> torch.device:
    """`devices` holds (device, is_0dim_cpu) for each tensor input, in argument order."""
    if explicit is not None:
        return explicit
    if not devices:
        return CPU
    if func in _FOLLOWS_SELF:
        return devices[0][0]
    distinct = []
    for device, is_cpu_scalar in devices:
        if not is_cpu_scalar and device not in distinct:
            distinct.append(device)
    if len(distinct) > 1:
        raise DeviceMismatchError(func, distinct)
    return distinct[0] if distinct else devices[0][0]


def normalize_device(device: torch.device | str | int) -> torch.device:
    """`cuda` means the current CUDA device, as in eager; fakes report an indexed device."""
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        index = torch.cuda.current_device() if torch.cuda.is_available() else 0
        device = torch.device("cuda", index)
    return device
