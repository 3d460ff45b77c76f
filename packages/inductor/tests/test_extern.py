"""Extern calls (mm, bmm, addmm, convolution, attention) and the aten fallback, between fused kernels."""

from __future__ import annotations

import logging

import torch

from conftest import check

aten = torch.ops.aten


def test_mm_with_fused_epilogue_and_transposed_weight(device):
    x, w, b = torch.randn(32, 64, device=device), torch.randn(48, 64, device=device), torch.randn(48, device=device)
    check(lambda x, w, b: (aten.gelu.default(aten.addmm.default(b, x, aten.t.default(w))),
                           aten.relu.default(aten.mm.default(x, aten.permute.default(w, [1, 0])))), x, w, b,
          rtol=1e-4, atol=1e-4)


def test_bmm_of_a_lazy_input(device):
    a, b = torch.randn(3, 16, 8, device=device), torch.randn(3, 8, 5, device=device)
    check(lambda a, b: (aten.bmm.default(aten.mul.Tensor(a, 2.0), b),), a, b, rtol=1e-4, atol=1e-4)


def test_convolution(device):
    x, w, b = torch.randn(2, 3, 12, 12, device=device), torch.randn(4, 3, 3, 3, device=device), torch.randn(4, device=device)
    check(lambda x, w, b: (aten.relu.default(aten.convolution.default(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)),),
          x, w, b, rtol=1e-4, atol=1e-4)


def test_scaled_dot_product_attention(device):
    q, k, v = (torch.randn(2, 4, 16, 8, device=device) for _ in range(3))
    op = aten._scaled_dot_product_flash_attention_for_cpu.default
    check(lambda q, k, v: (op(q, k, v, 0.0, True)[0],), q, k, v, rtol=1e-4, atol=1e-4)


def test_unlowered_op_falls_back_with_a_perf_hint(device, caplog):
    x = torch.randn(9, 9, device=device)
    with caplog.at_level(logging.INFO, logger="compiler.perf_hints"):
        check(lambda x: (aten.add.Tensor(aten.cumsum.default(aten.exp.default(x), 1), 1.0),), x)
    assert any("cumsum" in r.getMessage() for r in caplog.records)


def test_matmul_and_attention_are_externs_not_fallbacks(device, caplog):
    q, k, v = (torch.randn(1, 2, 8, 4, device=device) for _ in range(3))
    op = aten._scaled_dot_product_flash_attention_for_cpu.default
    with caplog.at_level(logging.INFO, logger="compiler.perf_hints"):
        check(lambda q, k, v: (aten.bmm.default(aten.view.default(op(q, k, v, 0.0, False)[0], [2, 8, 4]),
                                                aten.view.default(aten.permute.default(v, [0, 1, 3, 2]), [2, 4, 8])),),
              q, k, v, rtol=1e-4, atol=1e-4)
    assert not caplog.records
