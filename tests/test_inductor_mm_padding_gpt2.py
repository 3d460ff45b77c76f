"""GPT-2's LM head (vocab 1001, a misaligned matmul dimension) compiled with matmul padding on:
logits, their strides and every parameter's gradient match eager, and the 1001-wide matmul was
really padded. Lives here, not in inductor's package tests, because it needs `compiler`
(capture + aot_autograd) and transformers, which inductor's session does not install."""

from __future__ import annotations

import os

import pytest
import torch
import transformers

import compiler
from inductor.lowering import matmul_padding

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture
def padded_shapes(monkeypatch, tmp_path):
    """The shapes of the matmuls that were padded while the test lowered its graphs (in a cache
    of its own: graphs an earlier run left in the disk cache would not be lowered again)."""
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))
    found = []
    decide = matmul_padding.should_pad

    def recording(shape, device):
        padded = decide(shape, device)
        if padded:
            found.append(shape)
        return padded

    monkeypatch.setattr(matmul_padding, "should_pad", recording)
    return found


@pytest.mark.slow
def test_gpt2_lm_head_logits_and_gradients_match_eager(padded_shapes):
    config = transformers.GPT2Config(vocab_size=1001, n_embd=64, n_layer=2, n_head=2, n_positions=64,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config)
    ids = torch.randint(0, 1001, (2, 24))
    compiled = compiler.compile(model, options={"pad_mm": True})
    logits = compiled(ids).logits
    logits.pow(2).mean().backward()
    ours = {name: p.grad.clone() for name, p in model.named_parameters()}
    model.zero_grad()
    expected = model(ids).logits
    expected.pow(2).mean().backward()
    assert logits.stride() == expected.stride()
    torch.testing.assert_close(logits, expected, rtol=1e-4, atol=1e-4)
    for name, p in model.named_parameters():
        torch.testing.assert_close(ours[name], p.grad, rtol=1e-3, atol=1e-5, msg=name)
    assert any(1001 in (s.m, s.n, s.k) for s in padded_shapes)
