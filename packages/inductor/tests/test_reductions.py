"""Reductions, softmax and layer norm, differential against eager (NaN/inf included)."""

from __future__ import annotations

import pytest
import torch

from conftest import check, compile_aten, uses_triton, with_specials

aten = torch.ops.aten

DIMS = [[1], [0], [0, 2], [-1], []]


@pytest.mark.parametrize("dims", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_and_mean(dims, keepdim, device):
    x = torch.randn(6, 33, 17, device=device)
    # Over all 3366 elements, eager's cascade sum and our per-lane partial sums round apart by
    # up to ~1e-4 (300 seeds: ours at most 8.2e-5 from the float64 sum, eager 2.4e-5); the
    # shorter sums stay within 1e-5.
    atol = 2e-4 if dims == [] else 1e-5
    check(lambda x: (aten.sum.dim_IntList(x, dims, keepdim), aten.mean.dim(x, dims, keepdim)), x, rtol=1e-5, atol=atol)


def test_a_long_sum_is_as_close_to_the_exact_sum_as_eagers(device):
    """1M positive values: float partial sums, one per SIMD lane, drifted (C++: 6e-6 relative
    at 1M, 4.8e-5 at 4M, where eager's cascade sum is within 1e-7). Long float sums in C++
    kernels accumulate in double now; Triton sums rows block by block."""
    if device == "cpu" and uses_triton(device):
        pytest.skip("1M elements take Triton's interpreter 13 s")
    x = torch.rand(1024 * 1024, device=device)
    compiled = compile_aten(lambda x: (aten.sum.default(aten.mul.Tensor(x, x)), aten.mean.default(x)), [x])
    for ours, exact in zip(compiled(x), ((x.double() ** 2).sum(), x.double().mean())):
        assert abs(ours.double() - exact) / exact < 1e-6


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.float16, torch.float64])
def test_sum_prod_mean_with_a_dtype_have_that_dtype(dtype, device):
    # Without dtype= integers sum to int64; with it the result has that dtype (it was int64).
    # float16 products stay within -1..1: eager's CPU prod multiplies in float16, so a product
    # that overflows before it meets a 0 is NaN or 0 by the order of its lanes (ours, as
    # torch.compile's, multiplies in float32 and gives 0).
    low = -1 if dtype == torch.float16 else -3
    x = torch.randint(low, -low + 1, (5, 7), device=device, dtype=torch.int8)
    def fn(x):
        return (aten.sum.default(x, dtype=dtype), aten.sum.dim_IntList(x, [1], True, dtype=dtype),
                aten.prod.default(x, dtype=dtype), aten.prod.dim_int(x, 0, dtype=dtype))

    check(fn, x)
    if dtype.is_floating_point:
        check(lambda x: (aten.mean.dim(x, [0], dtype=dtype),), x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("dims", [[], [1]])
def test_a_half_precision_mean_rounds_once(dtype, dims, device):
    # Eager divides the float32 sum, then rounds: a float16 sum of these overflows (the mean
    # came out inf; a bfloat16 one rounded twice).
    x = (torch.randn(3, 5000, device=device) * 3000).to(dtype)
    check(lambda x: (aten.mean.dim(x, dims), aten.mean.default(x)), x, rtol=5e-3, atol=1e-2)


@pytest.mark.parametrize("name", ["amax", "amin"])
@pytest.mark.parametrize("dims", [[1], [0], [0, 1]])
def test_amax_amin_propagate_nan(name, dims, device):
    x = with_specials(torch.randn(40, 50, device=device))
    check(lambda x: (getattr(aten, name).default(x, dims),), x)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("with_nan", [False, True])
def test_argmax_argmin(name, with_nan, device):
    x = torch.randn(30, 45, device=device)
    if with_nan:
        x = with_specials(x)
    check(lambda x: (getattr(aten, name).default(x, 1), getattr(aten, name).default(x, 0, True)), x)


def test_max_and_min_with_indices(device):
    x = torch.randn(12, 31, device=device)
    def fn(x):
        top, bottom = aten.max.dim(x, 1), aten.min.dim(x, 0, True)
        return top[0], top[1], bottom[0], bottom[1]

    check(fn, x)


def test_full_reductions_to_scalar(device):
    x = torch.randn(300, 257, device=device)
    check(lambda x: (aten.sum.default(x), aten.amax.default(x, [0, 1]), aten.max.default(x), aten.mean.default(x)),
          x, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("correction", [0, 1])
@pytest.mark.parametrize("dims", [[1], [0, 1]])
def test_var_std_var_mean(correction, dims, device):
    x = torch.randn(64, 129, device=device) * 3 + 10
    def fn(x):
        var_mean = aten.var_mean.correction(x, dims, correction=correction)
        return (aten.var.correction(x, dims, correction=correction),
                aten.std.correction(x, dims, correction=correction, keepdim=True), var_mean[0], var_mean[1])

    check(fn, x, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_prod_any_all(dtype, device):
    x = (torch.rand(20, 9, device=device) * 2 + 0.5).to(dtype) if dtype != torch.bool else torch.rand(20, 9, device=device) > 0.2
    check(lambda x: (aten.prod.dim_int(x, 1), aten.any.dim(x, 1), aten.all.dim(x, 0), aten.any.default(x)), x,
          rtol=1e-5, atol=1e-5)


def test_sum_of_ints_and_bools_gives_int64(device):
    i = torch.randint(-5, 5, (10, 11), dtype=torch.int32, device=device)
    b = torch.rand(10, 11, device=device) > 0.5
    check(lambda i, b: (aten.sum.dim_IntList(i, [1]), aten.sum.dim_IntList(b, [0])), i, b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_sum_in_float_dtypes(dtype, device):
    x = torch.randn(50, 70, device=device).to(dtype)
    check(lambda x: (aten.sum.dim_IntList(x, [1]),), x, rtol=2e-2 if dtype == torch.bfloat16 else 1e-5, atol=1e-3)


@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("name", ["_softmax", "_log_softmax"])
def test_softmax_and_log_softmax(dim, name, device):
    x = torch.randn(7, 100, 9, device=device) * 5
    check(lambda x: (getattr(aten, name).default(x, dim, False),), x, rtol=1e-5, atol=1e-6)


def test_softmax_of_rows_with_inf(device):
    x = torch.randn(6, 40, device=device)
    x[0, :5] = float("-inf")
    x[1, :] = float("-inf")
    x[2, 3] = float("inf")
    x[3, 7] = float("nan")
    check(lambda x: (aten._softmax.default(x, -1, False),), x)


def test_bfloat16_softmax_computes_in_float(device):
    x = torch.randn(16, 256, device=device).to(torch.bfloat16)
    check(lambda x: (aten._softmax.default(x, -1, False),), x)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_native_layer_norm(affine, dtype, device):
    x = (torch.randn(4, 10, 96, device=device) * 2 + 1).to(dtype)
    w = torch.randn(96, device=device).to(dtype) if affine else None
    b = torch.randn(96, device=device).to(dtype) if affine else None
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else dict(rtol=1e-4, atol=1e-5)
    check(lambda x, w, b: aten.native_layer_norm.default(x, [96], w, b, 1e-5), x, w, b, **tol)


def test_softmax_backward(device):
    g, x = torch.randn(8, 33, device=device), torch.randn(8, 33, device=device)
    y = torch.softmax(x, -1)
    ly = torch.log_softmax(x, -1)
    check(lambda g, y, ly: (aten._softmax_backward_data.default(g, y, -1, torch.float32),
                            aten._log_softmax_backward_data.default(g, ly, -1, torch.float32)), g, y, ly,
          rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape,dim", [((8, 33), -1), ((130, 5), 0)])
def test_bfloat16_softmax_backward_computes_in_float(shape, dim, device):
    """`g - sum(g * y)` cancels: with the product and the sum rounded to bf16 (an ulp of 0.03
    at 4) the gradient was off by the size of the result (op_db's _softmax_backward_data)."""
    g = (torch.randn(shape, device=device) * 6).to(torch.bfloat16)
    x = torch.randn(shape, device=device) * 3
    y, ly = torch.softmax(x, dim).to(torch.bfloat16), torch.log_softmax(x, dim).to(torch.bfloat16)
    check(lambda g, y, ly: (aten._softmax_backward_data.default(g, y, dim, torch.bfloat16),
                            aten._log_softmax_backward_data.default(g, ly, dim, torch.bfloat16)), g, y, ly,
          rtol=1.6e-2, atol=1e-3)


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_over_dim_0_of_a_0d_tensor(dim, keepdim, device):
    # Eager reduces a 0-d tensor's one element over dim 0 or -1 (op_db's sum, amax, argmax,
    # logsumexp... samples); our lowering indexed its size tuple there (IndexError).
    x = torch.randn((), device=device)
    check(lambda x: (aten.sum.dim_IntList(x, [dim], keepdim), aten.amax.default(x, [dim], keepdim),
                     aten.argmax.default(x, dim, keepdim), aten.mean.dim(x, [dim], keepdim),
                     aten.var.correction(x, [dim], correction=0, keepdim=keepdim),
                     aten.logsumexp.default(x, [dim], keepdim)), x)


def test_reduction_of_a_pointwise_prologue_and_strided_input(device):
    x = torch.randn(64, 48, device=device).t()
    check(lambda x: (aten.sum.dim_IntList(aten.exp.default(aten.mul.Tensor(x, 0.1)), [1]),), x, rtol=1e-5, atol=1e-5)


SPLIT_CASES = {
    "sum": lambda x: (aten.sum.default(x),),
    "mean_of_a_prologue": lambda x: (aten.mean.default(aten.mul.Tensor(x, x)),),
    "amax_with_nan": lambda x: (aten.amax.default(x, [0, 1]),),
    "few_long_rows": lambda x: (aten.sum.dim_IntList(x, [1]),),
    "over_the_first_dim": lambda x: (aten.amin.default(aten.permute.default(x, [1, 0]), [0]),),
    "var": lambda x: (aten.var.correction(x, None, correction=1),),
    "any": lambda x: (aten.any.default(aten.gt.Scalar(x, 3.5)),),
}


@pytest.mark.parametrize("name", sorted(SPLIT_CASES))
def test_split_reductions_match_eager(name, device, monkeypatch, tmp_path):
    # Split reductions are for GPUs; made to happen on CPU here, where both backends check them.
    from inductor.codegen.targets import BACKENDS
    from inductor.passes import split_reductions

    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))  # no unsplit graph from another test
    for target in BACKENDS.values():
        monkeypatch.setattr(target, "split_reductions_on", frozenset({"cpu", "cuda"}))
    monkeypatch.setattr(split_reductions, "SPLIT_MIN_PROGRAM_ELEMENTS", 2048)  # small enough for the interpreter
    monkeypatch.setattr(split_reductions, "SPLIT_MIN_CHUNK", {"outer": 16, "inner": 64})
    x = torch.randn(4, 4096, device=device)
    x = with_specials(x) if name == "amax_with_nan" else x
    compiled = check(SPLIT_CASES[name], x, rtol=1e-4, atol=1e-4)
    assert compiled.kernel_count >= 2  # partial reductions, then the reduction of the partials


EMPTY_REDUCTIONS = {
    "max": lambda x: (aten.max.default(x),),
    "amin": lambda x: (aten.amin.default(x, [1]),),
    "argmax": lambda x: (aten.argmax.default(x, 1),),
    "min.dim": lambda x: aten.min.dim(x, 1),
}


@pytest.mark.parametrize("name", EMPTY_REDUCTIONS)
def test_max_min_over_an_empty_dim_raise_like_eager(name, device):
    # Eager raises (IndexError or RuntimeError); the kernel returned the identity, -inf or inf.
    fn = EMPTY_REDUCTIONS[name]
    x = torch.randn(3, 0, device=device)
    with pytest.raises((IndexError, RuntimeError)) as eager:
        fn(x)
    with pytest.raises(type(eager.value), match="Expected reduction dim"):
        compile_aten(fn, [x])(x)
    check(lambda x: (aten.amax.default(x, [0]),), torch.randn(3, 0, device=device))  # over a non-empty dim: no error
