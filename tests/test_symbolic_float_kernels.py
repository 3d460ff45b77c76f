"""Floats the program computes from symbolic sizes (BatchNorm's unbiased variance factor
`n / (n - 1)`, `x.shape[0] / (x.shape[0] - 1)`, `float(n)`) are computed by the kernels from
the integer sizes, in double as Python computes them: the graph compiles at symbolic sizes
instead of running as its ATen graph (inductor.metrics' graphs_run_uncompiled counts those).

Each case runs a first size, a second (the size goes dynamic) and a third the symbolic graph
serves, with C++ kernels and with Triton's (its interpreter on CPU), against eager at 1e-5.
"""

from __future__ import annotations

import copy
import math
import os

import pytest
import torch
import torch.nn.functional as F
from torch import nn

# Triton binds its library functions when first imported: without a GPU, switch its interpreter
# on now (collection imports this module before any test imports triton).
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import compiler  # noqa: E402
from inductor import metrics  # noqa: E402

BACKENDS = ["cpp", "triton"]
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def _compile(fn, cpu_backend):
    if cpu_backend == "triton":
        from triton import knobs

        if not knobs.runtime.interpret and not torch.cuda.is_available():
            pytest.skip("Triton's interpreter is off (set TRITON_INTERPRET=1 before triton is imported)")
    return compiler.compile(fn, backend="inductor", options={"cpu_backend": cpu_backend})


class BatchNormConvReLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(4)
        self.conv = nn.Conv2d(4, 4, 3, padding=1, bias=False)

    def forward(self, x):
        return F.relu(self.conv(self.bn(x)))


@pytest.mark.parametrize("cpu_backend", BACKENDS)
def test_batchnorm_training_at_symbolic_sizes_compiles_and_matches_eager(cpu_backend):
    torch.manual_seed(0)
    eager = BatchNormConvReLU()
    ours = copy.deepcopy(eager)
    compiled = _compile(ours, cpu_backend)
    uncompiled_before = metrics.counters.graphs_run_uncompiled
    for batch, size in ((2, 5), (3, 7), (4, 6)):
        x = torch.randn(batch, 4, size, size)
        expected, actual = eager(x), compiled(x.clone())
        cotangent = torch.randn(expected.shape)
        expected.backward(cotangent)
        actual.backward(cotangent)
        torch.testing.assert_close(actual, expected, **TOLERANCE)
        for mine, theirs in zip([*ours.parameters(), *ours.buffers()], [*eager.parameters(), *eager.buffers()]):
            torch.testing.assert_close(mine, theirs, **TOLERANCE)
        for mine, theirs in zip(ours.parameters(), eager.parameters()):
            torch.testing.assert_close(mine.grad, theirs.grad, **TOLERANCE)
    assert metrics.counters.graphs_run_uncompiled == uncompiled_before


FUNCTIONS = {
    "unbiased_factor": lambda x: x * (x.shape[0] / (x.shape[0] - 1)),
    "unbiased_mean": lambda x: x.mean() * x.numel() / (x.numel() - 1),
    # float(n) is a float though its value is an integer: an int tensor times it is a float tensor.
    "float_of_a_size": lambda x: torch.arange(x.shape[0]) * float(x.shape[0] + 1),
    "float_arithmetic_in_order": lambda x: x + ((x.shape[0] - 7) / 3 + 1.5) * 0.1,
    "float_power": lambda x: x * (x.shape[0] ** 0.5) - (x.shape[0] + 2) ** -1,
    "float_floor_division_and_ceil": lambda x: x + (x.shape[0] / 2.0) // 1.5 - math.ceil(x.shape[0] * 0.3),
    "int_of_a_float": lambda x: x.masked_fill(x > 0, int(x.shape[0] * 0.75)),
    # sympy spells a negated float Mul(-1, FloatTrueDiv(...)): still a float (huber_loss's gradient).
    "negated_float": lambda x: x * -(1.0 / x.shape[0]) + 1,
}


@pytest.mark.parametrize("cpu_backend", BACKENDS)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_floats_from_symbolic_sizes_compile_and_match_eager(name, cpu_backend):
    fn = FUNCTIONS[name]
    compiled = _compile(fn, cpu_backend)
    uncompiled_before = metrics.counters.graphs_run_uncompiled
    for n in (5, 9, 13):
        x = torch.randn(n)
        expected, actual = fn(x), compiled(x)
        assert actual.dtype == expected.dtype
        torch.testing.assert_close(actual, expected, **TOLERANCE)
    assert metrics.counters.graphs_run_uncompiled == uncompiled_before


@pytest.mark.parametrize("cpu_backend", BACKENDS)
def test_a_float_from_sizes_saved_for_the_backward_is_computed_there_from_the_sizes(cpu_backend):
    """The partition saves `n / (n - 1)` for the backward, which gets it as a float input: its
    kernels compute it again from the sizes of the tensors it gets."""

    def fn(x):
        return (x * (x.shape[0] / (x.shape[0] - 1))).sin()

    compiled = _compile(fn, cpu_backend)
    uncompiled_before = metrics.counters.graphs_run_uncompiled
    for n in (5, 9, 13):
        x = torch.randn(n, requires_grad=True)
        mine = x.detach().clone().requires_grad_()
        cotangent = torch.randn(n)
        fn(x).backward(cotangent)
        compiled(mine).backward(cotangent)
        torch.testing.assert_close(mine.grad, x.grad, **TOLERANCE)
    assert metrics.counters.graphs_run_uncompiled == uncompiled_before


@pytest.mark.parametrize("cpu_backend", BACKENDS)
def test_huber_loss_gradient_at_symbolic_sizes_matches_eager(cpu_backend):
    """Its mean's gradient scales by -(1.0 / n) where x - y < -delta: a negated float, which was
    computed as an integer (0) when only a float operation at the top counted as a float."""

    def fn(x, y):
        return F.huber_loss(x, y, delta=0.5)

    compiled = _compile(fn, cpu_backend)
    for n in (5, 9, 13):
        x, y = torch.randn(n, requires_grad=True), torch.randn(n)
        mine = x.detach().clone().requires_grad_()
        fn(x, y).backward()
        compiled(mine, y).backward()
        torch.testing.assert_close(mine.grad, x.grad, **TOLERANCE)


@pytest.mark.parametrize("cpu_backend", BACKENDS)
def test_a_float_of_sizes_kernels_cannot_compute_runs_uncompiled_with_eager_values(cpu_backend):
    """max() of floats: the kernels' printers compute Max in integers, so they refuse float
    operands and the graph runs as its ATen graph rather than truncate."""

    def fn(x):
        return x * max(x.shape[0] / 4, 1.5)

    compiled = _compile(fn, cpu_backend)
    for n in (5, 9, 13):
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x), fn(x), **TOLERANCE)


@pytest.mark.parametrize("cpu_backend", BACKENDS)
@pytest.mark.parametrize("fn", [
    lambda x: x + x.shape[0] / (x.shape[0] - 1),
    lambda x: x - (x.shape[0] + 250),
    lambda x: x * (x.shape[0] / (x.shape[0] - 1)),
], ids=["add_a_float", "subtract_an_int", "multiply_by_a_float"])
def test_a_number_from_sizes_beside_a_bfloat16_tensor_is_rounded_as_eager_rounds_it(fn, cpu_backend):
    """Eager's CPU add and sub read a Python number through the bfloat16 common dtype (7 / 6 is
    1.1640625 there; 257 is 256); mul and div read it at full precision. A number the graph
    computes from sizes is rounded the same way, in the kernel."""
    compiled = _compile(fn, cpu_backend)
    for n in (5, 7, 11, 13):
        x = torch.randn(n).to(torch.bfloat16)
        torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0)
