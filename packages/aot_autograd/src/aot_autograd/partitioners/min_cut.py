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

A forward value recomputed in the backward from a primal reads the primal through an alias the
forward saves (`aten.alias`, saved detached: the primal's storage of the forward's call), not
the primal itself: eager saved that value (or a view, a Linear's `weight.t()`), computed from the
storage of its forward. After `weight.data = new` between forward and backward, eager's
backward reads the old values; recomputed from the primal, ours read the new ones. Where the
backward reads the primal itself (eager saved the tensor: `x @ w` keeps `w`), it still does.
"""

from __future__ import annotations

import networkx as nx
import torch
import torch.fx as fx

from .joint import JointGraph, is_symbolic_size
from .recomputable import may_recompute, read_by_heavy_op_in_backward

aten = torch.ops.aten

# A saved size (SymInt) costs a few bytes on the ctx; it must stay cheaper than any tensor.
_SIZE_BYTES = 1
# Saving a graph input keeps alive what the caller holds anyway (parameters, the batch):
# nearly free, so the cut prefers it to an activation of the same size.
_INPUT_BYTES = 1


def min_cut_rematerialization_partition(
    joint_module: fx.GraphModule, _joint_inputs=None, *, num_fwd_outputs: int
) -> tuple[fx.GraphModule, fx.GraphModule]:
    joint = JointGraph(joint_module, num_fwd_outputs)
    return joint.split(_recomputed_from_aliases(joint, min_cut_saved_values(joint)))


def _recomputed_from_aliases(joint: JointGraph, saved: list[fx.Node]) -> list[fx.Node]:
    """`saved`, where forward values the backward recomputes from a primal read it through a
    saved alias instead (see the module docstring)."""
    saved = list(saved)
    backward_side = _backward_side(joint, set(saved))
    recomputed = {n for n in backward_side if n in joint.forward_required and n not in saved}
    graph = joint.graph
    first_op = next(n for n in graph.nodes if n.op != "placeholder")
    for primal in joint.primals:
        readers = [user for user in primal.users if user in recomputed]
        if primal not in saved or not readers or not isinstance(primal.meta.get("val"), torch.Tensor):
            continue
        with graph.inserting_before(first_op):
            alias = graph.call_function(aten.alias.default, (primal,))
        alias.meta.update(primal.meta)
        for user in readers:
            user.replace_input_with(primal, alias)
        saved.append(alias)
        if not any(user in backward_side for user in primal.users) and primal not in joint.grads:
            saved.remove(primal)
    return saved


def _backward_side(joint: JointGraph, saved: set[fx.Node]) -> set[fx.Node]:
    """The nodes the backward graph computes, or reads as saved values."""
    seen: set[fx.Node] = set()
    stack = [n for n in (*joint.grads, *joint.backward_checks) if isinstance(n, fx.Node)]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            if node not in saved:
                stack.extend(node.all_input_nodes)
    return seen


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
        if node in joint.primals or (node in joint.forward_required and (
                not may_recompute(node) or read_by_heavy_op_in_backward(node, backward_only))):
            network.add_edge("source", inside)
        capacity = _INPUT_BYTES if node.op == "placeholder" else saved_bytes(node)
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
