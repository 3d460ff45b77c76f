"""The small models the distributed tests train: an MLP and a 2-layer GPT-2 built from its
config (random weights, no dropout, so eager and compiled runs compare exactly)."""

from __future__ import annotations

import torch
from torch import nn


def mlp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))

    def batch(generator):
        return (torch.randn(8, 16, generator=generator),), {}

    def loss(output):
        return output.square().mean()

    return model, batch, loss


def gpt2():
    import transformers

    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=2, n_embd=32, n_head=2, vocab_size=96, n_positions=32,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    )  # fmt: skip
    model = transformers.GPT2LMHeadModel(config)

    def batch(generator):
        ids = torch.randint(0, 96, (2, 12), generator=generator)
        return (), {"input_ids": ids, "labels": ids, "use_cache": False}

    def loss(output):
        return output.loss

    return model, batch, loss


MODELS = {"mlp": mlp, "gpt2": gpt2}
