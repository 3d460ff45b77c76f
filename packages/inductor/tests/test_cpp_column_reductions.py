"""Column reductions (the reduced dimension is not the contiguous one) in the C++ backend: the
kernel tiles the contiguous kept dimension and vectorizes across it (cpp_loop_order.py).
Differential against eager, with sizes that leave a partial tile."""

from __future__ import annotations

import pytest
import torch

from conftest import compile_aten, assert_same, with_specials

aten = torch.ops.aten


def _layer_norm_weight_grad(g, x, mean, rstd):
    return (aten.sum.dim_IntList(aten.mul.Tensor(g, aten.mul.Tensor(aten.sub.Tensor(x, mean), rstd)), [0]),
            aten.sum.dim_IntList(g, [0]))


def _var_mean(x):
    result = aten.var_mean.correction(x, [0], correction=1)
    return result[0], result[1]


CASES = {
    "sum over rows": (lambda x: (aten.sum.dim_IntList(x, [0]),), lambda: [torch.randn(97, 301)]),
    "mean over the middle dim": (lambda x: (aten.mean.dim(x, [1]),), lambda: [torch.randn(3, 65, 70)]),
    "amax with nan and inf": (lambda x: (aten.amax.default(x, [0]), aten.amin.default(x, [0])),
                              lambda: [with_specials(torch.randn(40, 45))]),
    "var_mean over rows": (_var_mean, lambda: [torch.randn(50, 77) * 3 + 2]),
    "layer-norm weight gradient": (_layer_norm_weight_grad,
                                   lambda: [torch.randn(37, 96), torch.randn(37, 96), torch.randn(37, 1), torch.randn(37, 1)]),
    "sum over first and middle dims": (lambda x: (aten.sum.dim_IntList(x, [0, 1]),), lambda: [torch.randn(5, 9, 40)]),
    "int and bool sums": (lambda i, b: (aten.sum.dim_IntList(i, [0]), aten.sum.dim_IntList(b, [0])),
                          lambda: [torch.randint(-9, 9, (33, 41), dtype=torch.int32), torch.rand(33, 41) > 0.5]),
    "any and all": (lambda b: (aten.any.dim(b, 0), aten.all.dim(b, 0)), lambda: [torch.rand(30, 50) > 0.1]),
    "prod": (lambda x: (aten.prod.dim_int(x, 0),), lambda: [torch.rand(12, 50) + 0.5]),
    "bfloat16 sum": (lambda x: (aten.sum.dim_IntList(x, [0]),), lambda: [torch.randn(64, 70).to(torch.bfloat16)]),
    "reduction then epilogue": (lambda x, y: (aten.add.Tensor(aten.mul.Tensor(aten.sum.dim_IntList(x, [0]), 2.0), y),),
                                lambda: [torch.randn(20, 70), torch.randn(70)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_column_reduction_matches_eager(case):
    fn, make_inputs = CASES[case]
    inputs = make_inputs()
    compiled = compile_aten(fn, inputs)
    tolerance = dict(rtol=2e-2, atol=1e-1) if inputs[0].dtype == torch.bfloat16 else dict(rtol=1e-4, atol=1e-4)
    assert_same(compiled(*inputs), fn(*inputs), **tolerance)


@pytest.mark.parametrize("case", ["sum over rows", "layer-norm weight gradient", "mean over the middle dim"])
def test_column_reduction_vectorizes_across_the_kept_dim(case):
    fn, make_inputs = CASES[case]
    compiled = compile_aten(fn, make_inputs())
    assert all("for (int64_t lane = 0; lane < lanes; ++lane)" in s for s in compiled.kernel_sources.values())


def test_row_reduction_keeps_vectorizing_the_reduced_dim():
    x = torch.randn(30, 70)
    compiled = compile_aten(lambda x: (aten.sum.dim_IntList(x, [1]),), [x])
    assert all("lane" not in s for s in compiled.kernel_sources.values())


def test_column_reduction_narrower_than_a_vector_keeps_the_default_order():
    x = torch.randn(300, 5)
    compiled = compile_aten(lambda x: (aten.sum.dim_IntList(x, [0]),), [x])
    assert_same(compiled(x), (aten.sum.dim_IntList(x, [0]),), rtol=1e-4, atol=1e-4)
    assert all("lane" not in s for s in compiled.kernel_sources.values())
