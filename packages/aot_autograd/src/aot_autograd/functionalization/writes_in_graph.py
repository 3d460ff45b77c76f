"""Input mutations kept in the graph, for a compiler that writes inputs in place itself.

The functional graph returns each mutated input's new value first; the epilogue copies it
back. A compiler that can store those values straight into the inputs' memory (inductor)
instead gets the graph ending in `aten.copy_(input, new_value)` for each of them, returning
only the user's outputs: no buffer per new value, no copy after the call.
"""

from __future__ import annotations

import torch
import torch.fx as fx

from .functionalize import FunctionalGraph


def keep_input_writes_in_graph(functional: FunctionalGraph) -> fx.GraphModule:
    """`functional`'s graph with its mutated inputs written by `copy_` nodes before the output,
    returning only the outputs after the new values."""
    gm = functional.graph_module
    graph = gm.graph
    placeholders = list(graph.find_nodes(op="placeholder"))
    output = graph.find_nodes(op="output")[0]
    values = list(output.args[0])
    count = len(functional.mutated_inputs)
    with graph.inserting_before(output):
        for index, value in zip(functional.mutated_inputs, values[:count]):
            target = placeholders[index]
            write = graph.call_function(torch.ops.aten.copy_.default, (target, value))
            write.meta["val"] = target.meta.get("val")
    output.args = (tuple(values[count:]),)
    gm.recompile()
    return gm
