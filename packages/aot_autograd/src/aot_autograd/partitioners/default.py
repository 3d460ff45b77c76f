"""`default_partition`: the forward computes what its outputs need; the backward gets every
forward value it reads.

Nothing is recomputed, except values the forward never needed (a weight's transpose used
only by the matmul of the backward), which the backward computes from saved primals. Sizes
(SymInts) the backward needs are computed in the forward and saved: they cost nothing.
"""

from __future__ import annotations

import operator

import torch.fx as fx

from .joint import JointGraph, ancestors, is_symbolic_size


def default_partition(
    joint_module: fx.GraphModule, _joint_inputs=None, *, num_fwd_outputs: int
) -> tuple[fx.GraphModule, fx.GraphModule]:
    joint = JointGraph(joint_module, num_fwd_outputs)
    sizes = [
        n for n in joint.backward_required
        if is_symbolic_size(n) and n not in joint.tangent_dependent and n.op != "placeholder"
    ]
    forward = joint.forward_required | ancestors(sizes) | set(joint.primals)
    # Every output of a multi-output forward op is available in the forward: save the
    # outputs the backward reads, never the tuple.
    forward |= {user for node in forward for user in node.users if user.target is operator.getitem}
    backward = joint.backward_required - forward
    saved = [
        node for node in joint.graph.nodes
        if node in forward and (any(user in backward for user in node.users) or node in joint.grads)
    ]
    return joint.split(saved)
