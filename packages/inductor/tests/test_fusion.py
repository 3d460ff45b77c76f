"""What the scheduler fuses, counted in generated kernels (and results still match eager)."""

from __future__ import annotations

import re

import torch

import inductor.graph

from conftest import check

aten = torch.ops.aten


def test_pointwise_chain_is_one_kernel(device):
    x, y = torch.randn(64, 80, device=device), torch.randn(64, 80, device=device)
    compiled = check(lambda x, y: (aten.tanh.default(aten.mul.Tensor(
        aten.gelu.default(aten.add.Tensor(aten.mul.Tensor(x, 2.0), 1.0)), y)),), x, y)
    assert compiled.kernel_count == 1


def test_layernorm_gelu_residual_is_one_kernel(device):
    x, r = torch.randn(4, 16, 96, device=device), torch.randn(4, 16, 96, device=device)
    w, b = torch.randn(96, device=device), torch.randn(96, device=device)
    compiled = check(lambda x, w, b, r: (aten.add.Tensor(aten.gelu.default(
        aten.native_layer_norm.default(x, [96], w, b, 1e-5)[0]), r),), x, w, b, r, rtol=1e-4, atol=1e-5)
    assert compiled.kernel_count == 1


def test_softmax_is_one_kernel(device):
    x = torch.randn(32, 200, device=device)
    compiled = check(lambda x: (aten._softmax.default(aten.mul.Tensor(x, 0.125), -1, False),), x)
    assert compiled.kernel_count == 1


def test_independent_reductions_over_one_input_share_a_kernel(device):
    x = torch.randn(50, 70, device=device)
    compiled = check(lambda x: (aten.sum.dim_IntList(x, [1]), aten.amax.default(x, [1]),
                                aten.sum.dim_IntList(aten.mul.Tensor(x, x), [1])), x, rtol=1e-5, atol=1e-5)
    assert compiled.kernel_count == 1


def test_matmul_epilogue_is_one_kernel_after_the_extern(device):
    x, w, b = torch.randn(16, 32, device=device), torch.randn(32, 24, device=device), torch.randn(24, device=device)
    compiled = check(lambda x, w, b: (aten.gelu.default(aten.add.Tensor(aten.mm.default(x, w), b)),), x, w, b,
                     rtol=1e-4, atol=1e-4)
    assert compiled.kernel_count == 1
    assert "aten_mm_default(" in compiled.source  # the matmul is the extern call


def test_pointwise_work_on_both_sides_of_a_matmul_shares_a_kernel(device):
    # A backward's shape: the weight-gradient matmul reads gelu(h), the GELU gradient reads the
    # input-gradient matmul's result. The matmul reading gelu(h) waits, so both pointwise
    # values come from one kernel reading h once.
    h, gout = torch.randn(64, 96, device=device), torch.randn(64, 32, device=device)
    w = torch.randn(32, 96, device=device)

    def backward(h, gout, w):
        grad_h = aten.mm.default(gout, w)
        weight_grad = aten.mm.default(aten.t.default(gout), aten.gelu.default(h))
        return weight_grad, aten.mul.Tensor(grad_h, aten.sigmoid.default(h))

    compiled = check(backward, h, gout, w, rtol=1e-4, atol=1e-4)
    assert compiled.kernel_count == 1


def test_wrapper_reuses_dead_buffers(device):
    x, w = torch.randn(32, 32, device=device), torch.randn(32, 32, device=device) / 8

    def fn(x, w):
        a = aten.mm.default(aten.exp.default(x), w)
        b = aten.mm.default(aten.sin.default(a), w)
        return (aten.mm.default(aten.cos.default(b), w),)

    compiled = check(fn, x, w, rtol=1e-4, atol=1e-4)
    assert "# reuses" in compiled.source


def test_a_reused_buffer_only_kernels_read_takes_over_the_dead_tensor_without_a_view(device, monkeypatch):
    # t ([64, 16]) reuses exp(x)'s memory ([16, 64]); only the two reduction kernels read it,
    # and they index memory by their own strides, so no as_strided view is made for it.
    # (Triton kernels would recompute so cheap a t in each reader; here it is stored.)
    monkeypatch.setattr(inductor.graph, "RECOMPUTE_OPS", 0)
    x, w = torch.randn(16, 64, device=device), torch.randn(64, 64, device=device) / 8

    def fn(x, w):
        a = aten.view.default(aten.mm.default(aten.exp.default(x), w), [64, 16])
        t = aten.mul.Tensor(a, aten.view.default(aten.sum.dim_IntList(a, [1]), [64, 1]))
        return aten.sum.dim_IntList(t, [0]), aten.amax.default(t, [1])

    compiled = check(fn, x, w, rtol=1e-4, atol=1e-4)
    assert re.search(r"(buf\d+) = (buf\d+); del \2  # reuses", compiled.source)
    assert ".as_strided(" not in compiled.source


def test_a_reused_buffer_an_extern_reads_is_viewed_with_its_own_shape(device):
    x, w = torch.randn(16, 64, device=device), torch.randn(64, 64, device=device) / 8
    v = torch.randn(16, 16, device=device)

    def fn(x, w, v):
        a = aten.mm.default(aten.exp.default(x), w)           # exp(x) [16, 64] dies here
        t = aten.sin.default(aten.view.default(a, [64, 16]))  # takes over its memory; the mm reads it
        return (aten.mm.default(t, v),)

    compiled = check(fn, x, w, v, rtol=1e-4, atol=1e-4)
    assert re.search(r"= buf\d+\.as_strided\(\(64, 16\), \(16, 1\)\); del buf\d+  # reuses", compiled.source)


def test_transposed_read_of_a_fresh_buffer_is_not_fused(device, monkeypatch):
    # The premise is a stored e (Triton kernels would recompute so cheap a value per reader).
    monkeypatch.setattr(inductor.graph, "RECOMPUTE_OPS", 0)
    x = torch.randn(40, 40, device=device)

    def fn(x):
        e = aten.exp.default(x)
        return (aten.add.Tensor(e, aten.permute.default(e, [1, 0])), e)

    compiled = check(fn, x)
    assert compiled.kernel_count == 2


def test_layernorm_normalizing_through_a_flattening_view_is_one_kernel(device):
    # A transformer's pre-matmul LayerNorm: the residual sum is returned, and the normalized value
    # is read as [B*T, H] by the matmul. Statistics and normalization still share one kernel,
    # whose loops are the [B, T] x [H] of the statistics.
    x, r = torch.randn(4, 17, 96, device=device), torch.randn(4, 17, 96, device=device)
    w, b, weight = torch.randn(96, device=device), torch.randn(96, device=device), torch.randn(96, 32, device=device)

    def block(x, r, w, b, weight):
        h = aten.add.Tensor(x, r)
        normalized = aten.native_layer_norm.default(h, [96], w, b, 1e-5)[0]
        return h, aten.mm.default(aten.view.default(normalized, [68, 96]), weight)

    compiled = check(block, x, r, w, b, weight, rtol=1e-4, atol=1e-4)
    assert compiled.kernel_count == 1


def test_row_sums_of_a_flattened_view_join_the_pointwise_group_they_read(device):
    # h is computed in [4, 17, 96] loops; the row sums read it as [68, 96]: the group's loops
    # split into [4, 17] x [96] and all three values come from one kernel (the transposed add
    # reads each element of h where the kernel computes it, and stores it transposed).
    x, r = torch.randn(4, 17, 96, device=device), torch.randn(4, 17, 96, device=device)

    def fn(x, r):
        h = aten.mul.Tensor(aten.add.Tensor(x, r), 0.5)
        flat = aten.view.default(h, [68, 96])
        sums = aten.sum.dim_IntList(flat, [1])
        return h, sums, aten.add.Tensor(aten.t.default(flat), 1.0)

    compiled = check(fn, x, r, rtol=1e-5, atol=1e-5)
    assert compiled.kernel_count == 1
