"""Training through `compiler.compile(backend="aot_eager")` matches eager: captured graphs go
through aot_autograd's joint tracing, functionalization and partitioning, and several
optimizer steps give eager's losses, gradients, parameters and buffers.

Hugging Face models (small configs, random weights) run in train mode, dropout included,
under the same seeds as eager. Their losses are computed outside the compiled model.
"""

from __future__ import annotations

import copy
import os

import pytest
import torch

import compiler

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.ReLU(), torch.nn.Linear(32, 3))

    def forward(self, x):
        return self.layers(x)


class ConvBatchNormDropout(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.drop = torch.nn.Dropout(0.2)
        self.head = torch.nn.Linear(8, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.head(self.drop(y.mean((2, 3))))


def _mean_square(model, x):
    return model(x).square().mean()


def _small_models():
    return {
        "mlp": (MLP, lambda: (torch.randn(6, 12),), _mean_square),
        "conv_batchnorm_dropout": (ConvBatchNormDropout, lambda: (torch.randn(4, 3, 8, 8),), _mean_square),
    }


def _token_loss(model, ids):
    logits = model(input_ids=ids).logits
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), ids.flatten())


def _hf_models():
    transformers = pytest.importorskip("transformers")
    vocab = 96
    tokens = lambda: (torch.randint(0, vocab, (2, 12)),)
    gpt2 = transformers.GPT2Config(
        n_layer=2, n_embd=32, n_head=4, vocab_size=vocab, n_positions=32, bos_token_id=0, eos_token_id=0, use_cache=False
    )
    bert = transformers.BertConfig(
        num_hidden_layers=2, hidden_size=32, num_attention_heads=4, intermediate_size=64, vocab_size=vocab,
        max_position_embeddings=32,
    )
    resnet = transformers.ResNetConfig(
        num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic", num_labels=5
    )
    return {
        "gpt2": (lambda: transformers.GPT2LMHeadModel(gpt2), tokens, _token_loss),
        "bert": (lambda: transformers.BertForMaskedLM(bert), tokens, _token_loss),
        "resnet": (
            lambda: transformers.ResNetForImageClassification(resnet),
            lambda: (torch.randn(2, 3, 32, 32), torch.randint(0, 5, (2,))),
            lambda model, images, labels: torch.nn.functional.cross_entropy(model(pixel_values=images).logits, labels),
        ),
    }


def _train_side_by_side(make_model, make_batch, loss_of, backend, steps=3):
    torch.manual_seed(0)
    eager = make_model().train()
    model = copy.deepcopy(eager)
    compiled = compiler.compile(model, backend=backend)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.05) for m in (eager, model)]
    for step in range(steps):
        batch = make_batch()
        torch.manual_seed(step)
        expected = loss_of(eager, *batch)
        torch.manual_seed(step)
        actual = loss_of(compiled, *batch)
        torch.testing.assert_close(actual, expected, **TOLERANCE)
        expected.backward()
        actual.backward()
        for (name, e), a in zip(eager.named_parameters(), model.parameters()):
            torch.testing.assert_close(a.grad, e.grad, msg=lambda m: f"{name}: {m}", **TOLERANCE)
        for optimizer in optimizers:
            optimizer.step()
            optimizer.zero_grad()
        for (name, e), a in zip(eager.named_buffers(), model.buffers()):
            torch.testing.assert_close(a, e, msg=lambda m: f"{name}: {m}", **TOLERANCE)


@pytest.mark.parametrize("backend", ["aot_eager", "aot_eager_decomp_partition"])
@pytest.mark.parametrize("model_name", _small_models())
def test_small_models_train_as_in_eager(model_name, backend):
    compiler.reset()
    _train_side_by_side(*_small_models()[model_name], backend)


@pytest.mark.slow
@pytest.mark.parametrize("model_name", ["gpt2", "bert", "resnet"])
def test_hf_models_train_as_in_eager(model_name):
    compiler.reset()
    _train_side_by_side(*_hf_models()[model_name], "aot_eager", steps=2)


def test_no_grad_inference_matches_eager():
    compiler.reset()
    torch.manual_seed(0)
    model = ConvBatchNormDropout().eval()
    compiled = compiler.compile(model, backend="aot_eager")
    with torch.no_grad():
        for _ in range(2):
            x = torch.randn(4, 3, 8, 8)
            torch.testing.assert_close(compiled(x), model(x), **TOLERANCE)
