"""Python numbers a graph returns (a learning rate its scheduler computed, a running average),
computed as the program computed them.

Tracing sees a symbolic number only as its sympy expression, and sympy normalizes it:
`(0.1 + b) * 3.0` becomes `3.0*b + 0.3`, which rounds otherwise (0.30633000000000005 where
Python gives 0.30633), so a float rebuilt from it may be a unit in the last place off eager's.
An output that Python operators compute from number inputs and tensor sizes alone is left
out of the traced graph instead, and computed by the graph's own nodes, in the program's
order, on each call's real inputs.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Callable

import torch
import torch.fx as fx

_NUMBER_FUNCTIONS = frozenset({
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod, operator.pow,
    operator.neg, operator.pos, operator.abs, operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
    operator.ge, operator.not_, operator.getitem, torch.sym_float, torch.sym_int, torch.sym_max, torch.sym_min,
    torch.sym_not, math.floor, math.ceil, math.trunc, math.sqrt, math.exp, math.log, abs, float, int, round, min, max,
    bool,
})  # fmt: skip
_SIZE_METHODS = frozenset({"size", "stride", "dim", "numel", "storage_offset"})
_NUMBERS = (int, float, bool, torch.SymInt, torch.SymFloat, torch.SymBool)


@dataclass(frozen=True)
class NumberOutputs:
    tensor_graph: fx.GraphModule  # the graph returning its other outputs
    compute: fx.GraphModule  # the graph's inputs in, its number outputs out
    positions: frozenset[int]
    count: int
    kind: type  # tuple or list, as the graph returns

    def calling(self, compiled: Callable) -> Callable:
        """A callable returning the graph's outputs: the numbers from `compute`, the rest from
        `compiled` (of `tensor_graph`)."""
        positions, count, kind, compute = self.positions, self.count, self.kind, self.compute

        def run(*args):
            rest, numbers = iter(compiled(*args)), iter(compute(*args))
            return kind(next(numbers) if i in positions else next(rest) for i in range(count))

        return run


def split_number_outputs(gm: fx.GraphModule, example_inputs) -> NumberOutputs | None:
    """`gm` with its outputs that are Python numbers computed from number inputs and sizes
    split off, or None where it returns none (or returns anything but a flat tuple or list)."""
    placeholders = gm.graph.find_nodes(op="placeholder")
    output = gm.graph.output_node()
    returned = output.args[0]
    if len(placeholders) != len(example_inputs) or not isinstance(returned, (tuple, list)):
        return None
    number_inputs = {p for p, value in zip(placeholders, example_inputs) if isinstance(value, _NUMBERS)}
    tensor_inputs = set(placeholders) - number_inputs
    memo: dict[fx.Node, bool] = {}

    def computable(value) -> bool:
        if isinstance(value, (tuple, list)):
            return all(computable(v) for v in value)
        if not isinstance(value, fx.Node):
            return isinstance(value, (int, float, bool, type(None)))
        return memo[value]

    # In graph order, each node's arguments are decided before it: no recursion down a chain
    # of a thousand `+` nodes (which overflowed the stack).
    for node in gm.graph.nodes:
        if node.op != "output":
            memo[node] = _computable_node(node, number_inputs, tensor_inputs, computable)

    positions = [i for i, value in enumerate(returned) if isinstance(value, fx.Node) and computable(value)]
    if not positions:
        return None
    return NumberOutputs(_with_outputs(gm, [v for i, v in enumerate(returned) if i not in positions], type(returned)),
                         _computing(gm, [returned[i] for i in positions]), frozenset(positions), len(returned),
                         type(returned))


def _computable_node(node: fx.Node, number_inputs, tensor_inputs, computable) -> bool:
    if node.op == "placeholder":
        return node in number_inputs
    if node.op == "call_function" and node.target in _NUMBER_FUNCTIONS:
        return all(computable(a) for a in (*node.args, *node.kwargs.values()))
    if node.op == "call_method" and node.target in _SIZE_METHODS:
        receiver, *rest = node.args
        return receiver in tensor_inputs and all(computable(a) for a in rest)
    return False


def _with_outputs(gm: fx.GraphModule, outputs: list, kind: type) -> fx.GraphModule:
    graph = fx.Graph()
    copied: dict[fx.Node, fx.Node] = {}
    for node in gm.graph.nodes:
        if node.op == "output":
            graph.output(kind(fx.map_arg(outputs, lambda n: copied[n])))
        else:
            copied[node] = graph.node_copy(node, lambda n: copied[n])
    return fx.GraphModule(gm, graph)


def _computing(gm: fx.GraphModule, outputs: list[fx.Node]) -> fx.GraphModule:
    needed: set[fx.Node] = set()
    pending = list(outputs)
    while pending:
        node = pending.pop()
        if node not in needed:
            needed.add(node)
            pending.extend(node.all_input_nodes)
    graph = fx.Graph()
    copied: dict[fx.Node, fx.Node] = {}
    for node in gm.graph.nodes:
        if node.op == "placeholder" or node in needed:
            copied[node] = graph.node_copy(node, lambda n: copied[n])
    graph.output(tuple(copied[n] for n in outputs))
    return fx.GraphModule(gm, graph)
