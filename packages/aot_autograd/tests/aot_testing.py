"""Shared by aot_autograd's tests: graphs to compile, and eager-vs-compiled training loops.

Graphs come from `torch.fx.symbolic_trace` (no capture needed). Models whose Python
control flow symbolic tracing cannot follow (Hugging Face models) are traced as one leaf
module: the FX graph only calls the model, and aot_autograd's ATen tracer runs its code.
"""

from __future__ import annotations

import copy
from typing import Callable, Sequence

import torch
import torch.fx as fx

from aot_autograd import aot_eager, aot_eager_decomp_partition
from fake_tensor import FakeTensorMode, ShapeEnv

BACKENDS = {"aot_eager": aot_eager, "aot_eager_decomp_partition": aot_eager_decomp_partition}


class Calling(torch.nn.Module):
    """`forward(*args)` is `call(model, *args)`, returned as a tuple."""

    def __init__(self, model: torch.nn.Module, call: Callable):
        super().__init__()
        self.model = model
        self.call = call

    def forward(self, *args):
        return tuple(self.call(self.model, *args))


def graph_of(module: torch.nn.Module) -> fx.GraphModule:
    return fx.symbolic_trace(module)


def graph_calling(module: torch.nn.Module, num_args: int) -> fx.GraphModule:
    """A graph with `num_args` placeholders that calls `module` as one node."""
    graph = fx.Graph()
    args = [graph.placeholder(f"arg{i}") for i in range(num_args)]
    graph.output(graph.call_module("module", tuple(args)))
    root = torch.nn.Module()
    root.module = module
    return fx.GraphModule(root, graph)


def functions_graph(fn: Callable) -> fx.GraphModule:
    return fx.symbolic_trace(fn)


def dynamic_functions_graph(fn: Callable, examples: Sequence[torch.Tensor]) -> fx.GraphModule:
    """`functions_graph(fn)` whose tensor inputs (given by `examples`) have a symbolic first dim."""
    gm = functions_graph(fn)
    mode = FakeTensorMode(shape_env=ShapeEnv())
    for placeholder, example in zip(gm.graph.find_nodes(op="placeholder"), examples):
        placeholder.meta["example_value"] = mode.from_real(example, dynamic_dims=[0])
    return gm


def train_side_by_side(
    model: torch.nn.Module,
    make_graph: Callable[[torch.nn.Module], fx.GraphModule],
    make_batch: Callable[[], Sequence[torch.Tensor]],
    backend: Callable,
    *,
    loss: Callable = lambda outputs: sum(o.float().square().mean() for o in outputs),
    steps: int = 3,
    lr: float = 0.05,
    tolerance: dict | None = None,
) -> None:
    """Train `model` eagerly and a copy through `backend` with the same batches and seeds:
    losses, every parameter's gradient, and parameters and buffers after each step agree."""
    tolerance = tolerance or {}
    eager = model
    compiled_model = copy.deepcopy(model)
    compiled = backend(make_graph(compiled_model), list(make_batch()))
    optimizers = [torch.optim.SGD(m.parameters(), lr=lr) for m in (eager, compiled_model)]
    for step in range(steps):
        batch = make_batch()
        torch.manual_seed(step)
        eager_loss = loss(_as_tuple(eager(*batch)))
        torch.manual_seed(step)
        compiled_loss = loss(_as_tuple(compiled(*batch)))
        torch.testing.assert_close(compiled_loss, eager_loss, **tolerance)
        eager_loss.backward()
        compiled_loss.backward()
        for (name, expected), actual in zip(eager.named_parameters(), compiled_model.parameters()):
            if expected.grad is None:
                assert actual.grad is None, name
            else:
                torch.testing.assert_close(actual.grad, expected.grad, msg=lambda m: f"{name}: {m}", **tolerance)
        for optimizer in optimizers:
            optimizer.step()
            optimizer.zero_grad()
        for (name, expected), actual in zip(eager.named_buffers(), compiled_model.buffers()):
            torch.testing.assert_close(actual, expected, msg=lambda m: f"{name}: {m}", **tolerance)


def _as_tuple(outputs) -> tuple:
    return tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)


def recording_compiler(graphs: list) -> Callable:
    """A compiler that runs the graph as is and keeps it in `graphs`."""

    def compiler(gm: fx.GraphModule, example_inputs):
        graphs.append(gm)
        return gm

    return compiler
