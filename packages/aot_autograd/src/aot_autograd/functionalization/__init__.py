"""Functionalization: a recorded ATen graph rewritten without in-place ops or aliasing.

Exports `functionalize(gm) -> FunctionalGraph` (the graph, which inputs it mutates, which
outputs alias inputs or other outputs), and `write_inputs_before_output` (the graph ending in
`copy_` into some mutated inputs, for a compiler that writes inputs in place).
"""

from .functionalize import FunctionalGraph, OutputAlias, functionalize, view_geometry
from .writes_in_graph import write_inputs_before_output

__all__ = ["FunctionalGraph", "OutputAlias", "functionalize", "view_geometry", "write_inputs_before_output"]
