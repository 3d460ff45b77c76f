"""HF `generate()` with a compiled forward, as users speed up decoding: greedy search over a
padded batch, with the dynamic KV cache (it grows by one position per step: the graph goes
dynamic) and the static one (`cache_implementation="static"`: preallocated buffers written in
place through index_copy_, HF's recommended setup for torch.compile). The tokens and every
step's scores are compared with eager's, for two prompts: the second call, at another prompt
length, reuses or extends what the first compiled. Random weights, nothing downloaded."""

from __future__ import annotations

import os

import pytest
import torch

import compiler

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")


def _llama():
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, vocab_size=100, max_position_embeddings=128)
    return transformers.LlamaForCausalLM(config).eval()


def _gpt2():
    config = transformers.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=100, n_positions=128,
                                     bos_token_id=1, eos_token_id=2)
    return transformers.GPT2LMHeadModel(config).eval()


MODELS = {"llama": _llama, "gpt2": _gpt2}


def _generate(model, ids, mask, cache):
    options = dict(max_new_tokens=10, do_sample=False, output_scores=True, return_dict_in_generate=True, pad_token_id=0)
    if cache == "static":
        options["cache_implementation"] = "static"
    with torch.no_grad():
        return model.generate(ids, attention_mask=mask, **options)


@pytest.mark.parametrize("cache", ["dynamic", "static"])
@pytest.mark.parametrize("name", MODELS)
def test_greedy_generation_matches_eager(name, cache):
    torch.manual_seed(0)
    eager = MODELS[name]()
    ours = MODELS[name]()
    ours.load_state_dict(eager.state_dict())
    ours.forward = compiler.compile(ours.forward, backend="inductor")
    ids = torch.randint(3, 100, (2, 7))
    mask = torch.ones_like(ids)
    mask[0, :2] = 0  # the first prompt is left-padded
    for length in (7, 5):
        expected = _generate(eager, ids[:, :length], mask[:, :length], cache)
        actual = _generate(ours, ids[:, :length], mask[:, :length], cache)
        assert torch.equal(actual.sequences, expected.sequences), f"prompt length {length}"
        for step, (a, e) in enumerate(zip(actual.scores, expected.scores)):
            torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-5, msg=lambda m: f"step {step}, prompt {length}: {m}")
