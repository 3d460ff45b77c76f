"""Functionalization: a recorded ATen graph rewritten without in-place ops or aliasing.

Exports `functionalize(gm) -> FunctionalGraph` (the graph, which inputs it mutates, which
outputs alias inputs or other outputs), `outputs_with_their_own_history` (aliasing outputs
the graph must return itself, their history not a view's), and `write_inputs_before_output` (the graph ending in
`copy_` into some mutated inputs, for a compiler that writes inputs in place).
"""

from .functionalize import FunctionalGraph, OutputAlias, functionalize, view_geometry
from .output_histories import outputs_with_their_own_history
from .writes_in_graph import write_inputs_before_output

__all__ = ["FunctionalGraph", "OutputAlias", "functionalize", "outputs_with_their_own_history", "view_geometry",
           "write_inputs_before_output"]
