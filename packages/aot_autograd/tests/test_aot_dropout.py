"""Random ops draw what eager draws: under the same seed, dropout masks in the forward and
in the backward (which reuses the forward's mask, never redraws it) equal eager's."""

from __future__ import annotations

import pytest
import torch

from aot_autograd import aot_module_simplified, default_partition, min_cut_rematerialization_partition
from aot_testing import BACKENDS, functions_graph, recording_compiler
from fake_tensor import FakeTensorMode, ShapeEnv

PARTITIONERS = {"default": default_partition, "min_cut": min_cut_rematerialization_partition}


def dropout_twice(x, w):
    y = torch.nn.functional.dropout(x * w, p=0.5, training=True)
    return (torch.nn.functional.dropout(y.sin(), p=0.25, training=True).cos(),)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dropout_masks_and_gradients_match_eager(backend):
    x, w = torch.randn(64, 32), torch.randn(32, requires_grad=True)
    compiled = BACKENDS[backend](functions_graph(dropout_twice), [x, w])
    for seed in range(3):
        torch.manual_seed(seed)
        (expected,) = dropout_twice(x, w)
        (expected_grad,) = torch.autograd.grad(expected.sum(), w)
        torch.manual_seed(seed)
        (actual,) = compiled(x, w)
        (actual_grad,) = torch.autograd.grad(actual.sum(), w)
        torch.testing.assert_close(actual, expected)
        torch.testing.assert_close(actual_grad, expected_grad)


def _training_graphs(partitioner):
    """(forward, backward) graphs of `dropout_twice` after one training step."""
    graphs = []
    x, w = torch.randn(8, 4), torch.randn(4, requires_grad=True)
    compiled = aot_module_simplified(
        functions_graph(dropout_twice), [x, w], recording_compiler(graphs), partition_fn=PARTITIONERS[partitioner]
    )
    compiled(x, w)[0].sum().backward()
    return graphs


@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_backward_graph_draws_no_random_numbers(partitioner):
    forward, backward = _training_graphs(partitioner)
    random_ops = lambda gm: [n for n in gm.graph.nodes if n.op == "call_function" and torch.Tag.nondeterministic_seeded in getattr(n.target, "tags", ())]
    assert len(random_ops(forward)) == 2
    assert random_ops(backward) == []


@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_dropout_traces_as_native_dropout_and_its_backward_reads_a_bool_mask(partitioner):
    # On CPU, dropout would otherwise trace as bernoulli, div and mul, saving a float mask.
    forward, backward = _training_graphs(partitioner)
    targets = [n.target for n in forward.graph.nodes if n.op == "call_function"]
    assert targets.count(torch.ops.aten.native_dropout.default) == 2
    assert torch.ops.aten.bernoulli.p not in targets
    masks = [n for n in backward.graph.find_nodes(op="placeholder") if n.meta["val"].dtype == torch.bool]
    assert len(masks) == 2


def test_random_stream_after_compiled_call_continues_as_in_eager():
    x, w = torch.randn(16, 8), torch.randn(8, requires_grad=True)
    compiled = BACKENDS["aot_eager"](functions_graph(dropout_twice), [x, w])
    torch.manual_seed(0)
    dropout_twice(x, w)
    expected_next = torch.rand(4)
    torch.manual_seed(0)
    compiled(x, w)
    torch.testing.assert_close(torch.rand(4), expected_next)


def test_masks_match_eager_with_symbolic_shapes_and_decompositions():
    # With a ShapeEnv the Python dispatcher is on, and dropout reaches the tracer as
    # `native_dropout`: decomposing it would draw other numbers than eager's kernel.
    x, w = torch.randn(16, 8), torch.randn(8, requires_grad=True)
    gm = functions_graph(dropout_twice)
    mode = FakeTensorMode(shape_env=ShapeEnv())
    placeholders = list(gm.graph.find_nodes(op="placeholder"))
    placeholders[0].meta["example_value"] = mode.from_real(x, dynamic_dims=[0])
    placeholders[1].meta["example_value"] = mode.from_real(w)
    compiled = BACKENDS["aot_eager_decomp_partition"](gm, [x, w])
    for batch in (16, 5):
        x = torch.randn(batch, 8)
        torch.manual_seed(1)
        (expected,) = dropout_twice(x, w)
        torch.manual_seed(1)
        (actual,) = compiled(x, w)
        torch.testing.assert_close(actual, expected)
