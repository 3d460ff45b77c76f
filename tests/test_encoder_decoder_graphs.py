"""HF encoder-decoder models (small configs, random weights) capture as one graph, as with
torch.compile: their decoder builds its cache from `config.get_text_config(decoder=True)`,
which deep-copies the config (capture.calls.copy_protocol). Compared with eager on fresh
inputs: a first call, new values, a new size."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

import compiler  # noqa: E402


def t5():
    return transformers.T5Model(transformers.T5Config(d_model=64, d_ff=128, num_layers=2, num_heads=4, vocab_size=128))


def bart():
    config = transformers.BartConfig(
        d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
        encoder_ffn_dim=128, decoder_ffn_dim=128, vocab_size=128, max_position_embeddings=64,
    )  # fmt: skip
    return transformers.BartModel(config)


def inputs(batch, length):
    ids = torch.randint(3, 128, (batch, length))
    return {"input_ids": ids, "decoder_input_ids": ids[:, : length // 2]}


def outputs_of(result):
    """The output's tensors, the cache's included, as a flat list."""
    cache = result.past_key_values
    tensors = [result.last_hidden_state, result.encoder_last_hidden_state]
    for part in (cache.self_attention_cache, cache.cross_attention_cache):
        for layer in part.layers:
            tensors += [layer.keys, layer.values]
    return tensors


@pytest.mark.parametrize("make_model", [t5, bart], ids=["T5Model", "BartModel"])
def test_encoder_decoder_model_is_one_graph(make_model):
    torch.manual_seed(0)
    model = make_model().eval()
    with torch.no_grad():
        explained = compiler.explain(model)(**inputs(2, 16))
        assert explained.graph_count == 1, str(explained)
        assert explained.graph_break_count == 0, str(explained)
        compiled = compiler.compile(model, backend="eager")
        for batch, length in ((2, 16), (2, 16), (3, 12), (3, 12)):
            arguments = inputs(batch, length)
            expected, actual = model(**arguments), compiled(**arguments)
            for a, e in zip(outputs_of(actual), outputs_of(expected), strict=True):
                torch.testing.assert_close(a, e)
    # The first entry, and one more for the new size; not one per call (guards on the ids
    # copy.deepcopy uses as memo keys once failed on every call).
    assert len(compiled._cache.entries) <= 2, [entry.guard.why for entry in compiled._cache.entries]
