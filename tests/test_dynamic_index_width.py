"""A dynamic graph compiled by inductor indexes in 32 bits while its sizes fit (issue 18): the
bound is a guard of the capture entry, so new sizes below it reuse the compiled graph with no
capture or compile, and sizes whose kernels span 2**31 elements are rejected by the entry's
guard (asked of the guard only: nothing that large is allocated).

Triton kernels run in the interpreter without a GPU; the C++ backend asks no such question.
"""

from __future__ import annotations

import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import compiler  # noqa: E402
import inductor  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
BACKENDS = {"cpp": ("cpu", {}), "triton": (DEVICE, {} if DEVICE == "cuda" else {"cpu_backend": "triton"})}


def model(x, y):
    """Kernels over x.size(0) * y.size(0) elements: inputs of 2**16 elements each take
    kernels past 2**31, which the guard can be asked about without running them."""
    outer = torch.sigmoid(x[:, None] * y[None, :])
    return outer.sum(1), torch.softmax(outer * 2, 0)


def _counting(options):
    compiles = []

    def backend(gm, example_inputs):
        compiles.append(gm)
        return inductor.compile_fx(gm, example_inputs, options=options)

    return backend, compiles


@pytest.mark.parametrize("backend_name", sorted(BACKENDS))
def test_new_sizes_reuse_the_graph_and_sizes_past_2_31_fail_its_guard(backend_name):
    device, options = BACKENDS[backend_name]
    backend, compiles = _counting(options)
    compiled = compiler.compile(model, backend=backend, dynamic=True)
    for n, m in ((5, 7), (9, 4), (5, 7), (130, 3)):  # first call, new sizes, a repeat, many blocks
        x, y = torch.randn(n, device=device), torch.randn(m, device=device)
        torch.testing.assert_close(compiled(x, y), model(x, y), rtol=1e-4, atol=1e-5)
    entries = compiled._capture_cache.entries
    assert len(compiles) == 1 and len(entries) == 1
    guard = entries[0].guard
    assert guard(torch.randn(2**15, device=device), torch.randn(2**15, device=device) + 1)
    too_large = torch.randn(2**16, device=device), torch.randn(2**15, device=device)
    assert bool(guard(*too_large)) is (backend_name == "cpp")
