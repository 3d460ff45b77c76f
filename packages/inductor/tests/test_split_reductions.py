"""Split reductions (passes/split_reductions.py): a reduction to few outputs over a long axis
runs as partial reductions over chunks plus one over the partials, with eager's results.

Splitting is for GPUs; these tests turn it on for CPU tensors too, with small chunk limits, so
that both backends (C++ and the Triton interpreter) run split kernels at interpreter sizes.
"""

from __future__ import annotations

import pytest
import torch
import torch.fx

import inductor
from conftest import backend_options, check, per_backend, record_split_plans
from inductor.codegen.targets import BACKENDS
from inductor.passes import split_reductions

aten = torch.ops.aten


@pytest.fixture
def split_log(monkeypatch, tmp_path):
    """(buffer name, chunk count) of each reduction split while the test runs."""
    # A graph compiled (unsplit) by another test must not come back from the on-disk cache.
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))
    return record_split_plans(monkeypatch)


@pytest.fixture
def splits(monkeypatch, split_log):
    """Split on every device at small sizes; returns the split log."""
    for target in BACKENDS.values():
        monkeypatch.setattr(target, "split_reductions_on", frozenset({"cpu", "cuda"}))
    monkeypatch.setattr(split_reductions, "SPLIT_MIN_CHUNK", {"outer": 16, "inner": 64})
    monkeypatch.setattr(split_reductions, "SPLIT_MIN_PROGRAM_ELEMENTS", 512)
    return split_log


# (shape, reduced dim): outer reductions (strided reduced axis, like a bias gradient) and inner
# ones (contiguous rows, like a per-sample loss), long enough to split, some into a chunk
# count that is not a power of two.
SPLIT_SHAPES = {
    "outer": ((256, 24), 0), "inner": ((4, 1024), 1), "outer_3d": ((4, 64, 12), [0, 1]),
    "outer_odd": ((255, 24), 0), "inner_odd": ((3, 1001), 1),  # 15 chunks of 17, 13 chunks of 77
}


def _input(kind: str, shape, dtype, device):
    if kind in ("any", "all"):
        return torch.randn(shape, device=device) > (-2.5 if kind == "all" else 2.5)
    if kind == "prod":
        if dtype == torch.int64:
            return (torch.rand(shape, device=device) < 0.01).to(dtype) + 1  # products stay within int64
        return (torch.rand(shape, device=device) * 0.1 + 0.95).to(dtype)
    if dtype == torch.int64:
        return torch.randint(-100, 100, shape, device=device)
    return torch.randn(shape, device=device, dtype=dtype)


REDUCTIONS = {
    "sum": lambda x, dim, keepdim: aten.sum.dim_IntList(x, dim, keepdim),
    "mean": lambda x, dim, keepdim: aten.mean.dim(x, dim, keepdim),
    "amax": lambda x, dim, keepdim: aten.amax.default(x, dim, keepdim),
    "amin": lambda x, dim, keepdim: aten.amin.default(x, dim, keepdim),
    "prod": lambda x, dim, keepdim: aten.prod.dim_int(x, dim if isinstance(dim, int) else dim[0], keepdim),
    "any": lambda x, dim, keepdim: aten.any.dims(x, dim if isinstance(dim, list) else [dim], keepdim),
    "all": lambda x, dim, keepdim: aten.all.dims(x, dim if isinstance(dim, list) else [dim], keepdim),
    "var": lambda x, dim, keepdim: aten.var.correction(x, dim, correction=1, keepdim=keepdim),
}
SINGLE_DIM = {"prod"}


def _tolerances(dtype, kind):
    if dtype == torch.bfloat16:
        return {"rtol": 2e-2, "atol": 0.25}  # one bf16 rounding of a sum of hundreds of terms
    return {"rtol": 1e-4, "atol": 1e-4} if dtype.is_floating_point else {}


def _split_cases(kinds, on_cpp):
    """Every (kind, layout) on Triton; on C++ the `on_cpp` pairs. C++ never splits outside these
    tests (the pass leaves its reductions whole: OpenMP spreads them), and the split is a graph
    rewrite before code generation, the same for every backend; what is C++'s own, the kernels
    of partials (a reduction over a chunked view) and of their combination, each kind and each
    layout still compiles once (~1 s of g++ per case)."""
    every = [(kind, layout) for kind in sorted(kinds) for layout in sorted(SPLIT_SHAPES)
             if not (kind in SINGLE_DIM and isinstance(SPLIT_SHAPES[layout][1], list))]
    assert set(on_cpp) <= set(every) and {k for k, _ in on_cpp} == set(kinds)
    assert {layout for _, layout in on_cpp} == set(SPLIT_SHAPES)
    return per_backend(every, on_cpp)


@pytest.mark.parametrize("device, kind, layout", _split_cases(REDUCTIONS, [
    ("all", "inner"), ("amax", "inner_odd"), ("amin", "outer"), ("any", "outer_3d"), ("mean", "outer_odd"),
    ("prod", "inner"), ("sum", "inner_odd"), ("var", "outer")]), indirect=["device"])
def test_split_reduction_matches_eager(kind, layout, device, splits):
    shape, dim = SPLIT_SHAPES[layout]
    x = _input(kind, shape, torch.float32, device)
    check(lambda x: (REDUCTIONS[kind](x, dim, False),), x, **_tolerances(x.dtype, kind))
    assert splits, "the reduction was expected to split"


@pytest.mark.parametrize("device, kind, layout", _split_cases(
    ["sum", "amax"], [("sum", "inner_odd"), ("amax", "outer_3d"), ("sum", "outer"), ("amax", "inner"),
                      ("sum", "outer_odd")]), indirect=["device"])
def test_split_reduction_with_keepdim_matches_eager(kind, layout, device, splits):
    shape, dim = SPLIT_SHAPES[layout]
    x = torch.randn(shape, device=device)
    check(lambda x: (REDUCTIONS[kind](x, dim, True),), x, rtol=1e-4, atol=1e-4)
    assert splits


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
@pytest.mark.parametrize("kind", ["sum", "amax", "prod"])
@pytest.mark.parametrize("layout", ["outer", "inner"])
def test_split_reduction_keeps_eagers_dtype(kind, dtype, layout, device, splits):
    if kind == "prod" and dtype == torch.bfloat16:
        pytest.skip("eager's CPU prod of bfloat16 accumulates in bfloat16: no reference for a float32 accumulator")
    shape, dim = SPLIT_SHAPES[layout]
    x = _input(kind, shape, dtype, device)
    check(lambda x: (REDUCTIONS[kind](x, dim, False),), x, **_tolerances(dtype, kind))
    assert splits


@pytest.mark.parametrize("dim", [0, 1])
def test_split_reduction_of_a_transposed_input_matches_eager(dim, device, splits):
    # Reducing dim 1 of a transpose reads memory along its rows: an outer reduction in disguise.
    x = torch.randn(1024, 24, device=device).t() if dim == 1 else torch.randn(24, 1024, device=device).t()
    check(lambda x: (aten.sum.dim_IntList(x, [dim]), aten.amax.default(x, [dim])), x, rtol=1e-4, atol=1e-4)
    assert splits


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_index_reductions_stay_whole(name, device, splits):
    x = torch.randn(256, 24, device=device)
    check(lambda x: (getattr(aten, name).default(x, 0),), x)
    assert not splits


@pytest.mark.parametrize("shape, dim", [((32, 48), 0), ((2048, 128), 1), ((3, 1009), 1), ((1, 256), 1)],
                         ids=["short", "many_outputs", "prime_length", "little_work"])
def test_reduction_that_does_not_pay_stays_whole(shape, dim, device, splits):
    # Too short a reduced axis, enough outputs to fill the GPU, a length no chunk count divides,
    # or too little work in all for a second launch to pay.
    x = torch.randn(shape, device=device)
    check(lambda x: (aten.sum.dim_IntList(x, [dim], False),), x, rtol=1e-4, atol=1e-4)
    assert not splits


def test_outer_partials_take_short_chunks(device, splits, monkeypatch):
    # Few programs suffice here, but an outer partial stays short enough for a persistent kernel.
    monkeypatch.setattr(split_reductions, "SPLIT_TARGET_PROGRAMS", 4)
    monkeypatch.setattr(split_reductions, "SPLIT_MAX_OUTER_CHUNK", 32)
    x = torch.randn(512, 24, device=device)
    check(lambda x: (aten.sum.dim_IntList(x, [0]),), x, rtol=1e-4, atol=1e-4)
    [(_, count)] = splits
    assert 512 // count <= 32


def test_layer_norm_weight_grad_kernels_are_outer_reductions(device, splits):
    # The per-row mean and rstd are indexed by the reduced dim alone: the [rows, hidden] loads,
    # contiguous along the outputs, decide the block shape (many outputs, few rows per tile).
    if device == "cpu" and backend_options().get("cpu_backend") != "triton":
        pytest.skip("a property of Triton kernels")
    g, x = torch.randn(256, 24, device=device), torch.randn(256, 24, device=device)
    mean, rstd = torch.randn(256, 1, device=device), torch.rand(256, 1, device=device) + 0.5

    def weight_grad(g, x, mean, rstd):
        return (aten.sum.dim_IntList(aten.mul.Tensor(g, aten.mul.Tensor(aten.sub.Tensor(x, mean), rstd)), [0]),)

    compiled = check(weight_grad, g, x, mean, rstd, rtol=1e-4, atol=1e-4)
    assert splits
    assert all("OUTER_REDUCTION = True" in source for source in compiled.kernel_sources.values())


def test_prologue_fuses_into_partials_and_epilogue_after_the_final_stage(device, splits):
    x, y = torch.randn(256, 24, device=device), torch.randn(256, 24, device=device)
    compiled = check(lambda x, y: (aten.tanh.default(aten.sum.dim_IntList(aten.mul.Tensor(x, y), [0])),), x, y,
                     rtol=1e-4, atol=1e-4)
    assert splits
    assert compiled.kernel_count == 2  # partials (with x * y), then the final sum with its tanh


def test_reductions_of_one_input_share_the_split_kernels(device, splits):
    x = torch.randn(4, 1024, device=device)
    compiled = check(lambda x: (aten.sum.dim_IntList(x, [1]), aten.amax.default(x, [1])), x, rtol=1e-4, atol=1e-4)
    assert len(splits) == 2
    assert compiled.kernel_count == 2


def test_layer_norm_backward_weight_and_bias_grads_split(device, splits):
    pytest.importorskip("aot_autograd")
    model = torch.nn.LayerNorm(24).to(device)
    torch.nn.init.normal_(model.weight)
    torch.nn.init.normal_(model.bias)
    x = torch.randn(256, 24, device=device, requires_grad=True)
    gm = torch.fx.symbolic_trace(model)
    output = next(n for n in gm.graph.nodes if n.op == "output")
    output.args = ((output.args[0],),)
    gm.recompile()
    compiled = inductor.compile_fx(gm, [x], options=backend_options())
    grad = torch.randn(256, 24, device=device)
    compiled(x)[0].backward(grad)
    ours = [model.weight.grad.clone(), model.bias.grad.clone(), x.grad.clone()]
    model.zero_grad()
    x.grad = None
    model(x).backward(grad)
    for a, e in zip(ours, [model.weight.grad, model.bias.grad, x.grad]):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)
    assert len(splits) >= 2  # the weight and the bias gradient


@pytest.mark.gpu
@pytest.mark.parametrize("rows, cols, dtype", [(4096, 768, torch.float32), (4096, 3072, torch.bfloat16),
                                               (8192, 4096, torch.bfloat16)])
def test_model_sized_bias_and_layer_norm_grads_split_on_gpu(rows, cols, dtype, split_log):
    # GPT-2 (4096 tokens: hidden 768, MLP 3072) and the MLP benchmark (8192 rows of 4096), with
    # the default thresholds: the bias gradient and the LayerNorm weight gradient both split.
    g = torch.randn(rows, cols, device="cuda", dtype=dtype)
    xhat = torch.randn(rows, cols, device="cuda", dtype=dtype)

    def grads(g, xhat):
        return (aten.sum.dim_IntList(g, [0]), aten.sum.dim_IntList(aten.mul.Tensor(g, xhat), [0]))

    compiled = inductor.compile_aten_graph(torch.fx.symbolic_trace(grads), [g, xhat])
    expected = [e.float() for e in grads(g.float(), xhat.float())]
    for actual, reference in zip(compiled(g, xhat), expected):
        torch.testing.assert_close(actual.float(), reference, rtol=2e-2, atol=2e-2 * rows**0.5)
    assert len(split_log) == 2
