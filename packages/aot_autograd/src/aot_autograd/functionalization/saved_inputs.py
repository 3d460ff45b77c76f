"""Saved values must not read inputs that the epilogue writes.

The forward graph may save for the backward an input, or a view of one (`x[0]` of
`x[0].mul_(w)` is needed for w's gradient), while the epilogue copies the input's new value
into it after the graph ran: the backward would then read the new value, not the one the
forward used. Such saved values are cloned at the end of the forward graph.
"""

from __future__ import annotations

import torch
import torch.fx as fx

from ..tracing.emitter import value_of
from .op_semantics import viewed_placeholder

aten = torch.ops.aten


def clone_saved_views_of_mutated_inputs(forward: fx.GraphModule, num_outputs: int, mutated_inputs: list[int]) -> None:
    if not mutated_inputs:
        return
    placeholders = list(forward.graph.find_nodes(op="placeholder"))
    written = {placeholders[i] for i in mutated_inputs}
    output = forward.graph.find_nodes(op="output")[0]
    values = list(output.args[0])
    for position in range(num_outputs, len(values)):
        value = values[position]
        if isinstance(value, fx.Node) and viewed_placeholder(value) in written:
            with forward.graph.inserting_before(output):
                clone = forward.graph.call_function(aten.clone.default, (value,))
            clone.meta["val"] = value_of(value).clone()
            values[position] = clone
    output.args = (tuple(values),)
    forward.recompile()

