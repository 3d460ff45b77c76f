"""Hugging Face models (small configs, random weights) train through each backend as in
eager: GPT-2 and BERT in train mode (dropout on, same seeds), and a ResNet with BatchNorm.

The models are traced as one call (their Python control flow is beyond
`torch.fx.symbolic_trace`); aot_autograd's ATen tracer runs their code on fake tensors.
"""

from __future__ import annotations

import os

import pytest
import torch

from aot_testing import BACKENDS, Calling, graph_calling, train_side_by_side

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

VOCAB, SEQUENCE, BATCH = 96, 12, 2


def _gpt2():
    config = transformers.GPT2Config(
        n_layer=2, n_embd=32, n_head=4, vocab_size=VOCAB, n_positions=32, bos_token_id=0, eos_token_id=0
    )
    return transformers.GPT2LMHeadModel(config), _token_batch, lambda model, ids: [model(input_ids=ids, labels=ids).loss]


def _bert():
    config = transformers.BertConfig(
        num_hidden_layers=2, hidden_size=32, num_attention_heads=4, intermediate_size=64, vocab_size=VOCAB,
        max_position_embeddings=32,
    )
    return transformers.BertForMaskedLM(config), _token_batch, lambda model, ids: [model(input_ids=ids, labels=ids).loss]


def _resnet():
    config = transformers.ResNetConfig(
        num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic", num_labels=5
    )
    return (
        transformers.ResNetForImageClassification(config),
        lambda: (torch.randn(BATCH, 3, 32, 32), torch.randint(0, 5, (BATCH,))),
        lambda model, images, labels: [model(pixel_values=images, labels=labels).loss],
    )


def _token_batch():
    return (torch.randint(0, VOCAB, (BATCH, SEQUENCE)),)


MODELS = {"gpt2": _gpt2, "bert": _bert, "resnet": _resnet}


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("model_name", MODELS)
def test_training_steps_match_eager(model_name, backend):
    torch.manual_seed(0)
    model, make_batch, call = MODELS[model_name]()
    model.train()
    num_args = len(make_batch())
    train_side_by_side(
        Calling(model, call),
        lambda m: graph_calling(m, num_args),
        make_batch,
        BACKENDS[backend],
        loss=lambda outputs: outputs[0],
        steps=2,
        tolerance={"rtol": 1e-4, "atol": 1e-5},
    )
