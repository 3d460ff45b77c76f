"""slice_scatter and select_scatter lowered as Pointwise (the backward of a slice or a select,
a write through one), differential against eager: starts from the front and the back, open and
clamped ends, every dim, another src dtype, and a step (which stays an aten call)."""

from __future__ import annotations

import logging

import pytest
import torch

import inductor
from conftest import assert_same, backend_options

pytest.importorskip("aot_autograd")


def check(fn, *inputs):
    """`fn` (torch functions) through aot_autograd and the backend the `device` fixture selected."""
    compiled = inductor.compile_fx(torch.fx.symbolic_trace(fn), list(inputs), options=backend_options())
    assert_same(compiled(*inputs), fn(*inputs))


CASES = [
    # (base shape, dim, start, end, step)
    ((6, 10), 1, 0, 5, 1),
    ((6, 10), 1, 5, None, 1),
    ((6, 10), 1, -4, None, 1),
    ((6, 10), 0, 2, 4, 1),
    ((6, 10), -1, 3, 100, 1),
    ((4, 5, 8), 2, 4, 8, 1),
    ((4, 5, 8), 1, 0, 0, 1),
    ((12,), 0, 1, 11, 3),
]


def _src(shape, dim, start, end, step, dtype, device):
    return torch.randn(torch.empty(shape)[(slice(None),) * (dim % len(shape)) + (slice(start, end, step),)].shape,
                       device=device, dtype=dtype)


@pytest.mark.parametrize("shape, dim, start, end, step", CASES)
def test_slice_scatter_matches_eager(shape, dim, start, end, step, device):
    base = torch.randn(shape, device=device)
    src = _src(shape, dim, start, end, step, torch.float32, device)
    check(lambda b, s: (torch.slice_scatter(b, s, dim, start, end, step) * 2,), base, src)


def test_the_backward_of_two_halves_is_one_kernel_without_aten_calls(device, caplog):
    """rotate_half's backward (zeros with each half's gradient, summed) and a select's: no aten
    call remains."""
    grad = torch.randn(3, 8, device=device)

    def fn(g):
        zeros = torch.zeros([3, 16], dtype=torch.float32, device=device)
        first = torch.select_scatter(zeros, g[:, 0], 1, 0)
        return (torch.slice_scatter(zeros, g, 1, 0, 8) + torch.slice_scatter(zeros, -g, 1, 8, None) + first,)

    with caplog.at_level(logging.INFO, logger="compiler.perf_hints"):
        check(fn, grad)
    assert "no lowering" not in caplog.text


@pytest.mark.parametrize("dim, index", [(0, 0), (1, -1), (1, 3), (-1, 2), (2, -4)])
def test_select_scatter_matches_eager(dim, index, device):
    base = torch.randn(3, 5, 4, device=device)
    src = torch.randn(base.select(dim, index).shape, device=device)
    check(lambda b, s: (torch.select_scatter(b, s, dim, index) + 1,), base, src)


def test_a_src_cast_from_another_dtype_fuses(device):
    base = torch.randn(5, 6, device=device)
    src = torch.randn(5, 2, device=device).to(torch.bfloat16)
    check(lambda b, s: (torch.slice_scatter(b, s.to(torch.float32), 1, 2, 4),), base, src)
