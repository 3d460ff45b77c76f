"""A pointwise Triton kernel prints its stores after its loads (codegen/triton/kernel.py): to
Triton a store may alias any later load, so a load printed after a store waits for it. Results
still match eager where a kernel reads back what it stored, writes an input it also reads, or
holds more stores than it keeps back (memory.MAX_DEFERRED_STORES)."""

from __future__ import annotations

import re

import pytest
import torch

from conftest import assert_same, check, compile_aten, uses_triton
from inductor.codegen.triton import memory

aten = torch.ops.aten


def _lines(compiled, pattern: str) -> list[int]:
    [source] = [text for text in compiled.kernel_sources.values() if "@triton.jit" in text]
    body = source[source.index("@triton.jit"):].splitlines()
    return [k for k, line in enumerate(body) if re.search(pattern, line)]


def _moments(grad, avg, avg_sq, param):
    # An optimizer's update: three buffers written, each read again by the next value.
    new_avg = aten.lerp.Scalar(avg, grad, 0.1)
    new_sq = aten.add.Tensor(aten.mul.Tensor(avg_sq, 0.999), aten.mul.Tensor(aten.mul.Tensor(grad, grad), 1e-3))
    new_param = aten.sub.Tensor(param, aten.div.Tensor(new_avg, aten.add.Tensor(aten.sqrt.default(new_sq), 1e-8)))
    return new_avg, new_sq, new_param


@pytest.mark.parametrize("numel", [1000, 4096])
def test_every_load_comes_before_the_first_store(device, numel):
    inputs = [torch.randn(numel, device=device).abs() for _ in range(4)]
    compiled = check(_moments, *inputs, rtol=1e-5, atol=1e-5)
    if uses_triton(device):
        assert max(_lines(compiled, r"tl\.load\(")) < min(_lines(compiled, r"tl\.store\("))


def written_then_read(x, y):
    # An input written in place (as aot_autograd hands a mutation over: copy_ at the end of
    # the graph), its new value read again by the same kernel.
    doubled = aten.mul.Tensor(x, 2.0)
    aten.copy_.default(x, doubled)
    return (aten.add.Tensor(doubled, y), aten.mul.Tensor(y, 3.0))


def test_an_input_written_in_place_and_read_after(device):
    for numel in (2048, 3000):
        x, y = torch.randn(numel, device=device), torch.randn(numel, device=device)
        eager_x = x.clone()
        compiled = compile_aten(written_then_read, [x.clone(), y])
        for fresh_y in (y, torch.randn_like(y)):
            assert_same(compiled(x, fresh_y), written_then_read(eager_x, fresh_y))
            torch.testing.assert_close(x, eager_x)


def test_more_stores_than_are_held_back(device):
    outputs = memory.MAX_DEFERRED_STORES + 3

    def fn(x):
        return tuple(aten.mul.Tensor(x, float(k + 1)) for k in range(outputs))

    compiled = check(fn, torch.randn(3000, device=device))
    if uses_triton(device):
        assert len(_lines(compiled, r"tl\.store\(")) == outputs
