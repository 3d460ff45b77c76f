"""HF models compiled through the inductor backend call scaled_dot_product_attention as eager
does: transformers 5.17 builds an all-true (BERT) or causal (GPT-2) mask while compiling, which
inductor's graph pass folds away (packages/inductor/tests/test_graph_passes.py tests the pass)."""

from __future__ import annotations

import os
import sys

import pytest
import torch
import torch.fx

import compiler
import inductor  # noqa: F401  (inductor.compile_fx is patched below)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")
masking_utils = pytest.importorskip("transformers.masking_utils")
compile_fx_module = sys.modules["inductor.compile_fx"]


@pytest.fixture
def aten_graphs(monkeypatch):
    """The ATen graphs compile_fx hands to inductor."""
    seen = []
    compile_aten_graph = compile_fx_module.compile_aten_graph

    def recording(gm, inputs, **kwargs):
        seen.append(gm)
        return compile_aten_graph(gm, inputs, **kwargs)

    monkeypatch.setattr(compile_fx_module, "compile_aten_graph", recording)
    return seen


def _attention_calls(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    return [n for n in gm.graph.nodes if n.op == "call_function" and "scaled_dot_product" in str(n.target)]


def _has_mask(node: torch.fx.Node) -> bool:
    """Whether the call passes a mask (`attn_mask`, or `attn_bias` of the CUDA kernels)."""
    names = [a.name for a in node.target._schema.arguments]
    arguments = {**dict(zip(names, node.args)), **node.kwargs}
    return arguments.get("attn_mask", arguments.get("attn_bias")) is not None


HF_MODELS = {
    "bert": lambda transformers: transformers.BertModel(transformers.BertConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=128)),
    "gpt2": lambda transformers: transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_embd=32, n_layer=2, n_head=4, vocab_size=128, n_positions=64)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HF_MODELS))
def test_hf_model_inference_matches_eager_without_a_mask(name, aten_graphs, monkeypatch):
    """Eager passes no mask (BERT) or is_causal=True (GPT-2). While compiling, transformers 5.17
    builds the mask instead (all-true; kv_idx <= q_idx); later versions may skip it, so the skip
    is turned off here to test that case on any version. The mask must not reach the ATen graph."""
    for skip in ("_ignore_causal_mask_sdpa", "_ignore_bidirectional_mask_sdpa"):
        monkeypatch.setattr(masking_utils, skip, lambda *args, **kwargs: False)
    torch.manual_seed(0)
    model = HF_MODELS[name](transformers).eval()
    ids = torch.randint(0, 128, (2, 16))
    with torch.no_grad():
        expected = model(ids)[0]
        actual = compiler.compile(model, backend="inductor")(ids)[0]
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)
    calls = [n for gm in aten_graphs for n in _attention_calls(gm)]
    assert calls and not any(_has_mask(n) for n in calls)
