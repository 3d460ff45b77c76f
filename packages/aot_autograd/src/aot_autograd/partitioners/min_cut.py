"""`min_cut_rematerialization_partition`: save the fewest bytes, recompute cheap ops.

Which forward values to hand to the backward is a minimum cut. Every joint node becomes two
flow-network vertices joined by an edge whose capacity is the bytes of its value (`n.in ->
n.out`); data edges (`n.out -> user.in`) are unbounded. The source feeds what the forward
has for free (the primals) and what must be computed in the forward (ops that may not be
recomputed, and values a matmul of the backward reads: see recomputable.py); everything the
backward computes from the tangents drains into the sink. A cut through `n.in -> n.out` means
"save n"; nodes left on the sink side are recomputed in the backward from the saved values.
With capacities in bytes, the cut is the smallest set of saved bytes from which the backward
can be computed.

A view of a primal that the forward computes is saved, not recomputed from the primal in the
backward: eager saves that view object (a Linear's `weight.t()`), which keeps the storage it
was made on. After `weight.data = new` between forward and backward, eager's backward reads
the old values; a view recomputed from the primal would read the new ones. It costs what
saving the primal costs.
"""

from __future__ import annotations

import networkx as nx
import torch
import torch.fx as fx

from ..functionalization.op_semantics import viewed_placeholder
from .joint import JointGraph, is_symbolic_size
from .recomputable import may_recompute, read_by_heavy_op_in_backward

# A saved size (SymInt) costs a few bytes on the ctx; it must stay cheaper than any tensor.
_SIZE_BYTES = 1
# Saving a graph input keeps alive what the caller holds anyway (parameters, the batch):
# nearly free, so the cut prefers it to an activation of the same size.
_INPUT_BYTES = 1


def min_cut_rematerialization_partition(
    joint_module: fx.GraphModule, _joint_inputs=None, *, num_fwd_outputs: int
) -> tuple[fx.GraphModule, fx.GraphModule]:
    joint = JointGraph(joint_module, num_fwd_outputs)
    return joint.split(min_cut_saved_values(joint))


def min_cut_saved_values(joint: JointGraph) -> list[fx.Node]:
    network = nx.DiGraph()
    backward_only = joint.tangent_dependent & joint.backward_required
    grads = {g for g in joint.grads if isinstance(g, fx.Node)}
    for node in joint.graph.nodes:
        if node.op == "output":
            continue
        inside, outside = (node, "in"), (node, "out")
        if node in backward_only:
            network.add_edge(inside, "sink")
            continue
        primal_view = node in joint.forward_required and _views_primal(node, joint)
        if node in joint.primals or primal_view or (node in joint.forward_required and (
                not may_recompute(node) or read_by_heavy_op_in_backward(node, backward_only))):
            network.add_edge("source", inside)
        capacity = _INPUT_BYTES if node.op == "placeholder" or primal_view else saved_bytes(node)
        if capacity is None:
            network.add_edge(inside, outside)
        else:
            network.add_edge(inside, outside, capacity=capacity)
        for user in node.users:
            if user.op != "output":
                network.add_edge(outside, (user, "in"))
        if node in grads:
            # A gradient the tangents do not reach (angle's of a real input: zeros_like(x))
            # is still the backward's to return.
            network.add_edge(outside, "sink")
    if "sink" not in network or "source" not in network:
        return []
    _, (reachable, _) = nx.minimum_cut(network, "source", "sink")
    return [
        node for node in joint.graph.nodes
        if (node, "in") in reachable and (node, "out") in network and (node, "out") not in reachable
    ]


def _views_primal(node: fx.Node, joint: JointGraph) -> bool:
    return node.op == "call_function" and isinstance(node.meta.get("val"), torch.Tensor) and viewed_placeholder(node) in joint.primals


def saved_bytes(node: fx.Node) -> int | None:
    """What saving `node`'s value costs; None when it cannot be saved (a tuple of outputs)."""
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        return max(_hint(val.numel()) * val.element_size(), 1)
    if is_symbolic_size(node):
        return _SIZE_BYTES
    return None


# What a data-dependent size (no hint: nonzero's row count) is assumed to be when costing.
_UNBACKED_SIZE_GUESS = 8192


def _hint(value) -> int:
    """A size's value at the example inputs (symbolic sizes carry it as their hint)."""
    if isinstance(value, torch.SymInt):
        hint = value.node.hint
        return _UNBACKED_SIZE_GUESS if hint is None else int(hint)
    return int(value)
