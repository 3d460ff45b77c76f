"""Tensors our kernels and fake tensors do not describe: sparse and quantized tensors, float8
dtypes. Each program is compared with eager on every backend, on the first call, a cache hit
with new values and a new size. What fake tensors cannot stand for (a sparse input, a
quantized result) is a graph break, run eagerly; an op over a dtype kernels do not compute in
(float8) runs as its aten call. So is an input with a lazy negation or conjugation bit."""

from __future__ import annotations

import pytest
import torch

import compiler


def _sparse(n):
    return torch.randn(n, n).relu().to_sparse()


PROGRAMS = {
    "sparse_input_to_dense": (lambda s, d: s.to_dense() * 2 + d, lambda n: (_sparse(n), torch.randn(n, n))),
    "sparse_input_mm": (lambda s, d: torch.sparse.mm(s, d).sin(), lambda n: (_sparse(n), torch.randn(n, 3))),
    "quantize_round_trip": (
        lambda x, y: torch.quantize_per_tensor(x, 0.1, 0, torch.qint8).dequantize() + y,
        lambda n: (torch.randn(n), torch.randn(n)),
    ),
    "quantized_input": (
        lambda q, y: q.dequantize() * y,
        lambda n: (torch.quantize_per_tensor(torch.randn(n), 0.05, 3, torch.quint8), torch.randn(n)),
    ),
    # Strided layout, but no sizes: a graph break like the sparse input.
    "nested_strided_input": (
        lambda x, y: (x * y).to_padded_tensor(0.0),
        lambda n: (torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(n, 3)]), 2.0),
    ),
    # The imaginary part of a conjugate is a view with the lazy negation bit: kernels reading
    # its memory computed with the wrong sign (a wrong result on inductor before).
    "negation_bit_input": (
        lambda x, y: x * y + 1,
        lambda n: (torch.randn(n, dtype=torch.complex64).conj().imag, torch.randn(n)),
    ),
    "conjugation_bit_input": (
        lambda z, y: (z * y if z.is_conj() else z - y).real,
        lambda n: (torch.randn(n, dtype=torch.complex64).conj(), torch.randn(n)),
    ),
    "float8_e4m3_cast": (
        lambda x, y: (x.float() * y).to(torch.float8_e4m3fn).float() + 1,
        lambda n: (torch.randn(n).to(torch.float8_e4m3fn), torch.randn(n)),
    ),
    "float8_e5m2_output": (lambda x, y: (x * y).to(torch.float8_e5m2), lambda n: (torch.randn(n), torch.randn(n))),
}


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_unusual_tensor_kinds_match_eager(name, backend):
    fn, make_args = PROGRAMS[name]
    compiled = compiler.compile(fn, backend=backend)
    for n in (4, 4, 7):
        args = make_args(n)
        expected, actual = fn(*args), compiled(*args)
        assert actual.dtype == expected.dtype
        torch.testing.assert_close(actual.float(), expected.float())
