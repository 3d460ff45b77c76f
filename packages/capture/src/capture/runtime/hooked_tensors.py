"""A graph that breaks at `t.register_hook(fn)` or `t.retain_grad()`, of a tensor `t` it
computed and used again, is split right after `t`'s node, so that `t` is an autograd boundary.

A backend that makes a graph one autograd node (aot_autograd does, as torch.compile's does)
returns the graph's outputs as siblings: `z = t + 1`, computed in the same graph, gets its
gradient from the node's backward straight to the graph's inputs, never through `t`. The hook,
registered natively once the graph has run, then sees only the gradient of `t`'s later uses,
where eager's sees the sum over all of them (and `t.grad` misses `z`'s part). Split, the rest
of the graph is a second piece that takes `t` as an input, so every use of `t` sends its
gradient through it. The pieces keep the graph's order (everything up to `t`, then the rest),
so writes and reads stay in sequence.

A hook registered on an output of an earlier graph (a break came between the graph and the
hook) is not helped: that graph has run before the hook was seen. torch.compile gives the
same partial gradients there.
"""

from __future__ import annotations

from typing import Callable

import torch

from ..distributed.buckets import Bucket, BucketedGraph, GraphSplit
from ..values.base import Value
from ..values.callables import BuiltinValue, MethodValue
from ..values.tensor import TensorValue

# Tensor methods that make a tensor's own gradient observable; both break the graph
# (capture.values.tensor.REFUSED_METHODS).
_OBSERVE_GRADIENT = (torch.Tensor.register_hook, torch.Tensor.retain_grad)
_META_KEY = "gradient_observed_after_graph"


def mark_observed_tensor(callee: Value) -> None:
    """Called with the callable of the instruction a graph breaks at: marks the tensor's node
    when that callable is `t.register_hook` or `t.retain_grad` of a tensor the graph made."""
    if not (isinstance(callee, MethodValue) and isinstance(callee.func, BuiltinValue) and isinstance(callee.obj, TensorValue)):
        return
    if callee.func.fn not in _OBSERVE_GRADIENT:
        return
    tensor = callee.obj
    if tensor.node.op != "placeholder" and tensor.fake.requires_grad:
        tensor.node.meta[_META_KEY] = True


def split_at_observed_tensor(gm: torch.fx.GraphModule, backend: Callable) -> Callable | None:
    """The graph compiled in two pieces, split after the marked tensor's node, or None when
    no node is marked or nothing after it uses it (no gradient could bypass it)."""
    nodes = [n for n in gm.graph.nodes if n.op not in ("placeholder", "output")]
    marked = next((i for i, n in enumerate(nodes) if n.meta.get(_META_KEY)), None)
    if marked is None:
        return None
    before, after = nodes[: marked + 1], nodes[marked + 1 :]
    later = set(after)
    if not any(user in later for user in nodes[marked].users):
        return None
    buckets = [Bucket(nodes=before), Bucket(nodes=after)]
    return BucketedGraph(gm, buckets, backend, GraphSplit(buckets))
