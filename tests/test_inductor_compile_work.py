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
import inductor.sizes


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


class Windows(torch.nn.Module):
    """Swin's: pad to whole windows, attend within each window, merge the windows back, crop."""

    def __init__(self, dim=8, window=2):
        super().__init__()
        self.window = window
        self.qkv = torch.nn.Linear(dim, 3 * dim)

    def forward(self, x):
        batch, height, width, dim = x.shape
        w = self.window
        x = F.pad(x, (0, 0, 0, (w - width % w) % w, 0, (w - height % w) % w))
        hp, wp = x.shape[1], x.shape[2]
        windows = x.view(batch, hp // w, w, wp // w, w, dim).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, dim)
        q, k, v = self.qkv(windows).chunk(3, dim=-1)
        windows = torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v
        x = windows.view(batch, hp // w, wp // w, w, w, dim).permute(0, 1, 3, 2, 4, 5).reshape(batch, hp, wp, dim)
        return x[:, :height, :width, :].contiguous()


def _counting(monkeypatch, counts, owner, name):
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        counts[name] += 1
        return original(*args, **kwargs)

    counts[name] = 0
    monkeypatch.setattr(owner, name, counted)


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


def test_window_partition_at_a_new_size(monkeypatch, tmp_path):
    # A view's groups of dims grew until their size products matched, each comparison by
    # sympy.simplify (30 at the new size), and each load's index was expanded and its div/mod
    # pairs folded again at every pass (196 folds): 0 and 9 now.
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))
    counts: dict[str, int] = {}
    _counting(monkeypatch, counts, sympy, "simplify")
    _counting(monkeypatch, counts, inductor.sizes, "_fold_div_mod")
    torch.manual_seed(0)
    model = Windows()
    compiled = compiler.compile(model, backend="inductor")
    with torch.no_grad():
        for side in (4, 4, 7):  # first call, cache hit with new values, new size (padded)
            counts.update(dict.fromkeys(counts, 0))
            x = torch.randn(2, side, side, 8)
            torch.testing.assert_close(compiled(x), model(x))
    assert counts["simplify"] < 10 and counts["_fold_div_mod"] < 60, counts
