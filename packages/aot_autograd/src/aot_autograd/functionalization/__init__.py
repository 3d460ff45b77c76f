"""Functionalization: a recorded ATen graph rewritten without in-place ops or aliasing.

Exports `functionalize(gm) -> FunctionalGraph` (the graph, which inputs it mutates, which
outputs alias inputs or other outputs).
"""

from .functionalize import FunctionalGraph, OutputAlias, functionalize

__all__ = ["FunctionalGraph", "OutputAlias", "functionalize"]
