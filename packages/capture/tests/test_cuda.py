"""The same captures on CUDA tensors (fake tensors then stand for cuda tensors; guards check
the device). Skipped where there is no CUDA device."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers import captures, check, compile_eager, run_and_compare

pytestmark = pytest.mark.gpu


def cuda(*shape):
    return torch.randn(*shape, device="cuda")


def test_function_on_cuda():
    def fn(x, y):
        return torch.softmax(x @ y.t(), dim=-1).sum(0), x.device

    check(fn, lambda: (cuda(4, 8), cuda(3, 8)))


def test_module_on_cuda_with_grads():
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16)).cuda()
    compiled = compile_eager(model)
    x = cuda(4, 8)
    compiled(x).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for got, expected in zip(grads, (p.grad for p in model.parameters())):
        torch.testing.assert_close(got, expected)


def test_device_change_recaptures():
    compiled = compile_eager(lambda x: x * 2)
    run_and_compare(compiled, lambda x: x * 2, (cuda(3),))
    run_and_compare(compiled, lambda x: x * 2, (torch.randn(3),))
    assert captures(compiled) == 2


def test_autocast_on_cuda():
    def fn(x, w):
        with torch.autocast("cuda", dtype=torch.float16):
            return x @ w

    compiled = check(fn, lambda: (cuda(8, 8), cuda(8, 8)))
    assert compiled(cuda(8, 8), cuda(8, 8)).dtype is torch.float16


def test_dynamic_sizes_on_cuda():
    compiled = compile_eager(lambda x: x.sum(0) * x.shape[0], dynamic=True)
    for rows in (3, 7):
        run_and_compare(compiled, lambda x: x.sum(0) * x.shape[0], (cuda(rows, 4),))
    assert captures(compiled) == 1
