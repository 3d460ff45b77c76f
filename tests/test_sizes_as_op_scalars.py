"""A size, or a number computed from sizes, passed where an op takes a Python number (the fill
of masked_fill, constant_pad_nd and scatter, clamp bounds, activation parameters...), through
inductor's C++ kernels and its Triton kernels (on CPU tensors: Triton's interpreter), against
eager on the first call, a cache hit with new values and a new size (the graph goes dynamic).

Inductor embedded such a number as a literal: a symbolic one failed to compile ("Cannot convert
expression to float") in `x.masked_fill(m, x.shape[0] - 1)`, `torch.constant_pad_nd(x, p, n)`,
`torch.quantile` (its decomposition fills with the last position, `n - 1`), leaky_relu's slope
and relu's backward threshold."""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F

# Without a GPU, Triton's interpreter runs the Triton kernels; it must be on before triton is
# first imported.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import compiler  # noqa: E402

CASES = {
    "masked_fill": lambda x: x.masked_fill(x > 0, x.shape[0] - 1),
    "masked_fill_float": lambda x: x.masked_fill(x > 0, x.shape[0] / 3),
    "constant_pad_nd": lambda x: torch.constant_pad_nd(x, (2, 0), x.shape[0]),
    "pad": lambda x: F.pad(x, (1, 2), value=x.shape[0] - 1),
    "scatter": lambda x: x.scatter(0, torch.tensor([0, 2]), x.shape[0]),
    "index_fill": lambda x: x.index_fill(0, torch.tensor([1, 3]), x.shape[0] // 2),
    "fill_": lambda x: x.clone().fill_(x.shape[0] + 1),
    "full_like": lambda x: torch.full_like(x, x.shape[0] * 2) + x,
    "where": lambda x: torch.where(x > 0, x, x.shape[0]),
    "clamp": lambda x: (x * 10).clamp(-x.shape[0], x.shape[0] // 3),
    "hardtanh": lambda x: F.hardtanh(x * 10, -x.shape[0], x.shape[0]),
    "threshold": lambda x: F.threshold(x, 0.1, x.shape[0]),
    "leaky_relu": lambda x: F.leaky_relu(x, x.shape[0] // 4),
    "nan_to_num": lambda x: torch.log(x).nan_to_num(nan=x.shape[0], posinf=x.shape[0] + 1, neginf=-x.shape[0]),
    "add_alpha": lambda x: torch.add(x, x, alpha=x.shape[0]),
    "addcmul": lambda x: torch.addcmul(x, x, x, value=x.shape[0]),
    "rsub": lambda x: x.shape[0] - x,
    "floor_divide": lambda x: (x * 10).long() // x.shape[0],
    "arange": lambda x: x + torch.arange(0, x.shape[0] * 2, 2)[: x.shape[0]],
    "quantile": lambda x: x.quantile(0.3),
    "median": lambda x: x.median(),
}
# Gradients: the threshold of relu's backward (threshold_backward) from a size.
GRAD_CASES = {
    "threshold_backward": lambda x: F.threshold(x * 10, x.shape[0] // 3, -x.shape[0]),
    "leaky_relu_backward": lambda x: F.leaky_relu(x, x.shape[0] // 4),
}
BACKENDS = {"cpp": None, "triton": {"cpu_backend": "triton"}}


@pytest.mark.parametrize("kernels", BACKENDS)
@pytest.mark.parametrize("case", CASES)
def test_matches_eager(case, kernels):
    fn = CASES[case]
    compiled = compiler.compile(fn, backend="inductor", options=BACKENDS[kernels])
    for size in (8, 8, 11):  # first call, cache hit with new values, new size
        x = torch.randn(size)
        torch.testing.assert_close(compiled(x), fn(x), msg=lambda m: f"{case} ({kernels}) at size {size}: {m}")


@pytest.mark.parametrize("kernels", BACKENDS)
@pytest.mark.parametrize("case", GRAD_CASES)
def test_gradients_match_eager(case, kernels):
    fn = GRAD_CASES[case]
    compiled = compiler.compile(fn, backend="inductor", options=BACKENDS[kernels])
    for size in (8, 8, 11):
        x = torch.randn(size)
        ours, theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
        compiled(ours).sum().backward()
        fn(theirs).sum().backward()
        torch.testing.assert_close(ours.grad, theirs.grad, msg=lambda m: f"{case} ({kernels}) at size {size}: {m}")
