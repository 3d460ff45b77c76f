"""A compiled function given inputs eager rejects raises what eager raises: the same exception
type, a message saying the same thing. Through `compiler.compile` with inductor's C++ kernels and
with Triton kernels run by Triton's interpreter (CPU tensors), on fresh random inputs with one
bad value planted.

Eager: an integer division or remainder by zero raises RuntimeError("ZeroDivisionError"); an
index out of range raises IndexError for indexing, index_select and embedding, and
RuntimeError for gather. On a GPU, eager's index kernels stop at a device-side assert, and so do
our Triton kernels (codegen/triton/memory.py `assert_on_device`).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import compiler


def _divisors(n):
    def make():
        b = torch.randint(1, 5, (n,))
        b[torch.randint(0, n, ())] = 0
        return [torch.randint(-9, 9, (n,)), b]
    return make


def _bad_index(size, *shape):
    def make():
        index = torch.randint(0, size, shape)
        index.view(-1)[torch.randint(0, index.numel(), ())] = size + 3
        return index
    return make


CASES = {
    "floor_divide": (lambda a, b: (a // b) + 1, _divisors(12), "ZeroDivisionError"),
    "remainder": (lambda a, b: torch.remainder(a, b) * 2, _divisors(12), "ZeroDivisionError"),
    "fmod": (lambda a, b: torch.fmod(a, b) - 1, _divisors(12), "ZeroDivisionError"),
    "trunc_div": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), _divisors(12), "ZeroDivisionError"),
    "gather": (lambda x, i: torch.gather(x, 1, i) + 1, lambda: [torch.randn(4, 6), _bad_index(6, 4, 3)()],
               "out of bounds"),
    "index": (lambda x, i: x[i] * 2, lambda: [torch.randn(6, 5), _bad_index(6, 4)()], "out of bounds"),
    "index_select": (lambda x, i: x.index_select(0, i) + 1, lambda: [torch.randn(6, 5), _bad_index(6, 4)()],
                     "out of"),
    "embedding": (lambda w, i: F.embedding(i, w).sum(-1), lambda: [torch.randn(10, 4), _bad_index(10, 2, 3)()],
                  "out of"),
}

KERNELS = {"cpp": {}, "triton-interpreter": {"cpu_backend": "triton"}}


@pytest.mark.parametrize("kernels", sorted(KERNELS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_code_raises_what_eager_raises(case, kernels):
    if kernels != "cpp" and os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("Triton kernels on CPU tensors need TRITON_INTERPRET=1")
    fn, make_inputs, message = CASES[case]
    inputs = make_inputs()
    with pytest.raises(Exception) as eager:
        fn(*inputs)
    compiled = compiler.compile(fn, backend="inductor", options=KERNELS[kernels])
    with pytest.raises(type(eager.value), match=message) as ours:
        compiled(*inputs)
    assert type(ours.value) is type(eager.value)
    assert message in str(eager.value)


INDEX_CASES = ["embedding", "gather", "index", "index_select"]


@pytest.mark.gpu
@pytest.mark.parametrize("case", INDEX_CASES)
def test_triton_kernels_on_a_gpu_assert_on_an_index_out_of_range_as_eager(case):
    """Each case in a process of its own: a device-side assert leaves the CUDA context unusable."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    script = f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); " \
             f"import test_kernel_exceptions as t; t.index_error_on_cuda({case!r})"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "compiled: device-side assert" in done.stdout, done.stdout + done.stderr


def index_error_on_cuda(case: str) -> None:
    """Run by the test above in a fresh process: in-range indices match eager, then an index
    out of range stops the compiled kernel at a device-side assert (eager's does the same)."""
    fn, make_inputs, _ = CASES[case]
    compiled = compiler.compile(fn, backend="inductor")
    for _ in range(2):
        good = [t.cuda() for t in make_inputs()]
        good[1] = good[1].clamp(max=good[0].shape[0 if case in ("index", "index_select", "embedding") else 1] - 1)
        torch.testing.assert_close(compiled(*good), fn(*good))
    bad = [t.cuda() for t in make_inputs()]
    try:
        compiled(*bad)
        torch.cuda.synchronize()
    except RuntimeError as error:
        if "device-side assert" in str(error):
            print("compiled: device-side assert")
            return
        raise
    print("compiled: returned")
