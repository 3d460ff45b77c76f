"""max-autotune's Triton matmul template (lowering/matmul_templates.py, runtime/matmul_template.py,
runtime/matmul_autotune.py): forced on (`max_autotune_gemm_backends="TRITON"`) it matches eager
for mm/addmm/bmm/baddbmm at odd sizes, any strides and fp32/fp16/bf16, on the first call and
with new values; an activation reading a matmul is applied in the template's store
(passes/matmul_epilogues.py); it never appears outside max-autotune, nor for symbolic sizes;
a timed choice is made once per problem and then read from memory or disk.

Without CUDA the template runs in Triton's interpreter on CPU tensors (`cpu_backend="triton"`),
where nothing is timed: tests of the choice replace the timer."""

from __future__ import annotations

import re

import pytest
import torch
import torch.fx

import inductor
from conftest import assert_same, assert_same_gradients, traced
from inductor.errors import InductorError
from inductor.runtime import matmul_autotune
from inductor.runtime.matmul_configs import matmul_configs
from test_dynamic_kernels import trace_dynamic

aten = torch.ops.aten
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TEMPLATE_CALL = "matmul_template_matmul("
FORCED = {"max_autotune": True, "max_autotune_gemm_backends": "TRITON"}
if DEVICE == "cpu":
    FORCED["cpu_backend"] = "triton"

MATMULS = {
    "mm": lambda a, b, bias: aten.mm.default(a, b),
    "addmm": lambda a, b, bias: aten.addmm.default(bias, a, b),
    "addmm_scaled": lambda a, b, bias: aten.addmm.default(bias, a, b, beta=0.5, alpha=2.0),
    "bmm": lambda a, b, bias: aten.bmm.default(a, b),
    "baddbmm": lambda a, b, bias: aten.baddbmm.default(bias, a, b, alpha=0.5),
}
BATCHED = {"bmm", "baddbmm"}
TOLERANCES = {torch.float32: {"rtol": 1e-4, "atol": 1e-4}, torch.float16: {"rtol": 1e-2, "atol": 1e-2},
              torch.bfloat16: {"rtol": 2e-2, "atol": 5e-2}}
# Not multiples of any block size.
M, N, K = 33, 17, 65


@pytest.fixture(autouse=True)
def _fresh_caches(tmp_path, monkeypatch):
    # Lowering runs in every test (no graph cache hits) and no choice is remembered across tests.
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(matmul_autotune, "_chosen", {})


def operands(op, dtype, *, layout="contiguous", m=M, n=N, k=K):
    """(a, b, bias) for `op`; `layout` stores `a` transposed, `b` transposed, or both as slices
    of larger tensors (non-unit strides everywhere)."""
    batch = (3,) if op in BATCHED else ()

    def make(*size, transposed=False, sliced=False):
        if transposed:
            return torch.randn(*size[:-2], size[-1], size[-2], dtype=dtype, device=DEVICE).transpose(-1, -2)
        if sliced:
            return torch.randn(*size[:-1], 2 * size[-1], dtype=dtype, device=DEVICE)[..., ::2]
        return torch.randn(*size, dtype=dtype, device=DEVICE)

    a = make(*batch, m, k, transposed=layout == "a_transposed", sliced=layout == "sliced")
    b = make(*batch, k, n, transposed=layout == "b_transposed", sliced=layout == "sliced")
    bias = torch.randn(n, dtype=dtype, device=DEVICE)
    return a, b, bias


def compile_matmul(op, inputs, **options):
    fn = MATMULS[op]
    return inductor.compile_aten_graph(torch.fx.symbolic_trace(lambda a, b, bias: (fn(a, b, bias),)), list(inputs),
                                       options=options)


def assert_matches_eager(compiled, op, make_inputs):
    """First call, then a call with new values: each equal to eager's, dtype and strides included."""
    for inputs in (make_inputs(), make_inputs()):
        (actual,), expected = compiled(*inputs), MATMULS[op](*inputs)
        assert actual.stride() == expected.stride()
        assert_same(actual, expected, **TOLERANCES[expected.dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("op", sorted(MATMULS))
def test_forced_template_matches_eager(op, dtype):
    compiled = compile_matmul(op, operands(op, dtype), **FORCED)
    assert TEMPLATE_CALL in compiled.source
    assert_matches_eager(compiled, op, lambda: operands(op, dtype))


@pytest.mark.parametrize("layout", ["a_transposed", "b_transposed", "sliced"])
@pytest.mark.parametrize("op", ["mm", "addmm", "bmm"])
def test_forced_template_reads_any_strides(op, layout):
    compiled = compile_matmul(op, operands(op, torch.float32, layout=layout), **FORCED)
    assert TEMPLATE_CALL in compiled.source
    assert_matches_eager(compiled, op, lambda: operands(op, torch.float32, layout=layout))


def test_linear_reads_its_transposed_weight_in_place():
    # nn.Linear's graph: addmm(bias, x, t(w)). The view is read through its strides, not copied.
    def linear(x, w, bias):
        return (aten.addmm.default(bias, x, aten.t.default(w)),)

    def inputs():
        return (torch.randn(M, K, device=DEVICE), torch.randn(N, K, device=DEVICE), torch.randn(N, device=DEVICE))

    compiled = inductor.compile_aten_graph(torch.fx.symbolic_trace(linear), list(inputs()), options=FORCED)
    assert TEMPLATE_CALL in compiled.source and compiled.kernel_count == 0
    for xs in (inputs(), inputs()):
        assert_same(compiled(*xs), linear(*xs), **TOLERANCES[torch.float32])


def test_training_step_through_templates_matches_eager(monkeypatch):
    # aot_autograd's forward and backward graphs: the backward's matmuls take transposed views.
    pytest.importorskip("aot_autograd")
    from inductor.runtime import matmul_template

    calls = []
    run = matmul_template.matmul
    monkeypatch.setattr(matmul_template, "matmul", lambda *args, **kwargs: calls.append(1) or run(*args, **kwargs))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(K, N), torch.nn.GELU(), torch.nn.Linear(N, 9)).to(DEVICE)
    x = torch.randn(M, K, device=DEVICE, requires_grad=True)
    compiled = inductor.compile_fx(traced(model), [x], options=FORCED)
    for _ in range(2):
        assert_same(compiled(x)[0], model(x), **TOLERANCES[torch.float32])
        assert_same_gradients(compiled, model, x, **TOLERANCES[torch.float32])
    # Each round runs the forward twice (2 matmuls) and the backward once (4: each layer's input
    # and weight gradients), every one through the template.
    assert len(calls) == 2 * (2 * 2 + 4)


@pytest.mark.parametrize("sizes", [(1, 1, 1), (16, 16, 16), (128, 64, 64), (5, 130, 7), (70, 3, 300)], ids=str)
def test_forced_template_at_small_and_uneven_sizes(sizes):
    m, n, k = sizes
    compiled = compile_matmul("addmm", operands("addmm", torch.float32, m=m, n=n, k=k), **FORCED)
    assert TEMPLATE_CALL in compiled.source
    assert_matches_eager(compiled, "addmm", lambda: operands("addmm", torch.float32, m=m, n=n, k=k))


@pytest.mark.parametrize("bias_shape", [(M, N), (M, 1), (1, N)], ids=str)
def test_addmm_bias_broadcasts_as_in_eager(bias_shape):
    def inputs():
        a, b, _ = operands("addmm", torch.float32)
        return a, b, torch.randn(bias_shape, device=DEVICE)

    compiled = compile_matmul("addmm", inputs(), **FORCED)
    assert TEMPLATE_CALL in compiled.source
    assert_matches_eager(compiled, "addmm", inputs)


@pytest.mark.parametrize("sizes", [(4, 5, 0), (0, 5, 3)], ids=str)
def test_empty_matmuls_keep_the_aten_call(sizes):
    m, n, k = sizes
    compiled = compile_matmul("addmm", operands("addmm", torch.float32, m=m, n=n, k=k), **FORCED)
    assert TEMPLATE_CALL not in compiled.source
    assert_matches_eager(compiled, "addmm", lambda: operands("addmm", torch.float32, m=m, n=n, k=k))


def test_addmm_with_beta_zero_ignores_nan_in_the_bias():
    # Eager's addmm ignores the bias when beta is 0, NaN and inf included.
    def fn(a, b, bias):
        return (aten.addmm.default(bias, a, b, beta=0.0),)

    def inputs():
        a, b, _ = operands("mm", torch.float32)
        return a, b, torch.full((N,), float("nan"), device=DEVICE)

    compiled = inductor.compile_aten_graph(torch.fx.symbolic_trace(fn), list(inputs()), options=FORCED)
    assert TEMPLATE_CALL in compiled.source
    for xs in (inputs(), inputs()):
        assert_same(compiled(*xs), fn(*xs), **TOLERANCES[torch.float32])


def test_template_output_feeds_generated_kernels():
    # The template's result is an ordinary buffer: a pointwise consumer reads it.
    def fn(a, b, bias):
        return (aten.relu.default(aten.addmm.default(bias, a, b)), aten.sum.dim_IntList(aten.mm.default(a, b), [0]))

    inputs = operands("mm", torch.float32)
    compiled = inductor.compile_aten_graph(torch.fx.symbolic_trace(fn), list(inputs), options=FORCED)
    assert compiled.source.count(TEMPLATE_CALL) == 2
    for xs in (inputs, operands("mm", torch.float32)):
        assert_same(compiled(*xs), fn(*xs), **TOLERANCES[torch.float32])


ACTIVATIONS = {
    "relu": lambda x: aten.relu.default(x),
    "gelu": lambda x: aten.gelu.default(x),
    "gelu_tanh": lambda x: aten.gelu.default(x, approximate="tanh"),
    "silu": lambda x: aten.silu.default(x),
    "sigmoid": lambda x: aten.sigmoid.default(x),
    "tanh": lambda x: aten.tanh.default(x),
}


def activation_of(op, activation):
    return lambda a, b, bias: (ACTIVATIONS[activation](MATMULS[op](a, b, bias)),)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_activation_is_applied_in_the_template(activation, dtype):
    op = "addmm" if dtype == torch.float32 else "baddbmm"
    fn = activation_of(op, activation)
    gm = torch.fx.symbolic_trace(fn)
    compiled = inductor.compile_aten_graph(gm, list(operands(op, dtype)), options=FORCED)
    assert f"epilogue={activation!r}" in compiled.source and compiled.kernel_count == 0
    for xs in (operands(op, dtype), operands(op, dtype)):
        assert_same(compiled(*xs), fn(*xs), **TOLERANCES[dtype])
        # Only meta marks the fold: the graph itself still computes the activation.
        assert_same(gm(*xs), fn(*xs))


@pytest.mark.parametrize("options", [{}, {"max_autotune": True}], ids=["default", "max-autotune-untimed"])
def test_activation_after_the_aten_call_stays_a_kernel(options, monkeypatch):
    # Where the aten call stays (default mode; nothing timed here), the activation is a kernel.
    monkeypatch.setattr(matmul_autotune, "can_time", lambda device: False)
    fn = activation_of("addmm", "gelu")
    triton = {"cpu_backend": "triton"} if DEVICE == "cpu" else {}
    compiled = inductor.compile_aten_graph(torch.fx.symbolic_trace(fn), list(operands("addmm", torch.float32)),
                                           options={**triton, **options})
    assert TEMPLATE_CALL not in compiled.source and compiled.kernel_count == 1
    for xs in (operands("addmm", torch.float32), operands("addmm", torch.float32)):
        assert_same(compiled(*xs), fn(*xs), **TOLERANCES[torch.float32])


def test_activation_read_through_a_view_is_applied_in_the_template():
    # A linear over [batch, seq, features]: mm on the flattened rows, a view back to 3-D, then
    # the activation; the activation moves before the view, into the template.
    def fn(x, w, bias):
        flat = aten.view.default(x, [2 * 5, K])
        product = aten.view.default(aten.addmm.default(bias, flat, aten.t.default(w)), [2, 5, N])
        return (aten.silu.default(product),)

    def inputs():
        return (torch.randn(2, 5, K, device=DEVICE), torch.randn(N, K, device=DEVICE), torch.randn(N, device=DEVICE))

    compiled = inductor.compile_aten_graph(torch.fx.symbolic_trace(fn), list(inputs()), options=FORCED)
    assert "epilogue='silu'" in compiled.source and compiled.kernel_count == 0
    for xs in (inputs(), inputs()):
        assert_same(compiled(*xs), fn(*xs), **TOLERANCES[torch.float32])


def test_activation_of_a_matmul_read_twice_is_not_folded():
    def fn(a, b, bias):
        product = aten.mm.default(a, b)
        return (aten.relu.default(product), product)

    inputs = operands("mm", torch.float32)
    compiled = inductor.compile_aten_graph(torch.fx.symbolic_trace(fn), list(inputs), options=FORCED)
    assert "epilogue='none'" in compiled.source and compiled.kernel_count == 1
    assert_same(compiled(*inputs), fn(*inputs), **TOLERANCES[torch.float32])


@pytest.mark.parametrize("options", [
    {},                                                          # default mode
    {"max_autotune_gemm_backends": "TRITON"},                    # backends named, max_autotune off
    {"max_autotune": True},                                      # nothing timed here: aten stays
    {"max_autotune": True, "max_autotune_gemm_backends": "ATEN"},
], ids=["default", "backends-only", "max-autotune-untimed", "aten-only"])
def test_template_not_emitted_unless_chosen(options, monkeypatch):
    monkeypatch.setattr(matmul_autotune, "can_time", lambda device: False)
    triton = {"cpu_backend": "triton"} if DEVICE == "cpu" else {}
    compiled = compile_matmul("addmm", operands("addmm", torch.float32), **triton, **options)
    assert TEMPLATE_CALL not in compiled.source
    assert "aten_addmm_default" in compiled.source or "torch.ops.aten.addmm" in compiled.source


@pytest.mark.skipif(DEVICE == "cuda", reason="the C++ backend is for CPU tensors")
def test_template_not_emitted_for_the_cpp_backend():
    compiled = compile_matmul("mm", operands("mm", torch.float32), max_autotune=True, max_autotune_gemm_backends="TRITON")
    assert TEMPLATE_CALL not in compiled.source


def test_symbolic_sizes_keep_the_aten_call():
    def fn(a, b):
        return (aten.mm.default(a, b),)

    example = [torch.randn(8, K, device=DEVICE), torch.randn(K, N, device=DEVICE)]
    gm = trace_dynamic(fn, example, {0: [0]})
    compiled = inductor.compile_aten_graph(gm, example, options=FORCED)
    assert TEMPLATE_CALL not in compiled.source
    for m in (8, 5, 40):
        xs = [torch.randn(m, K, device=DEVICE), torch.randn(K, N, device=DEVICE)]
        assert_same(compiled(*xs), fn(*xs), **TOLERANCES[torch.float32])


def test_unknown_gemm_backend_is_an_error_naming_the_valid_ones():
    with pytest.raises(InductorError, match="ATEN, TRITON"):
        compile_matmul("mm", operands("mm", torch.float32), max_autotune=True, max_autotune_gemm_backends="CUTLASS")


def test_configs_shrink_to_the_problem_and_stay_distinct():
    small, large = matmul_configs(M, N, K), matmul_configs(4096, 4096, 4096)
    for configs, (m, n, k) in ((small, (M, N, K)), (large, (4096, 4096, 4096))):
        assert len(set(configs)) == len(configs)
        for c in configs:
            assert 16 <= c.block_m <= max(16, 2 * m) and 16 <= c.block_n <= max(16, 2 * n)
            assert 16 <= c.block_k <= max(16, 2 * k)
    assert len(small) < len(large)


class FakeTimer:
    """Stands in for time_choices: records each call; the candidate at `fastest` wins."""

    def __init__(self, fastest):
        self.fastest = fastest
        self.calls = []

    def __call__(self, problem, candidates):
        self.calls.append((problem, list(candidates)))
        winner = candidates[self.fastest if isinstance(self.fastest, int) else candidates.index(self.fastest)]
        return [1.0 if c == winner else 2.0 for c in candidates]


@pytest.fixture
def fake_timing(monkeypatch):
    """Timing switched on for the test's device, with a FakeTimer the test configures."""
    timer = FakeTimer(fastest=1)  # the first template config
    monkeypatch.setattr(matmul_autotune, "can_time", lambda device: True)
    monkeypatch.setattr(matmul_autotune, "time_choices", timer)
    return timer


def test_timed_choice_is_cached_in_memory_and_on_disk(fake_timing, monkeypatch):
    # A timed choice runs the chosen template config; a second graph with the same matmul, and
    # a "new process" (memory cleared, the disk table kept), time nothing.
    triton = {"cpu_backend": "triton"} if DEVICE == "cpu" else {}
    inputs = operands("mm", torch.float32)
    first = compile_matmul("mm", inputs, max_autotune=True, **triton)
    [(problem, candidates)] = fake_timing.calls
    assert candidates[0] == matmul_autotune.ATEN and len(candidates) > 2
    chosen = candidates[1]
    assert f"block_m={chosen.block_m}, block_n={chosen.block_n}, block_k={chosen.block_k}" in first.source
    assert_matches_eager(first, "mm", lambda: operands("mm", torch.float32))

    def abs_of_mm(a, b, bias):  # (not an activation the template would apply: the same problem)
        return (aten.abs.default(aten.mm.default(a, b)),)

    second = inductor.compile_aten_graph(torch.fx.symbolic_trace(abs_of_mm), list(inputs),
                                         options={"max_autotune": True, **triton})
    assert TEMPLATE_CALL in second.source
    monkeypatch.setattr(matmul_autotune, "_chosen", {})
    third = inductor.compile_aten_graph(torch.fx.symbolic_trace(lambda a, b, bias: (aten.neg.default(aten.mm.default(a, b)),)),
                                        list(inputs), options={"max_autotune": True, **triton})
    assert TEMPLATE_CALL in third.source
    assert len(fake_timing.calls) == 1


_DAMAGED_CHOICES = {
    "an older format": lambda text: text.replace('"block_m"', '"block_rows"'),
    "not a table": lambda text: "[]",  # crashed every later compile of a matmul
    "a config the code does not make": lambda text: re.sub(r'"block_k": \d+', '"block_k": 3', text),  # ran it
}


@pytest.mark.parametrize("damage", sorted(_DAMAGED_CHOICES))
def test_an_unusable_stored_choice_is_timed_again(fake_timing, damage):
    triton = {"cpu_backend": "triton"} if DEVICE == "cpu" else {}
    inputs = operands("mm", torch.float32)
    compile_matmul("mm", inputs, max_autotune=True, **triton)
    path = matmul_autotune._choices_path()
    path.write_text(_DAMAGED_CHOICES[damage](path.read_text()))
    matmul_autotune._chosen.clear()
    neg_of_mm = torch.fx.symbolic_trace(lambda a, b, bias: (aten.neg.default(aten.mm.default(a, b)),))
    compiled = inductor.compile_aten_graph(neg_of_mm, list(inputs), options={"max_autotune": True, **triton})
    assert TEMPLATE_CALL in compiled.source and len(fake_timing.calls) == 2
    assert "block_k=3" not in compiled.source
    a, b, bias = operands("mm", torch.float32)
    torch.testing.assert_close(compiled(a, b, bias)[0], -(a @ b), rtol=1e-4, atol=1e-4)


def test_aten_wins_when_it_times_fastest(fake_timing):
    fake_timing.fastest = matmul_autotune.ATEN
    triton = {"cpu_backend": "triton"} if DEVICE == "cpu" else {}
    compiled = compile_matmul("addmm", operands("addmm", torch.float32), max_autotune=True, **triton)
    assert len(fake_timing.calls) == 1
    assert TEMPLATE_CALL not in compiled.source
    assert_matches_eager(compiled, "addmm", lambda: operands("addmm", torch.float32))


@pytest.mark.parametrize("op", ["addmm_scaled", "baddbmm"])
def test_every_timed_candidate_computes_the_matmul(op, monkeypatch):
    # What time_choices runs for each candidate (aten, each template config) on the problem's
    # layouts gives eager's result; the CUDA-event timer is replaced by one that keeps outputs.
    outputs = []
    monkeypatch.setattr(matmul_autotune, "_time_ms", lambda run: outputs.append(run()) or 1.0)
    a, b, bias = operands(op, torch.float32, layout="a_transposed")
    name = op.removesuffix("_scaled")
    problem = matmul_autotune.MatmulProblem(
        name, (tuple(a.shape), a.stride()), (tuple(b.shape), b.stride()), ((N,), (1,)), torch.float32,
        torch.device(DEVICE), alpha=2.0 if op == "addmm_scaled" else 0.5, beta=0.5 if op == "addmm_scaled" else 1.0)
    candidates = [matmul_autotune.ATEN, *matmul_configs(M, N, K)]
    assert matmul_autotune.time_choices(problem, candidates) == [1.0] * len(candidates)
    reference = outputs[0]
    for output in outputs[1:]:
        assert_same(output, reference, **TOLERANCES[torch.float32])


def test_a_new_layout_is_timed_again(fake_timing):
    triton = {"cpu_backend": "triton"} if DEVICE == "cpu" else {}
    compile_matmul("mm", operands("mm", torch.float32), max_autotune=True, **triton)
    compile_matmul("mm", operands("mm", torch.float32, layout="a_transposed"), max_autotune=True, **triton)
    compile_matmul("mm", operands("mm", torch.float16), max_autotune=True, **triton)
    assert len(fake_timing.calls) == 3


GPU_SIZES = [{"m": 256, "n": 384, "k": 512}, {"m": M, "n": N, "k": K}]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("backends", ["ATEN,TRITON", "TRITON"])
def test_max_autotune_matmuls_on_cuda_match_eager(dtype, backends, monkeypatch):
    # Real timing on the GPU. With tf32 off, an fp32 template must match eager's full-precision
    # result closely (tf32 dots would miss by ~1e-3).
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)
    for op in ("mm", "addmm_scaled", "bmm"):
        for sizes in GPU_SIZES:
            compiled = compile_matmul(op, operands(op, dtype, **sizes), max_autotune=True,
                                      max_autotune_gemm_backends=backends)
            if backends == "TRITON":
                assert TEMPLATE_CALL in compiled.source
            assert_matches_eager(compiled, op, lambda: operands(op, dtype, **sizes))


@pytest.mark.gpu
def test_fp32_template_follows_allow_tf32_on_cuda(monkeypatch):
    # The template reads the flag at each call, as eager's cuBLAS does: tf32 on gives eager's
    # tf32-rounded result, tf32 off the full-precision one.
    sizes = GPU_SIZES[0]
    compiled = compile_matmul("mm", operands("mm", torch.float32, **sizes), **FORCED)
    for allow in (True, False):
        monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", allow)
        tolerance = {"rtol": 1e-2, "atol": 5e-2} if allow else TOLERANCES[torch.float32]
        for inputs in (operands("mm", torch.float32, **sizes), operands("mm", torch.float32, **sizes)):
            (actual,), expected = compiled(*inputs), MATMULS["mm"](*inputs)
            torch.testing.assert_close(actual, expected, **tolerance)


@pytest.mark.gpu
def test_mode_max_autotune_with_cuda_graphs_matches_eager():
    def fn(a, b, bias):
        return (aten.relu.default(aten.addmm.default(bias, a, b)),)

    sizes = GPU_SIZES[0]
    inputs = operands("addmm", torch.float16, **sizes)
    compiled = inductor.compile_aten_graph(torch.fx.symbolic_trace(fn), list(inputs), mode="max-autotune")
    for _ in range(3):
        xs = operands("addmm", torch.float16, **sizes)
        assert_same(compiled(*xs), fn(*xs), **TOLERANCES[torch.float16])
