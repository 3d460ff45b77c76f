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


def saved_tensor_bytes(forward: fx.GraphModule, backward: fx.GraphModule) -> SavedBytes:
    """Bytes of the tensors a partition hands from `forward` to `backward` (the backward's
    inputs other than tangents), split into activations and inputs (or their views)."""
    nodes = {node.name: node for node in forward.graph.nodes}
    activations = inputs = 0
    for placeholder in backward.graph.find_nodes(op="placeholder"):
        node = nodes.get(placeholder.name)
        if node is None or not isinstance(node.meta.get("val"), torch.Tensor):
            continue  # a tangent, or a saved size
        if viewed_placeholder(node) is not None:
            inputs += saved_bytes(node)
        else:
            activations += saved_bytes(node)
    return SavedBytes(activations, inputs)
