"""A lazy value several nodes read (graph.py `_computed_once`): kernels, bound by memory,
recompute it in each reader unless it reads many buffers of its size or does many ops. Sibling reductions over the same loops that read the same data
share one kernel (scheduler.py `_join_sibling_reduction`). Checked against eager on new
values and at a new size, and by the kernels and buffers the wrapper holds."""

import re

import torch

from conftest import assert_same, compile_aten

aten = torch.ops.aten


def batch_norm_relu_backward(g, y, x, mean, rstd):
    # The shape of a channels-last batch norm + ReLU backward: the masked gradient feeds two
    # per-channel sums and the input gradient.
    masked = aten.where.self(aten.le.Scalar(y, 0), aten.zeros_like.default(g), g)
    centred = aten.sub.Tensor(x, mean)
    dims = [0, 1, 2]
    total = aten.mean.dim(masked, dims)
    dot = aten.mean.dim(aten.mul.Tensor(masked, centred), dims)
    scale = aten.mul.Tensor(aten.mul.Tensor(dot, rstd), rstd)
    grad = aten.sub.Tensor(aten.sub.Tensor(masked, total), aten.mul.Tensor(centred, scale))
    return aten.mul.Tensor(grad, rstd), total, dot


def _inputs(device, rows):
    x = torch.randn(2, rows, 5, 8, device=device)
    y = torch.randn_like(x)
    return torch.randn_like(x), y, x, x.mean((0, 1, 2)), torch.rand(8, device=device) + 0.5


def _activation_buffers(source: str, rows: int) -> int:
    return len(re.findall(rf"empty_strided\(\(2, {rows}, 5, 8\)", source.split("def call")[1]))


def test_a_masked_gradient_feeding_two_sums_and_a_pointwise_matches_eager(device):
    for rows in (6, 9):
        inputs = _inputs(device, rows)
        compiled = compile_aten(batch_norm_relu_backward, inputs)
        assert_same(compiled(*inputs), batch_norm_relu_backward(*inputs), rtol=1e-4, atol=1e-4)
        fresh = _inputs(device, rows)
        assert_same(compiled(*fresh), batch_norm_relu_backward(*fresh), rtol=1e-4, atol=1e-4)
        # Only the input gradient is activation-sized in memory (the masked gradient is
        # recomputed per reader), and both sums are one reduction: the gradient (arg0) is read
        # by two kernels, that reduction and the input gradient's.
        assert _activation_buffers(compiled.source, rows) == 1
        assert len(re.findall(r"^    kernel\d+\(.*\barg0\b", compiled.source, re.M)) == 2


def heavy_shared(a, b, c, d, e, f):
    # Read by two nodes, it reads six activation-sized buffers: stored once on every backend.
    shared = aten.add.Tensor(aten.add.Tensor(aten.add.Tensor(a, b), aten.add.Tensor(c, d)), aten.add.Tensor(e, f))
    return aten.sum.dim_IntList(shared, [0]), aten.exp.default(shared)


def test_a_shared_value_of_many_reads_is_stored_once(device):
    for rows in (16, 24):
        inputs = [torch.randn(rows, 32, device=device) for _ in range(6)]
        compiled = compile_aten(heavy_shared, inputs)
        assert_same(compiled(*inputs), heavy_shared(*inputs), rtol=1e-4, atol=1e-4)
        fresh = [torch.randn_like(t) for t in inputs]
        assert_same(compiled(*fresh), heavy_shared(*fresh), rtol=1e-4, atol=1e-4)
        assert len(re.findall(rf"empty_strided\(\({rows}, 32\)", compiled.source.split("def call")[1])) >= 2


def residual_stream(ids, table, a, b, c, d):
    # A decoder's residual stream after four layers: an embedding lookup plus four outputs,
    # read by two kernels (sums over different dims). The lookup reads
    # a row per element, so the value reads five activation-sized buffers: stored once.
    shared = aten.embedding.default(table, ids)
    for out in (a, b, c, d):
        shared = aten.add.Tensor(shared, out)
    return aten.sum.dim_IntList(aten.mul.Tensor(shared, shared), [1]), aten.sum.dim_IntList(shared, [0])


def test_an_embedding_lookup_counts_as_a_read_of_its_size(device):
    for rows in (16, 24):
        def draw():
            return [torch.randint(0, 50, (rows,), device=device), torch.randn(50, 32, device=device),
                    *(torch.randn(rows, 32, device=device) for _ in range(4))]
        inputs = draw()
        compiled = compile_aten(residual_stream, inputs)
        assert_same(compiled(*inputs), residual_stream(*inputs), rtol=1e-4, atol=1e-4)
        fresh = draw()
        assert_same(compiled(*fresh), residual_stream(*fresh), rtol=1e-4, atol=1e-4)
        # The lookup happens once: a single kernel reads the table (arg1).
        assert len(re.findall(r"^    kernel\d+\(.*\barg1\b", compiled.source, re.M)) == 1, compiled.source


def shared_before_an_in_place_write(x, running):
    # y, read twice, is still lazy when copy_ writes an input (as a training forward writes
    # running statistics): it is then computed into memory in eager's channels-last order.
    y = aten.relu.default(aten.mul.Tensor(x, 2.0))
    aten.copy_.default(running, aten.sum.dim_IntList(y, [0, 2, 3]))
    return aten.add.Tensor(y, 1.0), aten.mul.Tensor(y, 3.0)


def test_a_value_computed_before_an_in_place_write_keeps_eagers_memory_order(device):
    for size in (6, 9):
        x = torch.randn(2, 8, size, size, device=device).to(memory_format=torch.channels_last)
        ours_running, eager_running = torch.zeros(8, device=device), torch.zeros(8, device=device)
        compiled = compile_aten(shared_before_an_in_place_write, [x, ours_running])
        for inputs in (x, torch.randn_like(x)):
            assert_same(compiled(inputs, ours_running), shared_before_an_in_place_write(inputs, eager_running),
                        rtol=1e-4, atol=1e-4)
            assert_same(ours_running, eager_running, rtol=1e-4, atol=1e-4)
        # No transposing (tiled) kernel: every value lies in memory as x does.
        assert "tiled_" not in compiled.source


def linear_gelu_backward(grad, pre, weight, x):
    # A Linear-GELU's backward: the gradient through the GELU is read by the input gradient's
    # matmul, transposed by the weight gradient's matmul, and by the bias gradient's sum.
    g = aten.gelu_backward.default(grad, pre)
    return (aten.mm.default(g, weight), aten.mm.default(aten.t.default(g), x),
            aten.sum.dim_IntList(g, [0], True))


def test_a_value_matmuls_read_as_is_and_transposed_is_computed_once(device):
    for rows in (16, 24):
        inputs = [torch.randn(rows, 64, device=device), torch.randn(rows, 64, device=device),
                  torch.randn(64, 32, device=device), torch.randn(rows, 32, device=device)]
        compiled = compile_aten(linear_gelu_backward, inputs)
        for args in (inputs, [torch.randn_like(t) for t in inputs]):
            assert_same(compiled(*args), linear_gelu_backward(*args), rtol=1e-4, atol=1e-4)
        body = compiled.source.split("def call")[1]
        # One buffer holds the GELU's gradient; both matmuls and the sum read it: no
        # transposed copy, and the sum reads it rather than computing it again from grad and pre.
        assert len(re.findall(rf"empty_strided\(\({rows}, 64\)", body)) == 1, body
        assert len(re.findall(r"^    kernel\d+\(.*\barg1\b", body, re.M)) == 1, body
