"""Functionalization: a recorded ATen graph rewritten without in-place ops or aliasing.

Exports `functionalize(gm) -> FunctionalGraph` (the graph, which inputs it mutates, which
outputs alias inputs or other outputs), and `keep_input_writes_in_graph` /
`write_inputs_before_output` (the graph ending in `copy_` into each, or some, mutated input, for
a compiler that writes inputs in place).
"""

from .functionalize import FunctionalGraph, OutputAlias, functionalize
from .writes_in_graph import keep_input_writes_in_graph, write_inputs_before_output

__all__ = [
    "FunctionalGraph", "OutputAlias", "functionalize", "keep_input_writes_in_graph", "write_inputs_before_output",
]
