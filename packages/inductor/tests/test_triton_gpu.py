"""On a CUDA GPU: CUDA graphs for mode="reduce-overhead", block-size autotuning and its cache,
and graphs mixing CUDA tensors with CPU scalars. Skipped without CUDA (the op test list runs
on CUDA through the shared `device` fixture)."""

from __future__ import annotations

import json
import re

import pytest
import torch
import torch.fx

import inductor
from conftest import assert_same

aten = torch.ops.aten
pytestmark = pytest.mark.gpu


def compile_cuda(fn, inputs, mode=None):
    return inductor.compile_aten_graph(torch.fx.symbolic_trace(fn), inputs, mode=mode)


def softmax_of_sum(x, w):
    return (aten._softmax.default(aten.add.Tensor(x, w), -1, False), aten.sum.dim_IntList(x, [0]))


def test_reduce_overhead_replays_a_cuda_graph_with_fresh_inputs_each_call():
    w = torch.randn(300, device="cuda")
    compiled = compile_cuda(softmax_of_sum, [torch.randn(64, 300, device="cuda"), w], mode="reduce-overhead")
    assert type(compiled).__name__ == "CudaGraphRunner"
    for _ in range(4):
        x = torch.randn(64, 300, device="cuda")
        assert_same(compiled(x, w), softmax_of_sum(x, w), rtol=1e-5, atol=1e-5)
    assert compiled.recordings and not compiled.disabled


def test_reduce_overhead_outputs_survive_the_next_replay():
    w = torch.randn(300, device="cuda")
    compiled = compile_cuda(softmax_of_sum, [torch.randn(64, 300, device="cuda"), w], mode="reduce-overhead")
    xs = [torch.randn(64, 300, device="cuda") for _ in range(4)]
    outputs = [compiled(x, w) for x in xs]
    for x, out in zip(xs, outputs):
        assert_same(out, softmax_of_sum(x, w), rtol=1e-5, atol=1e-5)


def test_reduce_overhead_reads_in_place_inputs_that_change_value():
    w = torch.randn(300, device="cuda")
    x = torch.randn(64, 300, device="cuda")
    compiled = compile_cuda(softmax_of_sum, [x, w], mode="reduce-overhead")
    for step in range(4):
        w.add_(0.5)  # an optimizer updating a parameter in place
        assert_same(compiled(x, w), softmax_of_sum(x, w), rtol=1e-5, atol=1e-5)


def test_reduce_overhead_rerecords_when_an_in_place_input_moves():
    x = torch.randn(64, 300, device="cuda")
    compiled = compile_cuda(softmax_of_sum, [x, torch.randn(300, device="cuda")], mode="reduce-overhead")
    w = torch.randn(300, device="cuda")
    compiled(x, w)
    compiled(x, w)
    moved = torch.randn(300, device="cuda")
    assert_same(compiled(x, moved), softmax_of_sum(x, moved), rtol=1e-5, atol=1e-5)


def test_reduce_overhead_draws_fresh_random_numbers_each_replay_and_repeats_under_a_seed():
    # The seeds come from a randint inside the recorded graph: torch's CUDA generator advances
    # at each replay, and torch.manual_seed rewinds it.
    x = torch.randn(64, 300, device="cuda")
    compiled = compile_cuda(lambda x: aten.native_dropout.default(x, 0.5, True), [x], mode="reduce-overhead")
    masks = [compiled(x)[1] for _ in range(4)]  # a plain call, the recorded one, two replays
    assert compiled.recordings and not compiled.disabled
    assert not torch.equal(masks[2], masks[3])
    torch.manual_seed(5)
    first = compiled(x)[1]
    torch.manual_seed(5)
    assert torch.equal(compiled(x)[1], first)


@pytest.mark.parametrize("mode", [None, "max-autotune"])
def test_autotuned_choice_is_stored_beside_the_kernel_and_reused(mode, monkeypatch):
    x = torch.randn(4096, 2000, device="cuda")
    fn = lambda x: (aten._softmax.default(x, -1, False),)  # noqa: E731
    compiled = compile_cuda(fn, [x], mode=mode)
    assert_same(compiled(x), fn(x), rtol=1e-5, atol=1e-5)
    from inductor.runtime import triton_launch

    [(key, name)] = re.findall(r"load_triton_kernel\('([^']+)', '([^']+)'", compiled.source)
    path = str(triton_launch.kernel_module_path(key, name))
    stored = json.loads(open(path.replace(".py", ".autotune.json")).read())
    assert any(key.endswith("|4096,2048") for key in stored)  # the size bucket: powers of two

    monkeypatch.setattr(triton_launch.TritonLauncher, "_fastest", lambda *a: pytest.fail("timed again"))
    launcher = triton_launch.TritonLauncher(path, name, mode or "default")
    out = torch.empty_like(x)
    launcher(x, out, 4096, 2000)
    torch.testing.assert_close(out, fn(x)[0])


def test_launches_reuse_the_compiled_binary_per_specialization(monkeypatch):
    # After a first launch through Triton, launches call the binary directly; an argument that
    # changes Triton's specialization (a pointer no longer 16-byte aligned) compiles anew.
    from inductor.runtime.triton_launch import load_triton_kernel

    fn = lambda x: (aten.mul.Tensor(aten.exp.default(x), 2.0),)  # noqa: E731
    base = torch.randn(4097, device="cuda")
    compiled = compile_cuda(fn, [base[:4096]])
    for x in (base[:4096], torch.randn(4096, device="cuda"), base[1:], base[:4096]):
        assert_same(compiled(x), fn(x))
    [(key, name)] = re.findall(r"load_triton_kernel\('([^']+)', '([^']+)'", compiled.source)
    launcher = load_triton_kernel(key, name, "default")
    assert len({alignment for *_, alignment in launcher.compiled}) == 2
    triton_runs = []
    run = launcher.fn.run
    monkeypatch.setattr(launcher.fn, "run", lambda *a, **k: triton_runs.append(1) or run(*a, **k))
    for x in (base[:4096], base[1:]):
        assert_same(compiled(x), fn(x))
    assert not triton_runs, "warm launches went through Triton's argument binding"


def test_new_sizes_time_no_config_and_compile_no_kernel(monkeypatch):
    # Issue 18: with symbolic sizes a kernel is timed once and compiled once; at new sizes in new
    # buckets (some not a multiple of 16, which Triton would otherwise specialize apart) it
    # reuses both. test_triton_new_sizes.py checks the same under the interpreter, by proxy.
    from test_dynamic_kernels import trace_dynamic
    from triton.runtime.jit import JITFunction

    from inductor.runtime.triton_launch import TritonLauncher

    fn = lambda x, w: (aten._softmax.default(aten.add.Tensor(x, w), -1, False),  # noqa: E731
                       aten.mul.Tensor(aten.exp.default(x), 0.5))
    w = torch.randn(768, device="cuda")
    example = [torch.randn(96, 768, device="cuda"), w]
    compiled = inductor.compile_aten_graph(trace_dynamic(fn, example, {0: [0]}), example)
    assert_same(compiled(*example), fn(*example), rtol=1e-5, atol=1e-5)
    compiles, timings = [], []
    do_compile, fastest = JITFunction._do_compile, TritonLauncher._fastest
    monkeypatch.setattr(JITFunction, "_do_compile", lambda self, *a, **k: compiles.append(self) or do_compile(self, *a, **k))
    monkeypatch.setattr(TritonLauncher, "_fastest", lambda self, *a: timings.append(self) or fastest(self, *a))
    for rows in (200, 384, 1000, 37):
        x = torch.randn(rows, 768, device="cuda")
        assert_same(compiled(x, w), fn(x, w), rtol=1e-5, atol=1e-5)
    assert not compiles and not timings, (compiles, timings)


CPU_SCALAR_CASES = {
    "scalar_second": lambda x, s: (aten.mul.Tensor(aten.exp.default(x), s),),
    "scalar_first": lambda x, s: (aten.sub.Tensor(s, aten.exp.default(x)),),
    "where_between": lambda x, s: (aten.where.self(aten.gt.Scalar(x, 0), s, x),),
}


@pytest.mark.parametrize("name", sorted(CPU_SCALAR_CASES))
def test_cpu_scalar_tensor_mixed_with_cuda_tensors(name):
    # Eager treats a CPU 0-d tensor beside CUDA tensors as a scalar; the result is on CUDA.
    fn = CPU_SCALAR_CASES[name]
    x = torch.randn(32, 32, device="cuda")
    scale = torch.tensor(2.5)
    compiled = compile_cuda(fn, [x, scale])
    assert_same(compiled(x, scale), fn(x, scale))
    assert compiled(x, scale)[0].device == x.device


def bias_corrected_updates(x, y, step):
    # An optimizer's shape: a value computed on CPU from a CPU step count, read by CUDA kernels.
    correction = aten.rsub.Scalar(aten.pow.Scalar(0.9, step), 1)
    return (aten.div.Tensor(aten.exp.default(x), correction), aten.div.Tensor(aten.sum.dim_IntList(y, [1]), correction))


def test_a_cpu_value_cuda_kernels_read_is_copied_to_the_device_once_without_waiting():
    x, y = torch.randn(64, 64, device="cuda"), torch.randn(32, 48, device="cuda")
    compiled = compile_cuda(bias_corrected_updates, [x, y, torch.tensor(3.0)])
    # Pinned memory and one asynchronous copy (a pageable copy per kernel blocked the host): of the
    # CPU value, or of the step count when the kernels recompute the value from it.
    assert "pin_memory" in compiled.source and compiled.source.count("non_blocking=True") == 1
    for step in range(1, 40):  # new values each call: no call may see an earlier call's copy
        x, y, count = torch.randn(64, 64, device="cuda"), torch.randn(32, 48, device="cuda"), torch.tensor(float(step))
        assert_same(compiled(x, y, count), bias_corrected_updates(x, y, count))


def scaled_by_a_cpu_count(x, count):
    return (aten.mul.Tensor(aten.exp.default(x), count), aten.sum.dim_IntList(aten.mul.Tensor(x, count), [0]))


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_cpu_scalar_arguments_are_copied_once_per_call_with_this_calls_values(mode):
    # The 0-d CPU arguments CUDA kernels read go to the device in one copy per call; CUDA graphs
    # are off for such a graph (a replay would copy the recorded call's pinned memory again).
    x = torch.randn(64, 64, device="cuda")
    compiled = compile_cuda(scaled_by_a_cpu_count, [x, torch.tensor(2.0)], mode=mode)
    assert compiled.source.count("pin_memory()") == 1
    for step in range(1, 8):
        x, count = torch.randn(64, 64, device="cuda"), torch.tensor(float(step))
        # The column sums add 64 terms of up to ~30 in another order than eager: float32 rounding
        # of such sums reaches ~1e-5 absolute, which the default tolerance does not allow.
        assert_same(compiled(x, count), scaled_by_a_cpu_count(x, count), atol=1e-4, rtol=1e-5)


class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        return (torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True) * 2,)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_attention_traced_on_cuda_calls_a_cuda_attention_kernel(dtype):
    # aot_autograd traces sdpa on fake CUDA tensors; the op it picks (flash / efficient / math)
    # must be one that runs on CUDA, never the CPU flash kernel, in forward and backward.
    pytest.importorskip("aot_autograd")
    q, k, v = (torch.randn(2, 4, 64, 32, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
    sources: list[str] = []

    def keep_source(gm, inputs):
        compiled = inductor.compile_aten_graph(gm, inputs)
        sources.append(compiled.source)
        return compiled

    import aot_autograd
    from inductor.decompositions import decompositions

    compiled = aot_autograd.aot_module_simplified(
        torch.fx.symbolic_trace(Attention()), [q, k, v], keep_source, keep_source, decompositions=decompositions(),
    )
    out = compiled(q, k, v)[0]
    out.sum().backward()
    expected = Attention()(q, k, v)[0]
    tolerance = {"rtol": 2e-2, "atol": 2e-2} if dtype == torch.bfloat16 else {"rtol": 1e-3, "atol": 1e-3}
    torch.testing.assert_close(out, expected, **tolerance)
    assert sources and not any("_for_cpu" in source for source in sources)
