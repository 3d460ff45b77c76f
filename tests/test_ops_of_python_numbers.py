"""Torch functions called on Python numbers alone (sizes read from a tensor): eager returns a
0-dim CPU tensor, and so must every backend, on the first call, on a cache hit and at a new size
(Longformer and LED compute their chunk count as `torch.div(seq_len, w, rounding_mode="trunc")`;
capture failed with an internal error, then inductor found no tensor to place its result)."""

from __future__ import annotations

import pytest
import torch

import compiler

CASES = {
    "div_trunc": lambda x: x * (torch.div(x.size(1), 4, rounding_mode="trunc") - 1),
    "div_floor": lambda x: torch.div(x.size(1), 3, rounding_mode="floor"),
    "true_div": lambda x: torch.div(x.size(1), 4),
    "mul_float": lambda x: torch.mul(x.size(0), 2.5) + x,
    "add_sizes": lambda x: torch.add(x.size(0), x.size(1)),
    "sub_then_tensor": lambda x: torch.sub(7, x.size(1)) * x.sum(),
}


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("case", CASES)
def test_matches_eager(case, backend):
    fn = CASES[case]
    compiled = compiler.compile(fn, backend=backend)
    for size in (12, 12, 21):  # first call, cache hit with new values, new size
        x = torch.randn(2, size)
        got, want = compiled(x), fn(x)
        assert (type(got), got.dtype, got.shape, got.device) == (type(want), want.dtype, want.shape, want.device)
        torch.testing.assert_close(got, want)
