"""Pointwise kernels that read only graph inputs (an autocast model's weight casts) run as one
Triton launch: results match eager, the memory cap splits the run, and kernels that read
computed values keep their own launches. The C++ backend launches each kernel itself."""

from __future__ import annotations

import re

import torch

from conftest import check, uses_triton
from inductor.codegen.triton import combo_planning

aten = torch.ops.aten


def casts_then_matmuls(x, w1, b1, w2, b2):
    # autocast's shape: every operand cast to bf16 before its matmul
    cast = lambda t: aten._to_copy.default(t, dtype=torch.bfloat16)
    h = aten.addmm.default(cast(b1), cast(x), aten.t.default(cast(w1)))
    return (aten.addmm.default(cast(b2), aten.relu.default(h), aten.t.default(cast(w2))),)


def _inputs(device):
    shapes = [(16, 32), (64, 32), (64,), (8, 64), (8,)]
    return [torch.randn(*s, device=device) for s in shapes]


def test_input_casts_run_as_one_launch(device):
    compiled = check(casts_then_matmuls, *_inputs(device), rtol=2e-2, atol=2e-2)
    # five casts and the ReLU: one combo and the ReLU on Triton, six kernels in C++
    assert compiled.kernel_count == (2 if uses_triton(device) else 6)
    assert ("combo" in compiled.source) == uses_triton(device)


def test_identical_members_share_one_call_site(device):
    # The five casts are one function (whatever the printer numbered their index variables):
    # called once, with the pointers and sizes of the member the program id falls in.
    compiled = check(casts_then_matmuls, *_inputs(device), rtol=2e-2, atol=2e-2)
    if uses_triton(device):
        [combo] = [text for text in compiled.kernel_sources.values() if "A combo kernel" in text]
        assert len(re.findall(r"^\s+member_\w+\(", combo, re.MULTILINE)) == 1
        assert "tl.where(later" in combo


def test_the_memory_cap_splits_a_run_of_casts(device, monkeypatch, tmp_path):
    # In graph order the casts write b1 (128 B), x (1 KiB), w1 (4 KiB), b2 (16 B), w2 (1 KiB):
    # under a 5 KiB cap, b1 and x make one combo, w1 and b2 the next, and w2 runs alone.
    monkeypatch.setattr(combo_planning, "MAX_COMBO_BYTES", 5 * 1024)
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))  # not the graph compiled uncapped
    compiled = check(casts_then_matmuls, *_inputs(device), rtol=2e-2, atol=2e-2)
    assert compiled.kernel_count == (4 if uses_triton(device) else 6)


def test_kernels_reading_computed_values_keep_their_own_launch(device):
    def fn(x, y, z):
        m = aten.mm.default(aten.sin.default(x), y)
        return aten.cos.default(m), aten.exp.default(z)

    x, y, z = torch.randn(8, 8, device=device), torch.randn(8, 8, device=device), torch.randn(5, device=device)
    compiled = check(fn, x, y, z, rtol=1e-4, atol=1e-4)
    # sin(x) and exp(z) read inputs only: one combo on Triton; cos reads the matmul's result
    assert compiled.kernel_count == (2 if uses_triton(device) else 3)


def test_casts_of_results_nothing_else_reads_run_as_one_launch_at_the_end(device):
    # A backward's shape: each weight gradient is a matmul in bf16, cast to float32 as a graph
    # output. The casts wait for the last of them and run as one launch.
    g, a, b = (torch.randn(*s, device=device, dtype=torch.bfloat16) for s in [(16, 24), (16, 8), (16, 12)])

    def fn(g, a, b):
        grad_a = aten._to_copy.default(aten.mm.default(aten.t.default(g), a), dtype=torch.float32)
        grad_b = aten._to_copy.default(aten.mm.default(aten.t.default(g), b), dtype=torch.float32)
        return grad_a, grad_b

    compiled = check(fn, g, a, b, rtol=2e-2, atol=2e-2)
    assert compiled.kernel_count == (1 if uses_triton(device) else 2)
