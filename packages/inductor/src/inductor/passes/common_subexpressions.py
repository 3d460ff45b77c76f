"""Common subexpressions of an ATen graph computed once, before lowering.

The joint forward/backward trace computes some values twice: layer norm's backward
decomposition recomputes the normalized input `(x - mean) * rstd` that its forward already
computed, and the partitioner may place that copy in the forward graph to save it. Lowered
as they are, the copy becomes a kernel of its own at the end of the forward, reading `x` once
more; merged, the forward's own value has two readers, is realized where it is computed, and
is saved from there. The same holds for the copies of attention's value and output heads.

Only pure ops merge: no random op (two draws differ), no op writing memory or making an
uninitialized tensor, and never two graph outputs into one (the caller gets distinct tensors).
"""

from __future__ import annotations

import operator

import torch
import torch.fx


def merge_common_subexpressions(gm: torch.fx.GraphModule) -> int:
    """Replace each node computing what an earlier node computes by that node; returns how many."""
    seen: dict = {}
    merged = 0
    output = next(iter(gm.graph.find_nodes(op="output")), None)
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or not _pure(node.target):
            continue
        key = _key(node)
        if key is None:
            continue
        earlier = seen.get(key)
        if earlier is None:
            seen[key] = node
            continue
        if output is not None and output in node.users and output in earlier.users:
            continue
        node.replace_all_uses_with(earlier)
        gm.graph.erase_node(node)
        merged += 1
    if merged:
        gm.recompile()
    return merged


def _pure(target) -> bool:
    if target is operator.getitem:
        return True
    if not isinstance(target, torch._ops.OpOverload):
        return False
    schema = target._schema
    if schema.is_mutable or not schema.returns or torch.Tag.nondeterministic_seeded in target.tags:
        return False
    return not schema.name.startswith("aten::empty")


def _key(node: torch.fx.Node):
    """A hashable description of what the node computes, or None; constants keep their type and
    sign (`x + 1` is not `x + 1.0`, `x * 0.0` is not `x * -0.0`)."""
    try:
        key = (node.target, _leaf_key(node.args), _leaf_key(node.kwargs))
        hash(key)
    except TypeError:  # a SymInt argument, or another unhashable value
        return None
    return key


def _leaf_key(value):
    if isinstance(value, torch.fx.Node):
        return value
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_leaf_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _leaf_key(v)) for k, v in value.items())))
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool, torch.Tensor)):
        raise TypeError("not compared")
    return (type(value).__name__, repr(value))
