"""In-kernel random numbers: not eager's stream, so checked by their distribution and consistency."""

from __future__ import annotations

import torch

from conftest import compile_aten

aten = torch.ops.aten


def test_rand_is_uniform_and_seeded_by_torch(device):
    compiled = compile_aten(lambda x: (aten.rand_like.default(x),), [torch.empty(400, 500, device=device)])
    x = torch.empty(400, 500, device=device)
    torch.manual_seed(0)
    first = compiled(x)[0]
    torch.manual_seed(0)
    again = compiled(x)[0]
    other = compiled(x)[0]
    assert torch.equal(first, again) and not torch.equal(first, other)
    assert 0 <= first.min() and first.max() < 1
    assert abs(first.mean().item() - 0.5) < 0.01 and abs(first.var().item() - 1 / 12) < 0.005


def test_randn_is_standard_normal(device):
    compiled = compile_aten(lambda x: (aten.randn_like.default(x),), [torch.empty(300, 400, device=device)])
    out = compiled(torch.empty(300, 400, device=device))[0]
    assert abs(out.mean().item()) < 0.02 and abs(out.std().item() - 1) < 0.02


def test_native_dropout_keeps_and_scales_like_eager(device):
    x = torch.randn(256, 300, device=device)
    compiled = compile_aten(lambda x: aten.native_dropout.default(x, 0.3, True), [x])
    out, mask = compiled(x)
    assert mask.dtype == torch.bool
    assert abs(mask.float().mean().item() - 0.7) < 0.01
    torch.testing.assert_close(out, torch.where(mask, x / 0.7, torch.zeros_like(x)))
