"""Real models through `compiler.compile(backend="inductor")` on CPU (C++ kernels) match eager:
inference, and a training step whose loss and every gradient are compared. HF transformers
GPT-2, BERT, ResNet and ViT, built from tiny configs with random weights.

Training runs with dropout on, under the same seed as eager: random ops are aten calls in
graph order, so they draw eager's masks. BatchNorm (ResNet) updates its running stats in
place, which the comparison covers too.
"""

from __future__ import annotations

import copy
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

import compiler  # noqa: E402

pytestmark = pytest.mark.slow

VOCAB = 96


def _token_inputs():
    return {"input_ids": torch.randint(0, VOCAB, (2, 12))}


def _image_inputs():
    return {"pixel_values": torch.randn(2, 3, 32, 32)}


def _token_loss(output, inputs):
    ids = inputs["input_ids"]
    return torch.nn.functional.cross_entropy(output.logits.flatten(0, 1), ids.flatten())


def _class_loss(output, inputs):
    return torch.nn.functional.cross_entropy(output.logits, torch.arange(output.logits.shape[0]) % 10)


MODELS = {
    "gpt2": (lambda: transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=2, n_embd=32, n_head=4, vocab_size=VOCAB, n_positions=32)), _token_inputs, _token_loss),
    "bert": (lambda: transformers.BertForMaskedLM(transformers.BertConfig(
        num_hidden_layers=2, hidden_size=32, num_attention_heads=4, intermediate_size=64, vocab_size=VOCAB,
        max_position_embeddings=32)), _token_inputs, _token_loss),
    "resnet": (lambda: transformers.ResNetForImageClassification(transformers.ResNetConfig(
        embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic", num_labels=10)),
        _image_inputs, _class_loss),
    "vit": (lambda: transformers.ViTForImageClassification(transformers.ViTConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=32,
        patch_size=8, num_labels=10)), _image_inputs, _class_loss),
}


def _pair(name):
    """(model, an identical copy for eager, inputs, loss)."""
    build, inputs, loss = MODELS[name]
    torch.manual_seed(0)
    model = build()
    return model, copy.deepcopy(model), inputs(), loss


@pytest.mark.parametrize("name", sorted(MODELS))
def test_inference_matches_eager(name):
    model, reference, inputs, _ = _pair(name)
    compiled = compiler.compile(model.eval(), backend="inductor")
    with torch.no_grad():
        actual = compiled(**inputs).logits
        expected = reference.eval()(**inputs).logits
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_step_matches_eager_loss_gradients_and_buffers(name):
    model, reference, inputs, loss_of = _pair(name)
    compiled = compiler.compile(model.train(), backend="inductor")
    torch.manual_seed(1)
    loss = loss_of(compiled(**inputs), inputs)
    loss.backward()
    torch.manual_seed(1)
    expected = loss_of(reference.train()(**inputs), inputs)
    expected.backward()
    torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-6)
    for (param_name, p), q in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5, msg=param_name)
    for (buffer_name, b), c in zip(model.named_buffers(), reference.buffers()):
        torch.testing.assert_close(b, c, rtol=1e-5, atol=1e-6, msg=buffer_name)
