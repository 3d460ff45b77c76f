"""Dynamic shapes: a graph traced with a symbolic batch size compiles once and serves every
batch size, with symbolic sizes reaching both the forward and the backward graph."""

from __future__ import annotations

import operator

import pytest
import torch

from aot_autograd import aot_module_simplified, default_partition, min_cut_rematerialization_partition
from aot_testing import graph_of, recording_compiler
from fake_tensor import FakeTensorMode, ShapeEnv

PARTITIONERS = {"default": default_partition, "min_cut": min_cut_rematerialization_partition}


class FlattenMLP(torch.nn.Module):
    """Reads its batch size (`x.size(0)`) and uses it in views and arithmetic."""

    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(12)
        self.fc = torch.nn.Linear(12, 8)

    def forward(self, x):
        y = torch.nn.functional.gelu(self.fc(self.norm(x.view(x.size(0), -1))))
        return (y.softmax(-1) * y.size(0), y[:, :3].reshape(-1))


def _dynamic_graph(model, example):
    gm = graph_of(model)
    mode = FakeTensorMode(shape_env=ShapeEnv())
    (placeholder,) = gm.graph.find_nodes(op="placeholder")
    placeholder.meta["example_value"] = mode.from_real(example, dynamic_dims=[0])
    return gm


def _is_symbolic(value):
    return isinstance(value, torch.SymInt) or (
        isinstance(value, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in value.shape)
    )


@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_one_compilation_serves_every_batch_size(partitioner):
    torch.manual_seed(0)
    model = FlattenMLP()
    graphs = []
    example = torch.randn(4, 3, 4, requires_grad=True)
    compiled = aot_module_simplified(
        _dynamic_graph(model, example), [example], recording_compiler(graphs), partition_fn=PARTITIONERS[partitioner]
    )
    for batch in (4, 7, 2, 13):
        x = torch.randn(batch, 3, 4, requires_grad=True)
        actual, expected = compiled(x), model(x)
        torch.testing.assert_close(actual, expected)
        params = [x, *model.parameters()]
        loss = lambda outputs: outputs[0].square().sum() + outputs[1].sum()
        torch.testing.assert_close(torch.autograd.grad(loss(actual), params), torch.autograd.grad(loss(expected), params))
    assert len(graphs) == 2  # one forward, one backward


def test_symbolic_sizes_reach_both_graphs():
    graphs = []
    x = torch.randn(5, 3, 4, requires_grad=True)
    compiled = aot_module_simplified(_dynamic_graph(FlattenMLP(), x), [x], recording_compiler(graphs))
    compiled(x)[0].sum().backward()
    forward, backward = graphs
    for gm in (forward, backward):
        assert any(_is_symbolic(p.meta["val"]) for p in gm.graph.find_nodes(op="placeholder")), gm.code


def test_inference_with_a_symbolic_batch_size():
    torch.manual_seed(0)
    model = FlattenMLP()
    with torch.no_grad():
        compiled = aot_module_simplified(_dynamic_graph(model, torch.randn(3, 3, 4)), [torch.randn(3, 3, 4)], recording_compiler([]))
        for batch in (3, 8):
            x = torch.randn(batch, 3, 4)
            torch.testing.assert_close(compiled(x), model(x))


# Python arithmetic on a size as capture records it; fake tensors keep each result as one sympy
# expression (float(n) shares n's, n // 2.5 is floor(0.4*s0), 3 ** n a Pow) that aot_autograd
# rebuilds as graph nodes.
SIZE_ARITHMETIC = {
    "float": lambda n: torch.sym_float(n),
    "floordiv_float": lambda n: n // 2.5,
    "mod_float": lambda n: n % 2.5,
    "int_of_product": lambda n: torch.sym_int(n * 1.5),
    "int_to_the_size": lambda n: 3**n,
}


def _graph_returning(arithmetic) -> torch.fx.GraphModule:
    """`r = arithmetic(x.shape[0]); return x + r, r`."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    size = graph.call_function(operator.getitem, (graph.call_function(getattr, (x, "shape")), 0))
    tracer = torch.fx.proxy.GraphAppendingTracer(graph)
    r = arithmetic(torch.fx.Proxy(size, tracer)).node
    graph.output((graph.call_function(operator.add, (x, r)), r))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("arithmetic", SIZE_ARITHMETIC)
def test_python_arithmetic_on_a_symbolic_size(arithmetic, requires_grad):
    gm = _graph_returning(SIZE_ARITHMETIC[arithmetic])
    example = torch.randn(5, requires_grad=requires_grad)
    (placeholder,) = gm.graph.find_nodes(op="placeholder")
    placeholder.meta["example_value"] = FakeTensorMode(shape_env=ShapeEnv()).from_real(example, dynamic_dims=[0])
    compiled = aot_module_simplified(gm, [example], recording_compiler([]))
    for n in (5, 5, 9):
        x = torch.randn(n, requires_grad=requires_grad)
        actual, expected = compiled(x), gm(x)
        assert type(actual[1]) is type(expected[1])
        assert actual[1] == expected[1]
        torch.testing.assert_close(actual[0], expected[0])


@pytest.mark.parametrize("make", [lambda n, m: torch.eye(n, m), lambda n, m: torch.arange(n, m * 3, m) * 2.0])
def test_a_graph_of_symbolic_numbers_alone_traces_on_their_shape_env(make):
    # No tensor input to take the fake mode from: a static mode met the SymInts (op_db's eye
    # and arange after their sizes went symbolic: unhashable SymInts, a torch arg-parser assert).
    env = ShapeEnv()
    gm = torch.fx.symbolic_trace(make)
    for placeholder, hint, name in zip(gm.graph.find_nodes(op="placeholder"), (3, 4), "nm"):
        placeholder.meta["example_value"] = env.scalar(hint, name)
    compiled = aot_module_simplified(gm, [3, 4], fw_compiler=lambda g, _: g.forward)
    for n, m in ((3, 4), (0, 2), (2, 5)):
        torch.testing.assert_close(compiled(n, m), make(n, m))
