"""Which ops the min-cut partitioner may run a second time in the backward.

Recomputing is worth it only when it is cheap next to the memory it saves: elementwise ops,
views, copies and constant factories. Matmuls, convolutions, reductions and anything else
compute-heavy are computed once; random ops never run twice, since a second draw would not
match the forward's (dropout masks must be the same in both).
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
