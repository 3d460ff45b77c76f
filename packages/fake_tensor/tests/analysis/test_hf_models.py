"""infer_shapes on HF transformers models (config-built, random weights) with dynamic batch and
sequence length: symbolic logits shape against eager at random sizes, and the
`seq <= max_position_embeddings` constraint."""

from __future__ import annotations

import os
import random

import pytest
import sympy
import torch

from fake_tensor import ConstraintViolationError, Dim, TensorSpec, infer_shapes

transformers = pytest.importorskip("transformers")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

pytestmark = pytest.mark.slow

MAX_POSITIONS = 64


def _gpt2():
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=500, n_positions=MAX_POSITIONS)
    return transformers.GPT2LMHeadModel(config).eval()


def _bert():
    config = transformers.BertConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
        vocab_size=500, max_position_embeddings=MAX_POSITIONS,
    )
    return transformers.BertForMaskedLM(config).eval()


MODELS = {"gpt2": _gpt2, "bert": _bert}
SEQ = sympy.Symbol("seq", integer=True, positive=True)


@pytest.fixture(scope="module", params=sorted(MODELS))
def analysed(request):
    torch.manual_seed(0)
    model = MODELS[request.param]()
    with torch.no_grad():
        report = infer_shapes(model, TensorSpec((Dim("batch"), Dim("seq")), torch.long))
    return model, report


def test_logits_shape_matches_eager_at_random_sizes(analysed):
    model, report = analysed
    assert report.shape(report.outputs.logits) == "(batch, seq, 500)"
    for _ in range(2):
        batch, seq = random.randint(2, 4), random.randint(2, MAX_POSITIONS)
        with torch.no_grad():
            real = model(torch.randint(0, 500, (batch, seq))).logits
        assert report.evaluate_shape(report.outputs.logits, batch=batch, seq=seq) == tuple(real.shape)


def test_gpt2_without_a_cache_or_mask_takes_the_traceable_path():
    # transformers 5.24 looks for packed sequences in the position ids when there is neither an
    # attention mask nor a cache, reading the data unless `is_tracing()`; the analysis must not.
    model = _gpt2()
    with torch.no_grad():
        report = infer_shapes(model, TensorSpec((Dim("batch"), Dim("seq")), torch.long), use_cache=False)
    batch, seq = random.randint(2, 4), random.randint(2, MAX_POSITIONS)
    with torch.no_grad():
        real = model(torch.randint(0, 500, (batch, seq)), use_cache=False).logits
    assert report.evaluate_shape(report.outputs.logits, batch=batch, seq=seq) == tuple(real.shape)
    assert any("seq <= 64" in str(c) for c in report.constraints)
    assert not torch.compiler.is_compiling()


def test_max_positions_constraint_is_found(analysed):
    _, report = analysed
    assert sympy.Le(SEQ, MAX_POSITIONS) in [c.condition for c in report.constraints]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_declaring_longer_sequences_than_positions_is_an_error(name):
    model = MODELS[name]()
    seq = Dim("seq", max=4 * MAX_POSITIONS)
    with pytest.raises(ConstraintViolationError, match=rf"seq must be <= {MAX_POSITIONS} \(.*allows up to {4 * MAX_POSITIONS}"):
        with torch.no_grad():
            infer_shapes(model, TensorSpec((Dim("batch"), seq), torch.long))
