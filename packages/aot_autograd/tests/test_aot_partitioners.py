"""Both partitioners give eager's gradients; min-cut saves no more bytes than the default
partition, saves fewer where cheap ops can be recomputed, and never recomputes matmuls,
convolutions or reductions."""

from __future__ import annotations

import pytest
import torch

from aot_autograd import aot_module_simplified, default_decompositions, default_partition, min_cut_rematerialization_partition
from aot_autograd.functionalization.op_semantics import is_view
from aot_autograd.partitioners import saved_tensor_bytes
from aot_testing import functions_graph, graph_of, recording_compiler

PARTITIONERS = {"default": default_partition, "min_cut": min_cut_rematerialization_partition}


class FeedForward(torch.nn.Module):
    """LayerNorm -> Linear -> GELU -> Linear with a residual: pointwise-heavy, as in transformers."""

    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(16)
        self.up = torch.nn.Linear(16, 64)
        self.down = torch.nn.Linear(64, 16)

    def forward(self, x):
        return (x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))) * 0.5),)


class ConvBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # No bias, as in ResNets: batch norm cancels it, so its true gradient is zero and the
        # computed one is rounding noise that no tolerance compares meaningfully.
        self.conv = torch.nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(4)

    def forward(self, x):
        return (torch.relu(self.bn(self.conv(x)) + x),)


class PointwiseChain(torch.nn.Module):
    """Pointwise ops only: every backward reader can recompute its inputs inline."""

    def forward(self, x):
        h = torch.sin(x) * 2
        return (torch.tanh(h) * torch.sigmoid(h),)


MODELS = {
    "feed_forward": (FeedForward, lambda: torch.randn(8, 16)),
    "pointwise_chain": (PointwiseChain, lambda: torch.randn(8, 16)),
    "conv_block": (ConvBlock, lambda: torch.randn(2, 4, 6, 6)),
}
HEAVY = {torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.convolution.default}


def _compile(model_name, partitioner, decompose=False):
    make_model, make_input = MODELS[model_name]
    torch.manual_seed(0)
    model, x = make_model(), make_input().requires_grad_()
    graphs = []
    compiled = aot_module_simplified(
        graph_of(model),
        [x],
        recording_compiler(graphs),
        partition_fn=PARTITIONERS[partitioner],
        decompositions=default_decompositions() if decompose else None,
    )
    return model, x, compiled, graphs


@pytest.mark.parametrize("decompose", [False, True], ids=["aten", "decomposed"])
@pytest.mark.parametrize("partitioner", PARTITIONERS)
@pytest.mark.parametrize("model_name", MODELS)
def test_partitioned_gradients_match_eager(model_name, partitioner, decompose):
    model, x, compiled, _ = _compile(model_name, partitioner, decompose)
    params = [x, *model.parameters()]
    expected = torch.autograd.grad(model(x)[0].square().sum(), params)
    actual = torch.autograd.grad(compiled(x)[0].square().sum(), params)
    torch.testing.assert_close(actual, expected)


def angle_and_scale(x, y):
    # angle's gradient for a real input is zeros_like(x): the tangents do not reach it.
    return (torch.angle(x), y * 2)


@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_gradients_the_tangents_do_not_reach_match_eager(partitioner):
    torch.manual_seed(0)
    example = [torch.randn(5, requires_grad=True), torch.randn(3, requires_grad=True)]
    compiled = aot_module_simplified(
        functions_graph(angle_and_scale), example, recording_compiler([]), partition_fn=PARTITIONERS[partitioner],
        decompositions=default_decompositions(),
    )
    for _ in range(2):  # first call, then fresh values
        inputs = [torch.randn(5, requires_grad=True), torch.randn(3, requires_grad=True)]
        cotangents = [torch.randn(5), torch.randn(3)]
        actual = torch.autograd.grad(compiled(*inputs), inputs, cotangents)
        expected = torch.autograd.grad(angle_and_scale(*inputs), inputs, cotangents)
        torch.testing.assert_close(actual, expected)


def _saved_activation_bytes(model_name, partitioner, decompose):
    model, x, compiled, graphs = _compile(model_name, partitioner, decompose)
    compiled(x)[0].sum().backward()
    return saved_tensor_bytes(*graphs).activations


@pytest.mark.parametrize("decompose", [False, True], ids=["aten", "decomposed"])
@pytest.mark.parametrize("model_name", MODELS)
def test_min_cut_saves_no_more_than_default(model_name, decompose):
    assert _saved_activation_bytes(model_name, "min_cut", decompose) <= _saved_activation_bytes(model_name, "default", decompose)


def test_min_cut_recomputes_pointwise_ops_to_save_memory():
    assert _saved_activation_bytes("pointwise_chain", "min_cut", True) < _saved_activation_bytes("pointwise_chain", "default", True)


def test_min_cut_saves_what_the_backward_matmuls_read():
    # Recomputing a matmul's operand (a Linear's input, the GELU output) in the backward would
    # cost a kernel writing it to memory again: it is saved instead.
    model, x, compiled, graphs = _compile("feed_forward", "min_cut", decompose=True)
    compiled(x)[0].sum().backward()
    backward = graphs[1].graph
    from_tangents = {n for n in backward.nodes if n.op == "placeholder" and n.name.startswith("tangent")}
    for node in backward.nodes:
        if node not in from_tangents and any(a in from_tangents for a in node.all_input_nodes):
            from_tangents.add(node)
    for node in backward.nodes:
        if node.target in HEAVY:
            for operand in node.all_input_nodes:
                while operand.op == "call_function" and is_view(operand.target):
                    operand = operand.args[0]
                assert operand.op == "placeholder" or operand in from_tangents, f"{operand.format_node()} recomputed for {node}"


@pytest.mark.parametrize("model_name", MODELS)
def test_min_cut_never_recomputes_heavy_ops(model_name):
    counts = {}
    for partitioner in PARTITIONERS:
        model, x, compiled, graphs = _compile(model_name, partitioner, decompose=True)
        compiled(x)[0].sum().backward()
        counts[partitioner] = sum(n.target in HEAVY for n in graphs[1].graph.nodes)
    assert counts["min_cut"] == counts["default"]
