"""What a partition keeps alive between forward and backward, in bytes.

Saved values that are graph inputs, or views of them, cost nothing extra (the caller holds
the inputs anyway); the rest are activations the backward keeps alive.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.fx as fx

from ..functionalization.op_semantics import viewed_placeholder
from .min_cut import saved_bytes


@dataclass(frozen=True)
class SavedBytes:
    activations: int
    inputs: int


def saved_tensor_bytes(forward: fx.GraphModule, num_fwd_outputs: int) -> SavedBytes:
    """Bytes of the tensors `forward` hands to the backward (outputs past its first
    `num_fwd_outputs`), split into activations and inputs (or their views)."""
    values = list(forward.graph.find_nodes(op="output")[0].args[0])[num_fwd_outputs:]
    activations = inputs = 0
    for node in values:
        if not isinstance(node.meta.get("val"), torch.Tensor):
            continue
        if viewed_placeholder(node) is not None:
            inputs += saved_bytes(node)
        else:
            activations += saved_bytes(node)
    return SavedBytes(activations, inputs)

