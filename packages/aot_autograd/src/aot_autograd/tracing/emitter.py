"""`Emitter`: appends an op to a graph and gives the new node its `meta["val"]`.

Passes that make new ATen nodes (functionalization's scatters and regenerated views) run
each op on the `val`s of its arguments, so that the node's fake output carries exactly the
metadata the op produces; symbolic sizes among the arguments become graph nodes.
"""

from __future__ import annotations

import operator
from typing import Any

import torch
import torch.fx as fx

from .arguments import map_arguments
from .symbolic import SymbolicValues, SymValue


class Emitter:
    def __init__(self, graph: fx.Graph, symbols: SymbolicValues):
        self.graph = graph
        self.symbols = symbols

    def __call__(self, op, *args: Any, **kwargs: Any) -> fx.Node:
        node_args = map_arguments((args, kwargs), self._as_arg)
        val_args, val_kwargs = map_arguments((args, kwargs), value_of)
        node = self.graph.call_function(op, *node_args)
        # Only the value's metadata is wanted, not its autograd history: with grad mode on,
        # an op reading a view that the trace made under no_grad and then wrote in place (a
        # parameter's row filled in `with torch.no_grad()`) raises autograd's "view created in
        # no_grad mode ... modified inplace" as it rebuilds the view's grad_fn.
        with torch.no_grad():
            node.meta["val"] = op(*val_args, **val_kwargs)
        return node

    def getitem(self, node: fx.Node, index: int) -> fx.Node:
        item = self.graph.call_function(operator.getitem, (node, index))
        item.meta["val"] = node.meta["val"][index]
        return item

    def _as_arg(self, value: Any) -> Any:
        if isinstance(value, SymValue):
            return self.symbols.node_for(value)
        return value


def value_of(arg: Any) -> Any:
    """What a graph argument stands for at trace time: a node's `val`, or the constant."""
    return arg.meta["val"] if isinstance(arg, fx.Node) else arg


def sizes_of(node: fx.Node) -> list:
    return list(node.meta["val"].shape)


def is_tensor_node(arg: Any) -> bool:
    return isinstance(arg, fx.Node) and isinstance(arg.meta.get("val"), torch.Tensor)
