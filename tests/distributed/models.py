"""The small models the distributed tests train: an MLP, a stack of residual MLP blocks and
a 2-layer GPT-2 built from its config (random weights, no dropout, so eager and compiled runs
compare exactly). `batch(generator, size)` makes one step's inputs: `size` rows for the MLPs,
a sequence length for GPT-2 (None: the model's usual size). `blocks(model)` names the
ModuleList FSDP shards block by block."""

from __future__ import annotations

import torch
from torch import nn


def mlp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))

    def batch(generator, rows=None):
        return (torch.randn(rows or 8, 16, generator=generator),), {}

    def loss(output):
        return output.square().mean()

    return model, batch, loss


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(16, 32)
        self.down = nn.Linear(32, 16)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(x)))


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 16)
        self.layers = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        x = self.embed(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def residual_blocks():
    torch.manual_seed(0)

    def batch(generator, rows=None):
        return (torch.randn(rows or 4, 8, generator=generator),), {}

    def loss(output):
        return output.square().mean()

    return Blocks(), batch, loss


def gpt2():
    import transformers

    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=2, n_embd=32, n_head=2, vocab_size=96, n_positions=32,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    )  # fmt: skip
    model = transformers.GPT2LMHeadModel(config)

    def batch(generator, length=None):
        ids = torch.randint(0, 96, (2, length or 12), generator=generator)
        return (), {"input_ids": ids, "labels": ids, "use_cache": False}

    def loss(output):
        return output.loss

    return model, batch, loss


MODELS = {"mlp": mlp, "blocks": residual_blocks, "gpt2": gpt2}


def blocks(model: nn.Module) -> nn.ModuleList:
    return model.transformer.h if hasattr(model, "transformer") else model.layers
