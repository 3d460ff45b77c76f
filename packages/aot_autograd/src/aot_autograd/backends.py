"""The `aot_eager` backends: aot_autograd's graphs run as they are, by FX's own code.

`aot_eager` checks tracing, functionalization and partitioning without a code generator;
`aot_eager_decomp_partition` adds what inductor's input looks like: decompositions to core
ATen and the min-cut partitioner.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch.fx as fx

from .aot import aot_module_simplified
from .decompositions import default_decompositions
from .partitioners import min_cut_rematerialization_partition


def run_graph_module(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable:
    """A compiler that compiles nothing: the graph module's generated Python runs the ATen ops
    (its forward: calling the module would run torch's global module hooks on it)."""
    return gm.forward


def aot_eager(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable:
    return aot_module_simplified(gm, example_inputs, fw_compiler=run_graph_module)


def aot_eager_decomp_partition(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable:
    return aot_module_simplified(
        gm,
        example_inputs,
        fw_compiler=run_graph_module,
        decompositions=default_decompositions(),
        partition_fn=min_cut_rematerialization_partition,
    )
