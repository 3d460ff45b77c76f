"""A region with autocast turned off inside a model run under autocast (HF's rotary embeddings
compute `inv_freq @ positions` in float32 that way): compiled results, dtypes and gradients
equal eager's. The compiled ATen graphs already hold autocast's casts, so running them under
the caller's autocast cast that float32 matmul to bfloat16 again: silently wrong values with
aot_eager, and on inductor kernels reading bfloat16 data as float32 (a Triton JIT error on GPU).
"""

from __future__ import annotations

import pytest
import torch

import compiler


def rotary_like(x, w, inv_freq, positions):
    h = x @ w  # under the caller's autocast: bfloat16
    with torch.autocast("cpu", enabled=False):
        freqs = inv_freq.float()[:, None] @ positions.float()[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos()
    return h * cos.to(h.dtype)[: h.shape[0], : h.shape[1]], cos


def _inputs(n):
    x = torch.randn(n, 16, requires_grad=True)
    w = torch.randn(16, 16, requires_grad=True)
    return x, w, torch.rand(n), torch.arange(8, dtype=torch.int64)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_autocast_disabled_region_matches_eager(backend):
    compiled = compiler.compile(rotary_like, backend=backend)
    for n in (8, 8, 12):  # first call, a cache hit with new values, another size
        args = _inputs(n)
        twin = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
        with torch.autocast("cpu", dtype=torch.bfloat16):
            expected = rotary_like(*args)
            actual = compiled(*twin)
        for e, a in zip(expected, actual):
            assert a.dtype == e.dtype
            torch.testing.assert_close(a, e)
        expected[0].float().sum().backward()
        actual[0].float().sum().backward()
        for e, a in zip(args[:2], twin[:2]):
            torch.testing.assert_close(a.grad, e.grad)
