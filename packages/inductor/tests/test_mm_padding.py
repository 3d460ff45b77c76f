"""Padding misaligned matmuls (lowering/matmul_padding.py): padded results equal eager's, with
eager's shapes and strides, forward and backward; aligned matmuls, and matmuls where the option
is off, run as the plain extern."""

from __future__ import annotations

import pytest
import torch
import torch.fx

import inductor
from conftest import backend_options, compile_aten, compile_graph, per_backend, trace_dynamic, traced, uses_triton
from inductor.lowering import matmul_padding
from inductor.lowering.matmul_padding import MatmulShape, padding_pays

aten = torch.ops.aten

ALIGNED = {"m": 24, "n": 40, "k": 32}
# Sizes one short of / past a multiple of 8 (and so of 4): misaligned for bf16 and fp32 alike.
MISALIGNED = {"m": 27, "n": 41, "k": 35}

MATMULS = {
    "mm": lambda a, b, bias: aten.mm.default(a, b),
    "addmm": lambda a, b, bias: aten.addmm.default(bias, a, b, beta=0.5, alpha=2.0),
    "bmm": lambda a, b, bias: aten.bmm.default(a, b),
    "baddbmm": lambda a, b, bias: aten.baddbmm.default(bias, a, b),
}
BATCH = {"mm": (), "addmm": (), "bmm": (3,), "baddbmm": (3,)}
TOLERANCES = {torch.float32: {"rtol": 1e-4, "atol": 1e-4}, torch.bfloat16: {"rtol": 2e-2, "atol": 5e-2}}


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    # Lowering must run in every test (padded_shapes records its decisions): no cache hits.
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))


def operands(op, sizes, dtype, device, *, a_column_major=False):
    batch = BATCH[op]
    m, n, k = sizes["m"], sizes["n"], sizes["k"]
    a = torch.randn(*batch, k, m, dtype=dtype, device=device).transpose(-1, -2) if a_column_major else \
        torch.randn(*batch, m, k, dtype=dtype, device=device)
    b = torch.randn(*batch, k, n, dtype=dtype, device=device)
    bias = torch.randn(n, dtype=dtype, device=device)
    return a, b, bias


def run_both(op, inputs, setting):
    fn = MATMULS[op]
    compiled = compile_aten(lambda a, b, bias: (fn(a, b, bias),), list(inputs), pad_mm=setting)
    (actual,), expected = compiled(*inputs), fn(*inputs)
    return compiled, actual, expected


def assert_like_eager(actual, expected):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert actual.stride() == expected.stride()
    torch.testing.assert_close(actual, expected, **TOLERANCES[expected.dtype])


# (misaligned sizes, `a` stored column-major): M is a row length only when `a` is column-major,
# K only when it is row-major (or `b` column-major), N always.
PADDED_CASES = {"n": ("n", False), "k": ("k", False), "m": ("m", True), "mnk": ("mnk", False), "mnk-a-transposed": ("mnk", True)}


def _padded_cases(on_cpp):
    """Every (op, dtype, case) on Triton; on C++ the `on_cpp` ones. Padding is a lowering decided
    before code generation, the same for every backend, and C++ matmuls are never padded by
    default (pad_mm=None pads CUDA ones): what C++ does itself, the pad copies and the slice of
    each op, each dtype and each case, still compiles once (~1.5 s of g++ per case)."""
    every = [(op, dtype, case) for op in sorted(MATMULS) for dtype in (torch.bfloat16, torch.float32)
             for case in sorted(PADDED_CASES)]
    assert set(on_cpp) <= set(every) and {op for op, _, _ in on_cpp} == set(MATMULS)
    assert {d for _, d, _ in on_cpp} == {torch.bfloat16, torch.float32} and {c for *_, c in on_cpp} == set(PADDED_CASES)
    return per_backend(every, on_cpp)


@pytest.mark.parametrize("device, op, dtype, case", _padded_cases([
    ("addmm", torch.bfloat16, "k"), ("baddbmm", torch.float32, "m"), ("bmm", torch.bfloat16, "mnk"),
    ("mm", torch.float32, "mnk-a-transposed"), ("mm", torch.bfloat16, "n")]), indirect=["device"])
def test_padded_matmul_matches_eager(device, op, dtype, case):
    misaligned, a_column_major = PADDED_CASES[case]
    sizes = {d: (MISALIGNED if d in misaligned else ALIGNED)[d] for d in "mnk"}
    compiled, actual, expected = run_both(op, operands(op, sizes, dtype, device, a_column_major=a_column_major), True)
    assert_like_eager(actual, expected)
    assert compiled.kernel_count > 0, "the misaligned operands were not padded"


def test_misaligned_rows_of_a_row_major_operand_are_not_padded(device):
    # M is the row count of a row-major `a`: no row starts misaligned, nothing to pad.
    sizes = {**ALIGNED, "m": MISALIGNED["m"]}
    compiled, actual, expected = run_both("mm", operands("mm", sizes, torch.bfloat16, device), True)
    assert_like_eager(actual, expected)
    assert compiled.kernel_count == 0


@pytest.mark.parametrize("computed", [False, True], ids=["stored", "computed"])
def test_padded_transposed_weight_matches_eager(device, computed):
    # A Linear's weight reaches mm as a transposed view, of the weight itself (padded in the
    # order it is stored) or of a value computed from it (autocast's cast to bf16).
    x, w = torch.randn(27, 35, device=device), torch.randn(41, 35, device=device)
    weight = (lambda w: aten._to_copy.default(w, dtype=torch.bfloat16)) if computed else (lambda w: w)
    cast = (lambda x: aten._to_copy.default(x, dtype=torch.bfloat16)) if computed else (lambda x: x)
    fn = lambda x, w: (aten.mm.default(cast(x), aten.t.default(weight(w))),)
    compiled = compile_aten(fn, [x, w], pad_mm=True)
    assert_like_eager(compiled(x, w)[0], fn(x, w)[0])
    assert compiled.kernel_count > 0


def test_padded_result_fuses_into_its_reader(device):
    a, b, _ = operands("mm", MISALIGNED, torch.bfloat16, device)
    fn = lambda a, b: (aten.relu.default(aten.mm.default(a, b)), aten.sum.dim_IntList(aten.mm.default(a, b), [1]))
    compiled = compile_aten(fn, [a, b], pad_mm=True)
    for actual, expected in zip(compiled(a, b), fn(a, b)):
        assert_like_eager(actual, expected)


def test_logits_gradient_is_padded_once_for_both_weight_and_input_gradients(device):
    # An LM head's backward: grad @ W pads grad along K; grad.T @ x pads grad.T along M, which is
    # the same padded bytes. One copy serves both: kernels pad grad, pad W, and copy the weight
    # gradient out of its padded result (Triton runs the two pads, which read only inputs, as
    # one combo launch).
    g, w, x = (torch.randn(*s, dtype=torch.bfloat16, device=device) for s in [(24, 41), (41, 16), (24, 16)])
    fn = lambda g, w, x: (aten.mm.default(g, w), aten.mm.default(aten.t.default(g), x))
    compiled = compile_aten(fn, [g, w, x], pad_mm=True)
    for actual, expected in zip(compiled(g, w, x), fn(g, w, x)):
        assert_like_eager(actual, expected)
    assert compiled.kernel_count == (2 if uses_triton(device) else 3)


@pytest.mark.parametrize("op", sorted(MATMULS))
def test_aligned_matmul_is_not_padded(device, op):
    compiled, actual, expected = run_both(op, operands(op, ALIGNED, torch.bfloat16, device), True)
    assert_like_eager(actual, expected)
    assert compiled.kernel_count == 0


@pytest.mark.parametrize("setting", [False, None], ids=["off", "default-on-cpu"])
def test_misaligned_matmul_is_not_padded_unless_asked(device, setting):
    # The default pads CUDA matmuls only; these tests' tensors are CPU ones.
    compiled, actual, expected = run_both("mm", operands("mm", MISALIGNED, torch.bfloat16, device), setting)
    assert_like_eager(actual, expected)
    assert compiled.kernel_count == 0


@pytest.mark.gpu
@pytest.mark.parametrize("misaligned", ["n", "k"])
def test_default_pads_large_misaligned_cuda_matmul(misaligned):
    # An LM head's forward (N = vocabulary) and input gradient (K = vocabulary), scaled down but
    # still past the cost rule's threshold.
    sizes = {"m": 1024, "n": 256, "k": 256, misaligned: 8001}
    inputs = operands("mm", sizes, torch.bfloat16, "cuda")
    compiled, actual, expected = run_both("mm", inputs, None)
    assert_like_eager(actual, expected)
    assert compiled.kernel_count > 0


def test_integer_matmul_is_not_padded(device):
    if device == "cuda":
        pytest.skip("eager has no integer matmul on CUDA (addmm_cuda is not implemented for Long)")
    a, b = torch.randint(-5, 5, (27, 35), device=device), torch.randint(-5, 5, (35, 41), device=device)
    compiled = compile_aten(lambda a, b: (aten.mm.default(a, b),), [a, b], pad_mm=True)
    assert torch.equal(compiled(a, b)[0], aten.mm.default(a, b))
    assert compiled.kernel_count == 0


@pytest.mark.parametrize(("m", "n", "k", "pays"), [
    (4096, 50257, 768, True),    # GPT-2 LM head forward: only the weight is padded
    (4096, 768, 50257, True),    # its input gradient: the logits' gradient padded along K
    (50257, 768, 4096, True),    # its weight gradient: the transposed logits' gradient along M
    (27, 41, 35, False),         # small: copying costs more than the faster kernel saves
    (64, 1001, 64, False),
])
def test_cost_rule_pads_large_matmuls_only(m, n, k, pays):
    assert padding_pays(MatmulShape(m, n, k, 1, torch.bfloat16)) is pays


@pytest.fixture
def padded_shapes(monkeypatch):
    """The shapes of the matmuls that were padded while the test lowered its graphs."""
    found = []
    decide = matmul_padding.should_pad

    def recording(shape, device):
        padded = decide(shape, device)
        if padded:
            found.append(shape)
        return padded

    monkeypatch.setattr(matmul_padding, "should_pad", recording)
    return found


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_linear_with_odd_out_features_trains_as_eager(device, dtype, padded_shapes):
    # An LM head scaled down: out_features=1001 is misaligned in the forward (N), the input
    # gradient (K) and the weight gradient (M).
    pytest.importorskip("aot_autograd")
    model = torch.nn.Linear(64, 1001, bias=True).to(device=device, dtype=dtype)
    x = torch.randn(2, 12, 64, device=device, dtype=dtype, requires_grad=True)
    compiled = inductor.compile_fx(traced(model), [x], options={**backend_options(), "pad_mm": True})
    # The backward compiles lazily, in `.backward()` (on CUDA, on autograd's device thread).
    out = compiled(x)[0]
    out.float().pow(2).sum().backward()
    ours = [out.detach(), x.grad.clone(), *(p.grad.clone() for p in model.parameters())]
    x.grad = None
    model.zero_grad()
    expected = model(x)
    expected.float().pow(2).sum().backward()
    for actual, want in zip(ours, [expected.detach(), x.grad, *(p.grad for p in model.parameters())]):
        assert actual.stride() == want.stride()
        torch.testing.assert_close(actual, want, rtol=TOLERANCES[dtype]["rtol"], atol=TOLERANCES[dtype]["atol"] * want.abs().max().item())
    assert {s.m for s in padded_shapes} | {s.n for s in padded_shapes} | {s.k for s in padded_shapes} >= {1001}
    assert len(padded_shapes) >= 3, padded_shapes


def test_inference_returns_the_padded_result_as_a_strided_view(device):
    # As torch.compile does: logits [2, 12, 1001] read in place from the [24, 1008] matmul result
    # (dims in eager's order), not copied dense. A training forward keeps eager's strides: the
    # backward was traced to read its outputs with them.
    pytest.importorskip("aot_autograd")
    model = torch.nn.Linear(64, 1001, bias=False).to(device)
    x = torch.randn(2, 12, 64, device=device)
    with torch.no_grad():
        compiled = inductor.compile_fx(traced(model), [x], options={**backend_options(), "pad_mm": True})
        out, expected = compiled(x)[0], model(x)
    assert out.shape == expected.shape and out.stride() == (12 * 1004, 1004, 1)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("pad_mm", [True, False])
def test_pad_mm_compile_option(device, pad_mm, padded_shapes):
    inputs = operands("mm", MISALIGNED, torch.float32, device)
    fn = MATMULS["mm"]
    gm = torch.fx.symbolic_trace(lambda a, b, bias: (fn(a, b, bias),))
    compiled = inductor.compile_aten_graph(gm, list(inputs), options={**backend_options(), "pad_mm": pad_mm})
    assert_like_eager(compiled(*inputs)[0], fn(*inputs))
    assert bool(padded_shapes) == pad_mm


@pytest.mark.parametrize("op", ["mm", "addmm"])
def test_static_sizes_are_padded_beside_a_symbolic_token_count(device, op, padded_shapes):
    # Under dynamic shapes a language model's head is [tokens, K] @ [K, vocab]: the token count
    # is symbolic, the vocabulary (odd, as GPT-2's 50257) static. The static sizes are padded
    # (cuBLAS's slow kernel otherwise), the symbolic one never is, and one graph serves every
    # token count with eager's values and strides (fp32 rows align to 4 elements).
    fn = MATMULS[op]

    def inputs(tokens):
        a, b, bias = operands(op, {"m": tokens, "n": 41, "k": 35}, torch.float32, device)
        return [a, b, bias]

    graph = trace_dynamic(lambda a, b, bias: (fn(a, b, bias),), inputs(27), {0: [0]})
    compiled = compile_graph(graph, inputs(27), pad_mm=True)
    assert "s0" in compiled.source
    assert [(s.m, s.n + s.padding()[1], s.k + s.padding()[2]) for s in padded_shapes] == \
        [(padded_shapes[0].m, 44, 36)] and not isinstance(padded_shapes[0].m, int)
    for tokens in (27, 9, 64):
        xs = inputs(tokens)
        (actual,), expected = compiled(*xs), fn(*xs)
        assert_like_eager(actual, expected)
