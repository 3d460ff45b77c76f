"""Graph passes before aot_autograd: sdpa masks that constants decide are folded away (no mask,
or is_causal=True), masks that depend on inputs or are not all-attending/causal stay; compiled
results match eager either way."""

from __future__ import annotations

import sys

import pytest
import torch
import torch.fx
import torch.nn.functional as F

import inductor

pytest.importorskip("aot_autograd")

compile_fx_module = sys.modules["inductor.compile_fx"]
L = 8  # query and key length


def _causal(call):
    """transformers' causal mask: kv_idx <= q_idx over aranges, expanded over the batch."""
    rows = call(torch.arange, L)[:, None]
    columns = call(torch.arange, L)[None, :]
    return (columns <= rows)[None, None].expand(2, -1, L, L)


def _additive(call, allowed, blocked_value):
    return call(torch.where, allowed, call(torch.zeros, ()), call(torch.full, (), blocked_value))


# Masks built from constants only: (call, q) -> mask, where `call(fn, *args)` records a factory call.
FOLDED = {
    "bool all-true": lambda call, q: call(torch.ones, 2, 1, L, L, dtype=torch.bool),
    "bool all-true from arange >= 0": lambda call, q: (call(torch.arange, L)[None, None, :, None] >= 0).expand(2, -1, L, L),
    "float all-zero": lambda call, q: call(torch.zeros, 1, 1, L, L),
    "bool causal": lambda call, q: _causal(call),
    "bool causal by tril": lambda call, q: call(torch.ones, L, L, dtype=torch.bool).tril(),
    "float causal -inf": lambda call, q: _additive(call, _causal(call), float("-inf")),
    "float causal finfo.min": lambda call, q: _additive(call, _causal(call), torch.finfo(torch.float32).min),
}

# Masks that must reach sdpa: not all-attending nor causal, or not decided by constants.
KEPT = {
    "bool causal with diagonal masked": lambda call, q: call(torch.ones, L, L, dtype=torch.bool).tril(-1) | (
        call(torch.arange, L)[:, None] == 0),
    "bool anti-causal": lambda call, q: call(torch.ones, L, L, dtype=torch.bool).triu(),
    "float alibi-like bias": lambda call, q: -(call(torch.arange, L)[None, :] - call(torch.arange, L)[:, None]).abs().float(),
    "float causal with a finite blocked value": lambda call, q: _additive(call, _causal(call), -1e4),
    "bool all-true sized from the input": lambda call, q: call(torch.ones, q.size(-2), q.size(-2), dtype=torch.bool),
    "bool all-true through a random op": lambda call, q: call(torch.rand, L, L) >= 0,
}


def _eager_call(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def _attention(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask) * 2


def _node_of(value):
    return value.node if isinstance(value, torch.fx.Proxy) else value


def _graph_of(build_mask) -> torch.fx.GraphModule:
    """The graph capture records for `_attention(q, k, v, build_mask(...))`: factory calls
    appear as calls (symbolic_trace would run them and store their results)."""
    graph = torch.fx.Graph()
    tracer = torch.fx.proxy.GraphAppendingTracer(graph)
    q, k, v = (torch.fx.Proxy(graph.placeholder(name), tracer) for name in "qkv")

    def call(fn, *args, **kwargs):
        args, kwargs = torch.fx.node.map_aggregate((args, kwargs), _node_of)
        return torch.fx.Proxy(graph.call_function(fn, args, kwargs), tracer)

    out = _attention(q, k, v, build_mask(call, q))
    graph.output((out.node,))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


@pytest.fixture
def aten_graphs(monkeypatch):
    """The ATen graphs compile_fx hands to inductor."""
    seen = []

    def recording(gm, inputs, **kwargs):
        seen.append(gm)
        return compile_aten_graph(gm, inputs, **kwargs)

    compile_aten_graph = compile_fx_module.compile_aten_graph
    monkeypatch.setattr(compile_fx_module, "compile_aten_graph", recording)
    return seen


def _attention_calls(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    return [n for n in gm.graph.nodes if n.op == "call_function" and "scaled_dot_product" in str(n.target)]


def _has_mask(node: torch.fx.Node) -> bool:
    """Whether the call passes a mask (`attn_mask`, or `attn_bias` of the CUDA kernels)."""
    names = [a.name for a in node.target._schema.arguments]
    arguments = {**dict(zip(names, node.args)), **node.kwargs}
    return arguments.get("attn_mask", arguments.get("attn_bias")) is not None


def _compile_and_compare(build_mask):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, L, 16) for _ in range(3))
    expected = _attention(q, k, v, build_mask(_eager_call, q))
    compiled = inductor.compile_fx(_graph_of(build_mask), [q, k, v])
    with torch.no_grad():
        torch.testing.assert_close(compiled(q, k, v)[0], expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", sorted(FOLDED))
def test_constant_mask_folded_matches_eager(case, aten_graphs):
    _compile_and_compare(FOLDED[case])
    calls = [n for gm in aten_graphs for n in _attention_calls(gm)]
    assert calls and not any(_has_mask(n) for n in calls)


@pytest.mark.parametrize("case", ["bool all-true", "bool causal"])
def test_constant_mask_folded_gradients_match_eager(case):
    build_mask = FOLDED[case]
    q, k, v = (torch.randn(2, 3, L, 16, requires_grad=True) for _ in range(3))
    compiled = inductor.compile_fx(_graph_of(build_mask), [q, k, v])
    ours = torch.autograd.grad(compiled(q, k, v)[0].pow(2).sum(), (q, k, v))
    expected = torch.autograd.grad(_attention(q, k, v, build_mask(_eager_call, q)).pow(2).sum(), (q, k, v))
    torch.testing.assert_close(ours, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", sorted(KEPT))
def test_mask_not_decided_by_constants_is_kept(case, aten_graphs):
    if case.endswith("random op"):
        # The mask is all-true, but deciding so would draw random numbers at compile time.
        torch.manual_seed(0)
    _compile_and_compare(KEPT[case])
    calls = [n for gm in aten_graphs for n in _attention_calls(gm)]
    assert calls and all(_has_mask(n) for n in calls)


def test_mask_from_an_input_is_kept(aten_graphs):
    q, k, v = (torch.randn(2, 3, L, 16) for _ in range(3))
    mask = torch.ones(L, L, dtype=torch.bool)
    graph = torch.fx.symbolic_trace(lambda q, k, v, mask: (_attention(q, k, v, mask),))
    compiled = inductor.compile_fx(graph, [q, k, v, mask])
    flipped = torch.rand(L, L) > 0.5
    flipped[:, 0] = True  # every query attends somewhere, so eager has no NaN rows
    with torch.no_grad():
        torch.testing.assert_close(compiled(q, k, v, flipped)[0], _attention(q, k, v, flipped), rtol=1e-4, atol=1e-5)
    assert all(_has_mask(n) for gm in aten_graphs for n in _attention_calls(gm))


def test_causal_folding_drops_the_mask_subgraph():
    gm = _graph_of(FOLDED["bool causal"])
    assert inductor.passes.fold_attention_masks(gm) == 1
    (call,) = _attention_calls(gm)
    assert call.kwargs.get("is_causal") is True and call.kwargs.get("attn_mask") is None
    assert [n.op for n in gm.graph.nodes] == ["placeholder"] * 3 + ["call_function"] * 2 + ["output"]
