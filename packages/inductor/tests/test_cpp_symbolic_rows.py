"""Row reductions of symbolic length in the C++ backend run as fast as static ones, and match eager
at every size (vector widths' remainders and length 1 included): a causal-masked softmax (GPT-2's
eager attention) keeps its loops vectorized where GCC could cut them at the mask's
`column <= row` (codegen/cpp/kernel.py's NO_LOOP_SPLITTING), and a float sum over a row of
unknown length adds float partials per block of SUM_BLOCK elements, in double across blocks; a
value read back by a later loop over the same row (softmax's exponentials) is kept one row per
thread (long scratch rows), not written out at full size."""

from __future__ import annotations

import pytest
import torch

from conftest import assert_same, compile_graph, trace_dynamic

pytest.importorskip("fake_tensor")
aten = torch.ops.aten
FLOAT_MIN = torch.finfo(torch.float32).min


def _iota_mask(s):
    i = aten.arange.start_step(0, aten.sym_size.int(s, 3), 1, device=torch.device("cpu"))
    mask = aten.le.Tensor(aten.unsqueeze.default(i, 0), aten.unsqueeze.default(i, 1))
    return (aten._softmax.default(aten.where.ScalarOther(mask, aten.mul.Tensor(s, 0.25), FLOAT_MIN), -1, False),)


def _input_mask(s, mask):
    masked = aten.where.ScalarOther(mask, aten.mul.Tensor(s, 0.25), float("-inf"))
    return (aten._softmax.default(masked, -1, False),)


CASES = {"iota mask, -FLT_MAX": _iota_mask, "bool mask input, -inf": _input_mask}


def _inputs(case, n):
    scores = torch.randn(2, 3, n, n) * 4
    return [scores] if case == "iota mask, -FLT_MAX" else [scores, torch.ones(n, n, dtype=torch.bool).tril()]


@pytest.fixture(scope="module", params=sorted(CASES))
def compiled(request):
    case = request.param
    example = _inputs(case, 8)
    dynamic = {0: [2, 3], 1: [0, 1]}
    return case, compile_graph(trace_dynamic(CASES[case], example, dynamic), example)


def test_masked_softmax_matches_eager_at_every_size(compiled):
    case, graph = compiled
    for n in (8, 8, 1, 5, 17, 33):  # the traced size twice (new values), then new sizes
        xs = _inputs(case, n)
        assert_same(graph(*xs), CASES[case](*xs), rtol=1e-5, atol=1e-6)


def test_kernels_with_float_reductions_are_not_loop_split(compiled):
    _, graph = compiled
    assert "s0" in graph.source  # the sizes are symbolic
    sources = list(graph.kernel_sources.values())
    assert any("simd reduction(" in s for s in sources)
    for source in sources:
        reduces = "simd reduction(" in source
        assert ('optimize("no-split-loops")' in source) == reduces, source


def test_pointwise_kernels_keep_loop_splitting():
    # A pad's edge conditions split into branch-free loops, which vectorize without the pragma.
    def fn(x):
        return (aten.mul.Tensor(aten.constant_pad_nd.default(x, [1, 1]), 2.0),)

    example = [torch.randn(4, 9)]
    graph = compile_graph(trace_dynamic(fn, example, {0: [0, 1]}), example)
    assert not any("no-split-loops" in s for s in graph.kernel_sources.values())
    for shape in ((4, 9), (1, 1), (3, 33)):
        x = torch.randn(*shape)
        assert_same(graph(x), fn(x))


def _row_sums(x):
    return (aten.sum.dim_IntList(x, [1]), aten._softmax.default(x, -1, False), aten._log_softmax.default(x, -1, False))


def test_symbolic_rows_sum_in_float_blocks():
    example = [torch.rand(3, 8)]
    graph = compile_graph(trace_dynamic(_row_sums, example, {0: [1]}), example)
    sources = "\n".join(graph.kernel_sources.values())
    assert "r0_block" in sources and "float acc" in sources and "reduction(+:acc" in sources, sources
    assert not any("reduction(+:" in line and "_part" not in line for line in sources.splitlines()), sources
    for n in (8, 1, 7, 4095, 4096, 4097, 9001):  # one block, a block exactly, a block and one more
        x = torch.randn(3, n) * 3
        (total, *softmaxes), (eager_total, *eager_softmaxes) = graph(x), _row_sums(x)
        # A sum of 9001 values around 300 rounds apart from eager's by up to ~6e-4.
        assert_same(total, eager_total, rtol=1e-5, atol=2e-3)
        assert_same(softmaxes, eager_softmaxes, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dynamic", [{}, {0: [1]}], ids=["static", "symbolic"])
def test_a_long_row_sum_is_as_close_to_the_exact_sum_as_eagers(dynamic):
    # 300k positive values a row: float partials over the whole row drifted (6e-6 relative at
    # 1M); per block of 4096 they stay as close as double ones.
    x = torch.rand(3, 300_001)
    graph = compile_graph(trace_dynamic(lambda x: (aten.sum.dim_IntList(x, [1]),), [x], dynamic), [x])
    (ours,) = graph(x)
    exact = x.double().sum(1)
    assert ((ours.double() - exact).abs() / exact).max() < 1e-6


@pytest.mark.parametrize("dynamic", [{0: [0, 1]}, {}], ids=["symbolic", "static, longer than a stack row"])
def test_a_softmax_row_is_kept_per_thread_not_written_out(dynamic):
    fn = lambda x: (aten._softmax.default(x, -1, False),)  # noqa: E731
    example = [torch.randn(4, 20_000) if not dynamic else torch.randn(6, 8)]
    graph = compile_graph(trace_dynamic(fn, example, dynamic), example)
    [kernel] = graph.kernel_sources.values()
    assert "ptc_scratch_rows" in kernel and "out_ptr1" not in kernel, kernel  # one output: the result
    # 64000 elements and more run on several threads, each with its own row.
    shapes = [(4, 20_000)] if not dynamic else [(6, 8), (6, 8), (64, 1000), (3, 4097), (2, 1), (300, 33)]
    for shape in shapes:
        x = torch.randn(*shape) * 3
        assert_same(graph(x), fn(x), rtol=1e-5, atol=1e-6)


def test_scratch_rows_that_cannot_be_allocated_raise_memory_error():
    from inductor.runtime.kernel_errors import OUT_OF_MEMORY, kernel_error

    assert isinstance(kernel_error(OUT_OF_MEMORY, "kernel.cpp"), MemoryError)
