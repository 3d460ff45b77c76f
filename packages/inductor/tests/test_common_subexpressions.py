"""Values computed once: duplicate pure nodes of an ATen graph merged before lowering
(passes/common_subexpressions.py), and a lazy value read by an extern and by the output
realized into one buffer (graph.realize). Compiled results match eager."""

from __future__ import annotations

import operator
import sys

import pytest
import torch
import torch.fx

import inductor
from conftest import assert_same, assert_same_gradients, backend_options, traced
from inductor.passes.common_subexpressions import merge_common_subexpressions

aten = torch.ops.aten
ensure_meta_vals = sys.modules["inductor.compile_fx"].ensure_meta_vals


def _graph(build):
    """An ATen graph from `build(graph, call)`, where `call(op, *args)` adds a node."""
    graph = torch.fx.Graph()

    def call(op, *args, **kwargs):
        return graph.call_function(op, args, kwargs)

    outputs = build(graph, call)
    graph.output(tuple(outputs))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def normalized_twice(graph, call):
    """Layer norm's normalized input, once for the forward's output and once more (as the joint
    trace's backward decomposition recomputes it) to be saved."""
    x = graph.placeholder("x")
    stats = call(aten.var_mean.correction, x, [1], correction=0, keepdim=True)
    var, mean = call(operator.getitem, stats, 0), call(operator.getitem, stats, 1)
    rstd = call(aten.rsqrt.default, call(aten.add.Tensor, var, 1e-5))
    first = call(aten.mul.Tensor, call(aten.sub.Tensor, x, mean), rstd)
    again = call(aten.mul.Tensor, call(aten.sub.Tensor, x, mean), rstd)
    return [call(aten.mul.Tensor, first, 2.0), again]


def test_duplicate_nodes_merge_and_the_graph_matches_eager():
    gm = _graph(normalized_twice)
    x = torch.randn(6, 32)
    expected = _graph(normalized_twice)(x)
    ensure_meta_vals(gm, [x])
    assert merge_common_subexpressions(gm) == 2  # the second sub and mul
    compiled = inductor.compile_aten_graph(gm, [x])
    assert compiled.kernel_count == 1  # the saved value comes out of the norm's own kernel
    assert_same(compiled(x), expected)
    x = torch.randn(6, 32)
    assert_same(compiled(x), _graph(normalized_twice)(x))


def test_constants_of_another_type_or_sign_do_not_merge():
    def build(graph, call):
        x = graph.placeholder("x")
        return [call(aten.add.Tensor, x, 1), call(aten.add.Tensor, x, 1.0), call(aten.add.Tensor, x, True),
                call(aten.mul.Tensor, x, 0.0), call(aten.mul.Tensor, x, -0.0)]

    gm = _graph(build)
    assert merge_common_subexpressions(gm) == 0
    x = torch.arange(6)
    assert_same(inductor.compile_aten_graph(gm, [x])(x), _graph(build)(x))


def test_random_draws_and_distinct_outputs_do_not_merge():
    def build(graph, call):
        x = graph.placeholder("x")
        return [call(aten.rand_like.default, x), call(aten.rand_like.default, x),
                call(aten.sin.default, x), call(aten.sin.default, x)]

    gm = _graph(build)
    assert merge_common_subexpressions(gm) == 0
    first, second, sin_a, sin_b = gm(torch.randn(5))
    assert not torch.equal(first, second)
    assert sin_a is not sin_b


@pytest.mark.parametrize("rows", [16, 24])
def test_copy_read_by_a_matmul_and_saved_is_computed_once(rows, device):
    """Attention's output heads: `clone(permute(o))` feeds the projection matmul and is also an
    output (saved for the backward)."""
    def fn(o, w):
        heads = aten.clone.default(aten.permute.default(o, [1, 0, 2]), memory_format=torch.contiguous_format)
        flat = aten.view.default(heads, [rows, 32])
        return aten.mm.default(flat, w), aten.permute.default(flat, [1, 0])

    gm = torch.fx.symbolic_trace(fn)
    o, w = torch.randn(4, rows, 8, device=device), torch.randn(32, 16, device=device)
    compiled = inductor.compile_aten_graph(gm, [o, w], options=backend_options())
    assert compiled.kernel_count == 1
    for _ in range(2):
        assert_same(compiled(o, w), fn(o, w), rtol=1e-4, atol=1e-4)
        o, w = torch.randn_like(o), torch.randn_like(w)


def test_layer_norm_training_matches_eager_gradients(device):
    pytest.importorskip("aot_autograd")
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.LayerNorm(32), torch.nn.Linear(32, 8)).to(device)
    for batch in (6, 9):  # a new size compiles again
        x = torch.randn(batch, 16, device=device, requires_grad=True)
        compiled = inductor.compile_fx(traced(model), [x], options=backend_options())
        assert_same_gradients(compiled, model, x, rtol=1e-4, atol=1e-5)
