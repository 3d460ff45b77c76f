"""Compiled ATen graphs run with autocast off.

Tracing ran the captured graph through autocast, so its casts are already ops of the ATen
graph, including the regions where the user's code turned autocast off
(`with torch.autocast(..., enabled=False)` around a float32 matmul, as HF's rotary embeddings
do). Run under the caller's autocast, an aten.mm the graph holds in float32 would be cast to
bfloat16 again, and the kernels reading its output would read the wrong dtype.
"""

from __future__ import annotations

import contextlib

import torch


def autocast_on() -> bool:
    return torch.is_autocast_enabled("cpu") or torch.is_autocast_enabled("cuda")


def without_autocast():
    """A context in which no device's autocast applies (a no-op when none is on)."""
    if not autocast_on():
        return contextlib.nullcontext()
    return torch._C._DisableAutocast()
