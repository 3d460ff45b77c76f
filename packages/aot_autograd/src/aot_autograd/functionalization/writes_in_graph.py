"""Input mutations kept in the graph, for a compiler that writes inputs in place itself.

The functional graph returns each mutated input's new value first; the epilogue copies it
back. A compiler that can store those values straight into the inputs' memory (inductor)
instead gets the graph ending in `aten.copy_(input, new_value)` for each of them, returning
only the user's outputs: no buffer per new value, no copy after the call. A training forward
does the same for the writes no gradient flows through (a BatchNorm's running stats).
"""

from __future__ import annotations

import torch
import torch.fx as fx


def write_inputs_before_output(gm: fx.GraphModule, mutated_inputs: list[int], positions) -> fx.GraphModule:
    """`gm` (returning the mutated inputs' new values first) with the new values at `positions`
    among those written by `copy_` into their inputs just before the output, and no longer
    returned. After everything else, as the epilogue's copies would be: a saved view of such
    an input was cloned before (functionalization/saved_inputs.py)."""
    graph = gm.graph
    placeholders = list(graph.find_nodes(op="placeholder"))
    output = graph.find_nodes(op="output")[0]
    values = list(output.args[0])
    positions = set(positions)
    with graph.inserting_before(output):
        for position in sorted(positions):
            target = placeholders[mutated_inputs[position]]
            write = graph.call_function(torch.ops.aten.copy_.default, (target, values[position]))
            write.meta["val"] = target.meta.get("val")
    output.args = (tuple(v for i, v in enumerate(values) if i not in positions),)
    gm.recompile()
    return gm
