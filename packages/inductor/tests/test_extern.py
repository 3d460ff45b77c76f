"""Extern calls (mm, bmm, addmm, convolution, attention) and the aten fallback, between fused kernels."""

from __future__ import annotations

import logging

import pytest
import torch

import inductor
from conftest import assert_same, backend_options, check, traced
from inductor.runtime import wrapper_support

aten = torch.ops.aten

# The attention op aten's scaled_dot_product_attention picks on each device for float32: what
# traced graphs hold there. Each returns a tuple whose first item is the attention output.
ATTENTION = {
    "cpu": lambda q, k, v, causal: aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, 0.0, causal),
    "cuda": lambda q, k, v, causal: aten._scaled_dot_product_efficient_attention.default(q, k, v, None, False, 0.0, causal),
}


def attention_on(device, causal=False):
    return lambda q, k, v: ATTENTION[device](q, k, v, causal)[0]


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


def test_channels_last_convolutions_chain_without_layout_copies(device, monkeypatch, tmp_path):
    # ResNet-style: each convolution returns channels-last, the fused ReLU keeps it, and the next
    # convolution reads it so; a row-major copy in between would cost a copy per convolution.
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))
    copies = []
    keep = wrapper_support.with_strides
    monkeypatch.setattr(wrapper_support, "with_strides", lambda t, stride: (
        copies.append((t.stride(), stride)) if t is not None and t.stride() != stride else None) or keep(t, stride))
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 8, 3, padding=1),
                                torch.nn.ReLU()).to(device=device, memory_format=torch.channels_last)
    x = torch.randn(2, 3, 12, 12, device=device).to(memory_format=torch.channels_last)
    with torch.no_grad():
        out = inductor.compile_fx(traced(model), [x], options=backend_options())(x)[0]
        expected = model(x)
    assert_same(out, expected, rtol=1e-4, atol=1e-4)
    assert out.stride() == expected.stride()
    assert not copies, f"convolution outputs copied to another layout: {copies}"


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention(device, causal):
    q, k, v = (torch.randn(2, 4, 16, 8, device=device) for _ in range(3))
    attention = attention_on(device, causal)
    check(lambda q, k, v: (attention(q, k, v),), q, k, v, rtol=1e-4, atol=1e-4)


def test_composite_attention_dispatches_on_the_device():
    q, k, v = (torch.randn(2, 4, 16, 8) for _ in range(3))
    check(lambda q, k, v: (aten.scaled_dot_product_attention.default(q, k, v),), q, k, v, rtol=1e-4, atol=1e-4)


def test_extern_output_is_read_with_the_strides_the_op_returns(device):
    # q is a lazy scaled permute: eager's mul keeps the permuted strides, so the traced attention
    # output follows them; inductor realizes q densely, and attention lays its output out after q.
    # The kernel reading the output must index what the op really returns (GPT-2's backward).
    x, k, v = torch.randn(2, 12, 4, 8, device=device), torch.randn(2, 4, 12, 8, device=device), torch.randn(2, 4, 12, 8, device=device)
    attention = attention_on(device)
    check(lambda x, k, v: (aten.add.Tensor(attention(aten.mul.Tensor(aten.permute.default(x, [0, 2, 1, 3]), 2.0), k, v), 1.0),),
          x, k, v, rtol=1e-4, atol=1e-4)


def test_mm_of_a_lazy_transposed_operand(device):
    x, w = torch.randn(16, 8, device=device), torch.randn(16, 5, device=device)
    check(lambda x, w: (aten.add.Tensor(aten.mm.default(aten.mul.Tensor(aten.t.default(x), 2.0), w), 1.0),),
          x, w, rtol=1e-4, atol=1e-4)


def test_unlowered_op_falls_back_with_a_perf_hint(device, caplog):
    x = torch.randn(9, 9, device=device)
    with caplog.at_level(logging.INFO, logger="compiler.perf_hints"):
        check(lambda x: (aten.add.Tensor(aten.cumsum.default(aten.exp.default(x), 1), 1.0),), x)
    assert any("cumsum" in r.getMessage() for r in caplog.records)


def test_matmul_and_attention_are_externs_not_fallbacks(device, caplog):
    q, k, v = (torch.randn(1, 2, 8, 4, device=device) for _ in range(3))
    attention = attention_on(device)
    with caplog.at_level(logging.INFO, logger="compiler.perf_hints"):
        check(lambda q, k, v: (aten.bmm.default(aten.view.default(attention(q, k, v), [2, 8, 4]),
                                                aten.view.default(aten.permute.default(v, [0, 1, 3, 2]), [2, 4, 8])),),
              q, k, v, rtol=1e-4, atol=1e-4)
    assert not caplog.records


COMPLEX = {
    "view_as_complex_mul": lambda x: (aten.add.Tensor(aten.view_as_real.default(
        aten.mul.Tensor(aten.view_as_complex.default(x), aten.view_as_complex.default(x))), 1.0),),
    "complex_input": lambda x: (aten.abs.default(aten.mul.Tensor(aten.view_as_complex.default(x), 2.0)),
                                aten.exp.default(x)),
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_ops_run_as_aten_calls_between_kernels(name, device):
    # Kernels have no complex arithmetic; the real-valued ops around them still fuse.
    check(COMPLEX[name], torch.randn(6, 5, 2, device=device), rtol=1e-5, atol=1e-5)
