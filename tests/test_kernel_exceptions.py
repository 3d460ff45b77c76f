"""A compiled function given inputs eager rejects raises what eager raises: the same exception
type, a message saying the same thing. Through `compiler.compile` with inductor's C++ kernels and
with Triton kernels run by Triton's interpreter (CPU tensors), on fresh random inputs with one
bad value planted.

Eager: an integer division or remainder by zero raises RuntimeError("ZeroDivisionError"); an
index out of range raises IndexError for indexing, index_select and embedding, and
RuntimeError for gather.
"""

from __future__ import annotations

import os

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
