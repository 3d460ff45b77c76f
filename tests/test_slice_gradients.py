"""Writes through slices, and the gradients of slices and of a select, through
compiler.compile with inductor: inductor lowers their slice_scatter and select_scatter as
Pointwise (packages/inductor/tests/test_slice_scatter.py tests the lowerings alone)."""

from __future__ import annotations

import torch

import compiler


def test_slice_writes_and_gradients_at_new_sizes_match_eager():
    """Through compiler.compile: a write through a slice, and the gradients of slices and of a
    select, on the first call, a cache hit with new values and new sizes (dynamic)."""
    def fn(x, w):
        y = x * w
        y[:, 1:-1] = y[:, 1:-1] * 3
        half = x.shape[1] // 2
        return torch.cat([-y[:, half:], y[:, :half]], 1).sin() + y[:, -1].unsqueeze(1)

    compiled = compiler.compile(fn, backend="inductor")
    for n in (8, 8, 12, 16):
        x = torch.randn(3, n, requires_grad=True)
        w = torch.randn(n, requires_grad=True)
        x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
        out, expected = compiled(x, w), fn(x2, w2)
        torch.testing.assert_close(out, expected)
        g = torch.randn_like(out)
        out.backward(g)
        expected.backward(g)
        torch.testing.assert_close(x.grad, x2.grad)
        torch.testing.assert_close(w.grad, w2.grad)
