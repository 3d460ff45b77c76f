"""`x + index_put(zeros, indices, values, accumulate=True)` as `index_put(x, indices, values,
accumulate=True)`, on the ATen graph before lowering.

A weight shared by an embedding and a matmul (GPT-2's tied token embedding and LM head) gets
two gradients that autograd adds: the matmul's, and the embedding's, which its backward builds
by accumulating each token's row into a zero matrix. Accumulating those rows straight into the
matmul's gradient (lowering/scatter.py then writes them into its memory) saves the zero matrix,
its fill and the addition: three passes over a vocabulary-sized tensor (154 MB for GPT-2).
The sums are the same but for their order (each row's values join x instead of zero).
"""

from __future__ import annotations

import torch
import torch.fx

aten = torch.ops.aten


def fold_adds_into_scatters(gm: torch.fx.GraphModule) -> int:
    """Rewrite every such addition in place; returns how many."""
    folded = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not aten.add.Tensor or node.kwargs.get("alpha", 1) != 1:
            continue
        for addend, scatter in (node.args, node.args[::-1]):
            if _zero_scatter(scatter) and _same_layout(addend, node) and _same_layout(scatter, node):
                with gm.graph.inserting_before(node):
                    folded_node = gm.graph.call_function(
                        aten.index_put.default, (addend, scatter.args[1], scatter.args[2], True))
                folded_node.meta.update(node.meta)
                node.replace_all_uses_with(folded_node)
                gm.graph.erase_node(node)
                zeros = scatter.args[0]
                gm.graph.erase_node(scatter)
                if not zeros.users:
                    gm.graph.erase_node(zeros)
                folded += 1
                break
    if folded:
        gm.recompile()
    return folded


def _zero_scatter(node) -> bool:
    """`index_put(zeros, indices, values, True)` read only by the addition."""
    if not isinstance(node, torch.fx.Node) or node.target is not aten.index_put.default or len(node.users) != 1:
        return False
    accumulate = node.args[3] if len(node.args) > 3 else node.kwargs.get("accumulate", False)
    return accumulate is True and not node.kwargs and _zeros(node.args[0])


def _zeros(node) -> bool:
    if not isinstance(node, torch.fx.Node):
        return False
    if node.target is aten.full.default:
        return node.args[1] == 0
    return node.target in (aten.zeros.default, aten.zeros_like.default, aten.new_zeros.default)


def _same_layout(node, result) -> bool:
    """Same sizes, strides, dtype and device as the addition's result (no broadcast, no promotion),
    all static."""
    a, b = (n.meta.get("val") if isinstance(n, torch.fx.Node) else None for n in (node, result))
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return False
    shapes = (*a.shape, *a.stride(), *b.shape, *b.stride())
    if not all(type(s) is int for s in shapes):
        return False
    return (a.shape, a.stride(), a.dtype, a.device) == (b.shape, b.stride(), b.dtype, b.device)
