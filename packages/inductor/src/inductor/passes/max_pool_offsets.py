"""A training graph keeps int8 window offsets for max-pool's backward, not int64 indices.

On the joint forward+backward graph, before the partitioner chooses what to save: each
`max_pool2d_with_indices` that lowering/pooling.py writes as a kernel becomes
`max_pool2d_with_offsets` (max_pool_ops.py), and its backward reads the offsets and the input's
H and W instead of the indices and the input. The partitioner then saves one byte per output
where eager saves eight, and not the pool's input at all: that one is recomputed, if the
backward needs it (a ReLU's), from what the forward saved anyway. Any other reader of the
indices (the user's `return_indices=True`) gets eager's int64 indices from the offsets.
"""

from __future__ import annotations

import operator

import torch
import torch.fx as fx

from ..max_pool_ops import (
    PoolGeometry, lowered_as_kernel, max_pool2d_offsets_to_indices, max_pool2d_with_offsets,
    max_pool2d_with_offsets_backward,
)

aten = torch.ops.aten
_POOL_ARGS = ("self", "kernel_size", "stride", "padding", "dilation", "ceil_mode")
_POOL_DEFAULTS = {"stride": (), "padding": 0, "dilation": 1, "ceil_mode": False}


def save_offsets_for_max_pool_backward(joint: fx.GraphModule) -> None:
    graph = joint.graph
    replaced = []
    for pool in list(graph.find_nodes(op="call_function", target=aten.max_pool2d_with_indices.default)):
        replaced.extend(_rewrite(graph, pool))
    # Only the replaced nodes go: the joint graph keeps other unread nodes on purpose (a
    # random op's draw moves the generator even if nothing reads it).
    for node in reversed(replaced):
        if not node.users:
            graph.erase_node(node)
    if replaced:
        joint.recompile()


def _rewrite(graph: fx.Graph, pool: fx.Node) -> list[fx.Node]:
    """Rewrite one pool and its backward; returns the nodes replaced (in graph order)."""
    args = {**_POOL_DEFAULTS, **dict(zip(_POOL_ARGS, pool.args)), **pool.kwargs}
    x, ceil_mode = args["self"], args["ceil_mode"]
    geometry = PoolGeometry.of(args["kernel_size"], args["stride"], args["padding"], args["dilation"])
    items = {user.args[1]: user for user in pool.users if user.target is operator.getitem}
    indices = items.get(1)
    if indices is None or not lowered_as_kernel(x.meta["val"].dtype, geometry):
        return []
    geometry_args = geometry.args()
    with graph.inserting_after(pool):
        pooled = _node(graph, max_pool2d_with_offsets, (x, *geometry_args, ceil_mode))
    with graph.inserting_after(pooled):
        values = _node(graph, operator.getitem, (pooled, 0))
    with graph.inserting_after(values):
        offsets = _node(graph, operator.getitem, (pooled, 1))
    if 0 in items:
        items[0].replace_all_uses_with(values)
    height, width = _input_hw(graph, x, offsets)
    as_indices = None
    backwards = []
    for user in list(indices.users):
        if _is_backward_of(user, indices, x, geometry, ceil_mode):
            with graph.inserting_before(user):
                gradient = _node(graph, max_pool2d_with_offsets_backward,
                                 (user.args[0], offsets, [height, width], *geometry_args, ceil_mode))
            user.replace_all_uses_with(gradient)
            backwards.append(user)
            continue
        if as_indices is None:
            # After the symbolic width's sym_size node, which it reads.
            with graph.inserting_after(width if isinstance(width, fx.Node) else offsets):
                as_indices = _node(graph, max_pool2d_offsets_to_indices, (offsets, *geometry_args, width))
        user.replace_input_with(indices, as_indices)
    return [pool, *items.values(), *backwards]


def _is_backward_of(user: fx.Node, indices: fx.Node, x: fx.Node, geometry: PoolGeometry, ceil_mode) -> bool:
    """Whether `user` is the pool's own backward (autograd's: same input and arguments)."""
    if user.target is not aten.max_pool2d_with_indices_backward.default or len(user.args) != 8:
        return False
    _, source, kernel, stride, padding, dilation, ceil, chosen = user.args
    return (chosen is indices and source is x and ceil == ceil_mode
            and PoolGeometry.of(kernel, stride, padding, dilation) == geometry)


def _input_hw(graph: fx.Graph, x: fx.Node, after: fx.Node) -> list:
    """The pool input's H and W: ints, or `sym_size` nodes (saved as sizes, not the input)."""
    sizes = []
    for dim in (-2, -1):
        size = x.meta["val"].shape[dim]
        if isinstance(size, torch.SymInt):
            with graph.inserting_after(after):
                size = _node(graph, aten.sym_size.int, (x, x.meta["val"].dim() + dim))
            after = size
        sizes.append(size)
    return sizes


def _node(graph: fx.Graph, target, args) -> fx.Node:
    """A new node whose `val` is `target` run on its arguments' values (fakes: metadata only)."""
    node = graph.call_function(target, tuple(args))
    values = torch.fx.node.map_arg(node.args, lambda n: n.meta["val"])
    node.meta["val"] = target(*values)
    return node
