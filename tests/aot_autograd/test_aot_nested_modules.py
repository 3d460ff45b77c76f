"""Gradients through capture + aot_autograd's `aot_eager` match eager for a module tree with
containers (Sequential, ModuleDict, ModuleList), buffers and a property. Lives here, not in
capture's package tests, because it needs aot_autograd installed next to capture."""

from __future__ import annotations

import torch
from torch import nn

import aot_autograd
import capture


class Block(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.proj = nn.Linear(width, width)
        self.register_buffer("scale", torch.full((width,), 0.5))

    @property
    def width(self):
        return self.proj.in_features

    def forward(self, x):
        return x + self.proj(self.norm(x)) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())
        self.heads = nn.ModuleDict({"a": nn.Linear(8, 2), "b": nn.Linear(8, 3)})
        self.extra = nn.ModuleList([nn.ReLU(), nn.GELU()])

    def forward(self, x):
        x = self.blocks(x)
        for act in self.extra:
            x = act(x)
        return {name: head(x) for name, head in self.heads.items()}, self.blocks[0].width


def test_gradients_match_eager_through_aot_eager():
    net = Net()
    reference = Net()
    reference.load_state_dict(net.state_dict())
    compiled = capture.optimize(net, aot_autograd.aot_eager)
    x = torch.randn(4, 8, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_()
    out, width = compiled(x)
    ref, ref_width = reference(x_ref)
    assert width == ref_width
    sum(v.sum() for v in out.values()).backward()
    sum(v.sum() for v in ref.values()).backward()
    torch.testing.assert_close(x.grad, x_ref.grad)
    for (name, p), q in zip(net.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=name)
