"""Which ops the min-cut partitioner may run a second time in the backward.

Recomputing is worth it only when it is cheap next to the memory it saves: elementwise ops,
views, copies and constant factories. Matmuls, convolutions, reductions and anything else
compute-heavy are computed once; random ops never run twice, since a second draw would not
match the forward's (dropout masks must be the same in both).

Nor is a value recomputed when the backward reads it with such an op (a matmul's operand:
a Linear's input for its weight gradient, through views): the recomputed value could not fuse
into its reader, so the backward would run a kernel to write it to memory again (torch's
partitioner bans these too, "materialized in the backward"). In an autocast Linear-GELU-Linear
training step on an H200 the recomputed bf16 casts alone took ~0.15 ms of a 9.5 ms step.
"""

from __future__ import annotations

import torch
import torch.fx as fx

from ..functionalization.op_semantics import is_view

aten = torch.ops.aten

_CHEAP = frozenset(
    {
        aten._to_copy.default,
        aten.copy.default,
        aten.fill.Scalar,
        aten.full.default,
        aten.full_like.default,
        aten.zeros.default,
        aten.zeros_like.default,
        aten.ones.default,
        aten.ones_like.default,
        aten.empty.memory_format,
        aten.empty_like.default,
        aten.scalar_tensor.default,
        aten.arange.default,
        aten.arange.start,
        aten.arange.start_step,
        aten.cat.default,
        aten.slice_scatter.default,
        aten.select_scatter.default,
    }
)


def may_recompute(node: fx.Node) -> bool:
    target = node.target
    if not isinstance(target, torch._ops.OpOverload):
        return True  # getitem, and Python arithmetic on sizes
    if torch.Tag.nondeterministic_seeded in target.tags:
        return False
    return torch.Tag.pointwise in target.tags or is_view(target) or target in _CHEAP


def read_by_heavy_op_in_backward(node: fx.Node, backward_only: set[fx.Node]) -> bool:
    """Whether an op of the backward that cannot be recomputed reads `node`, directly or through views."""
    pending = [node]
    while pending:
        for user in pending.pop().users:
            if isinstance(user.target, torch._ops.OpOverload) and is_view(user.target):
                pending.append(user)
            elif user in backward_only and not may_recompute(user):
                return True
    return False
