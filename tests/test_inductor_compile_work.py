"""Inductor's compile work grows with the distinct index expressions of a graph, not with the
number of passes over its bodies: HF vision models at a new image size timed out (120 s) on the
C++ backend while torch.compile compiled them in seconds.

Each case is a model's pattern, compiled by inductor and checked against eager on the first
call, a cache hit with fresh values and a new size (which compiles symbolic sizes), with a count
of the sympy work its compile does at the new size (the constructions of one function that was
repeated per pass), kept far below what the unmemoized passes did.
"""

from __future__ import annotations

import pytest
import sympy
import torch
import torch.nn.functional as F

import compiler


class PositionEmbeddings(torch.nn.Module):
    """ViT's: a class token, and a grid of patch positions interpolated (bicubic) to the image's
    grid, joined to the patches by cat."""

    def __init__(self, grid=2, dim=8):
        super().__init__()
        self.cls = torch.nn.Parameter(torch.randn(1, 1, dim))
        self.positions = torch.nn.Parameter(torch.randn(1, grid * grid + 1, dim))
        self.grid = grid

    def forward(self, patches):
        side, dim = int(patches.shape[1] ** 0.5), patches.shape[-1]
        grid = self.positions[:, 1:].reshape(1, self.grid, self.grid, dim).permute(0, 3, 1, 2)
        grid = F.interpolate(grid, size=(side, side), mode="bicubic", align_corners=False)
        grid = grid.permute(0, 2, 3, 1).view(1, -1, dim)
        embedded = torch.cat((self.positions[:, :1], grid), dim=1)
        tokens = torch.cat((self.cls.expand(patches.shape[0], -1, -1), patches), dim=1)
        return tokens + embedded


@pytest.fixture
def counted_min(monkeypatch, tmp_path):
    """Counts of sympy.Min constructions; a private inductor cache, so that every graph compiles."""
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))
    counts = {"Min": 0}
    original = sympy.Min.__new__

    def counting(cls, *args, **kwargs):
        counts["Min"] += 1
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(sympy.Min, "__new__", counting)
    return counts


def test_interpolated_position_embeddings_at_a_new_size(counted_min):
    # Each pass over a body (values, accesses, fusion, code generation) rebuilt every clamp of
    # the cat's and the bicubic taps' indices through every loader above it: 4210 Min at the new
    # size (9.6 s CPU), 67 once memoized (0.9 s).
    torch.manual_seed(0)
    model = PositionEmbeddings()
    compiled = compiler.compile(model, backend="inductor")
    with torch.no_grad():
        for side in (2, 2, 3):  # first call, cache hit with new values, new size
            counted_min["Min"] = 0
            patches = torch.randn(2, side * side, 8)
            torch.testing.assert_close(compiled(patches), model(patches))
    assert counted_min["Min"] < 400
