"""Tensor constants built inside the mode from Python data become fakes."""

from __future__ import annotations

import torch

from .execution import run_on_meta
from .op_rules import rule_for

aten = torch.ops.aten


@rule_for(aten.lift_fresh.default, aten.lift_fresh_copy.default)
def _lift_constant(mode, func, args, kwargs):
    # `torch.tensor([1, 2])` builds a real CPU tensor from the Python data, then lifts it:
    # the constant becomes a fake (its values dropped, its metadata kept).
    (tensor,) = args
    fake = mode.from_real(tensor)
    if func is aten.lift_fresh.default:
        return fake
    return run_on_meta(mode, aten.clone.default, (fake,), {})
