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


CONVOLUTIONS = {  # (input size, weight size, stride, padding, transposed, groups)
    "conv1d": ((2, 6, 20), (8, 6, 3), [2], [1], False, 1),
    "depthwise_7x7": ((2, 8, 14, 14), (8, 1, 7, 7), [1, 1], [3, 3], False, 8),
    "strided_2d": ((2, 3, 15, 15), (8, 3, 4, 4), [4, 4], [0, 0], False, 1),
    "transposed_2d": ((2, 6, 7, 7), (6, 4, 2, 2), [2, 2], [0, 0], True, 1),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", sorted(CONVOLUTIONS))
@pytest.mark.parametrize("channels_last", [False, True])
def test_convolution_bias_fuses_into_the_next_kernel_on_cuda(name, dtype, channels_last, device, caplog):
    # cuDNN adds a bias in an aten kernel of its own: on CUDA the convolution runs without it and
    # the kernel reading the output (here a GELU) adds it; CPU tensors keep oneDNN's bias.
    x_size, w_size, stride, padding, transposed, groups = CONVOLUTIONS[name]
    x, w = torch.randn(x_size, device=device, dtype=dtype), torch.randn(w_size, device=device, dtype=dtype)
    if channels_last and x.dim() == 4:
        x = x.to(memory_format=torch.channels_last)
    bias = torch.randn(w_size[1] * groups if transposed else w_size[0], device=device, dtype=dtype)
    dilation, output_padding = [1] * len(stride), [0] * len(stride)

    class ConvGelu(torch.nn.Module):
        def forward(self, x, w, b):
            out = aten.convolution.default(x, w, b, stride, padding, dilation, transposed, output_padding, groups)
            return aten.gelu.default(out), out

    fn = ConvGelu()
    tolerance = {"rtol": 2e-2, "atol": 2e-2} if dtype == torch.bfloat16 else {"rtol": 1e-4, "atol": 1e-4}
    with torch.no_grad(), caplog.at_level(logging.INFO, logger="compiler.output_code"):
        compiled = inductor.compile_fx(traced(fn), [x, w, bias], options=backend_options())
        for _ in range(3):  # the first call, then cache hits with new values
            actual, expected = compiled(x, w, bias)[0], fn(x, w, bias)
            assert_same(actual, expected, **tolerance)
            assert [t.stride() for t in actual] == [t.stride() for t in expected]
            x, w, bias = (t.clone().normal_() for t in (x, w, bias))
    source = "\n".join(r.getMessage() for r in caplog.records)
    [call] = [line for line in source.splitlines() if "convolution_default(" in line]
    assert (call.split(", ")[2] == "None") == (device == "cuda"), source  # the bias argument


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("name", sorted(CONVOLUTIONS))
def test_convolution_bias_rounds_as_eager_does_on_the_device(name, dtype, device):
    # oneDNN rounds conv + bias once, cuDNN's aten rounds the convolution, then conv + bias: a
    # half-precision result where the two nearly cancel shows the difference (the Triton kernels
    # of CPU tensors added the bias apart, as on CUDA, and were an ulp off).
    x_size, w_size, stride, padding, transposed, groups = CONVOLUTIONS[name]
    x, w = torch.randn(x_size, device=device, dtype=dtype), torch.randn(w_size, device=device, dtype=dtype)
    bias = torch.randn(w_size[1] * groups if transposed else w_size[0], device=device, dtype=dtype)
    geometry = (stride, padding, [1] * len(stride), transposed, [0] * len(stride), groups)
    with torch.no_grad():
        check(lambda x, w, b: (aten.convolution.default(x, w, b, *geometry),), x, w, bias, rtol=0, atol=0)


def test_channels_last_convolutions_chain_without_layout_copies(device, monkeypatch, tmp_path):
    # ResNet-style: each convolution returns channels-last, the fused ReLU keeps it, and the next
    # convolution reads it so; a row-major copy in between would cost a copy per convolution.
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))
    copies = []
    keep = wrapper_support.with_layout
    monkeypatch.setattr(wrapper_support, "with_layout", lambda t, stride, dtype: (
        copies.append((t.stride(), stride)) if t is not None and t.stride() != stride else None) or keep(t, stride, dtype))
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


@torch.library.custom_op("ptc_inductor_tests::column_sums", mutates_args=())
def _column_sums(x: torch.Tensor) -> torch.Tensor:
    return x.sum(0)


@_column_sums.register_fake
def _(x):
    # Claims float32 for a bf16 input, as torch's meta kernels say of the CPU batch norm's
    # bf16 statistics (which fake_tensor/cpu_kernels.py corrects).
    return x.new_empty(x.shape[1:], dtype=torch.float32 if x.dtype == torch.bfloat16 else x.dtype)


@pytest.mark.parametrize("shape", [(6, 5), (17, 33)])
def test_extern_output_of_another_dtype_than_traced_is_converted(shape, device):
    # A fake that gets the kernel's dtype wrong must not make the kernels read the bf16 bytes it
    # returns as float32 (op_db's _batch_norm_with_update in bf16 wrote garbage running stats).
    x = torch.randn(shape, device=device).to(torch.bfloat16)
    check(lambda x: (aten.mul.Tensor(aten._to_copy.default(torch.ops.ptc_inductor_tests.column_sums.default(x),
                                                           dtype=torch.bfloat16), 2.0),), x)
