"""A joint forward+backward graph as the partitioners see it, and cutting it in two.

A joint graph takes (primals_*, tangents_*) and returns (*forward outputs, *gradients). A
partition is the list of values the forward hands to the backward ("saved"); given it, the
forward graph computes its outputs and the saved values from the primals, and the backward
computes the gradients from the saved values and the tangents, recomputing whatever else
it needs. Calling convention of the two graphs:

    forward(*primals)                               -> (*forward outputs, *saved tensors, *saved sizes)
    backward(*saved tensors, *saved sizes, *tangents) -> (*gradient of each primal, None if none)
"""

from __future__ import annotations

from typing import Callable, Iterable

import torch
import torch.fx as fx

from ..errors import AotAutogradError
from ..functionalization.dead_code import asserts, consumes_randomness


class JointGraph:
    def __init__(self, gm: fx.GraphModule, num_fwd_outputs: int):
        self.gm = gm
        self.graph = gm.graph
        placeholders = list(self.graph.find_nodes(op="placeholder"))
        self.primals = [p for p in placeholders if p.name.startswith("primals")]
        self.tangents = [p for p in placeholders if p.name.startswith("tangents")]
        outputs = list(self.graph.find_nodes(op="output")[0].args[0])
        self.fwd_outputs = outputs[:num_fwd_outputs]
        self.grads = outputs[num_fwd_outputs:]
        self.tangent_dependent = _descendants(self.tangents)
        # Random ops run in the forward, in their eager order, and are never recomputed:
        # a second draw would give a different dropout mask.
        self.random = [n for n in self.graph.nodes if consumes_randomness(n) and n not in self.tangent_dependent]
        # Runtime checks (torch._check on a data-dependent value) have no users, but must run
        # where they were traced, in the forward (or the backward, for one over its values):
        # dropped, a call that breaks the check computed on its false assumption.
        checks = [n for n in self.graph.nodes if asserts(n)]
        self.forward_checks = [n for n in checks if n not in self.tangent_dependent]
        self.backward_checks = [n for n in checks if n in self.tangent_dependent]
        self.forward_required = ancestors([*_nodes(self.fwd_outputs), *self.random, *self.forward_checks])
        self.backward_required = ancestors([*_nodes(self.grads), *self.backward_checks])

    def split(self, saved: Iterable[fx.Node]) -> tuple[fx.GraphModule, fx.GraphModule]:
        """The forward and backward graph modules handing over `saved`."""
        saved = list(dict.fromkeys(saved))
        unsaveable = [n.name for n in saved if isinstance(n.meta.get("val"), (tuple, list))]
        if unsaveable:
            raise AotAutogradError(
                f"the partition saves {', '.join(unsaveable)}, the tuple of a multi-output op's "
                f"results; a partitioner must save its getitem outputs instead"
            )
        tensors = [n for n in saved if isinstance(n.meta.get("val"), torch.Tensor)]
        sizes = [n for n in saved if n not in tensors]
        forward = _extract(
            self.gm,
            self.primals,
            [*self.fwd_outputs, *tensors, *sizes],
            extra_roots=[*self.random, *self.forward_checks],
        )
        backward = _extract(self.gm, [*tensors, *sizes, *self.tangents], self.grads, self.backward_checks)
        return forward, backward


def is_symbolic_size(node: fx.Node) -> bool:
    return isinstance(node.meta.get("val"), torch.SymInt | torch.SymFloat | torch.SymBool | int)


def ancestors(roots: Iterable[fx.Node]) -> set[fx.Node]:
    """`roots` and every node they are computed from."""
    return _reachable(roots, lambda node: node.all_input_nodes)


def _descendants(roots: Iterable[fx.Node]) -> set[fx.Node]:
    """`roots` and every node computed from them."""
    return _reachable(roots, lambda node: node.users)


def _reachable(roots: Iterable[fx.Node], neighbours: Callable[[fx.Node], Iterable[fx.Node]]) -> set[fx.Node]:
    seen: set[fx.Node] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(neighbours(node))
    return seen


def _nodes(values: Iterable) -> list[fx.Node]:
    return [v for v in values if isinstance(v, fx.Node)]


def _extract(gm: fx.GraphModule, inputs: list[fx.Node], outputs: list, extra_roots: Iterable[fx.Node] = ()) -> fx.GraphModule:
    """A graph module computing `outputs` from `inputs`, with the nodes of `gm` it needs."""
    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    for node in inputs:
        env[node] = graph.placeholder(node.name)
        env[node].meta.update(node.meta)
    needed = _needed(_nodes(outputs) + list(extra_roots), stop=set(inputs))
    for node in gm.graph.nodes:
        if node in env or node not in needed:
            continue
        if node.op == "placeholder":
            raise AssertionError(f"partition reads {node.name} where it is not available")
        env[node] = graph.node_copy(node, lambda n: env[n])
    graph.output(tuple(env[v] if isinstance(v, fx.Node) else v for v in outputs))
    return fx.GraphModule(gm, graph)


def _needed(roots: list[fx.Node], stop: set[fx.Node]) -> set[fx.Node]:
    seen: set[fx.Node] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node not in stop:
            stack.extend(node.all_input_nodes)
    return seen
