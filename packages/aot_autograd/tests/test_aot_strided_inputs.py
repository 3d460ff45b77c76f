"""Inputs that require grad are traced through a copy that keeps their strides (tracing/trace.py):
`clone()` made a non-dense input contiguous, so `ravel` (`contiguous().view(-1)`) traced as a
view of the input, and the compiled output carried no gradient. Compiled against eager: first
call, fresh values, a new size."""

from __future__ import annotations

import pytest
import torch

from aot_autograd import aot_eager, aot_eager_decomp_partition
from aot_testing import functions_graph
from fake_tensor import FakeTensorMode, ShapeEnv

BACKENDS = {"aot_eager": aot_eager, "aot_eager_decomp_partition": aot_eager_decomp_partition}


def ravel_and_scale(x):
    return (torch.ravel(x), x.reshape(-1) * 2)


def every_other_column(rows: int) -> torch.Tensor:
    """A non-dense input: every other column of a (rows, 12) matrix."""
    return torch.randn(rows, 12)[:, ::2].requires_grad_()


def _check(compiled, x):
    actual, expected = compiled(x), ravel_and_scale(x)
    assert [o.requires_grad for o in actual] == [o.requires_grad for o in expected] == [True, True]
    torch.testing.assert_close(actual, expected, rtol=0, atol=0)
    cotangents = [torch.randn_like(o) for o in expected]
    torch.testing.assert_close(
        torch.autograd.grad(actual, x, cotangents), torch.autograd.grad(expected, x, cotangents), rtol=0, atol=0
    )


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_ravel_of_a_non_dense_input_carries_gradients(backend, dynamic):
    torch.manual_seed(0)
    example = every_other_column(4)
    gm = functions_graph(ravel_and_scale)
    if dynamic:
        mode = FakeTensorMode(shape_env=ShapeEnv())
        (placeholder,) = gm.graph.find_nodes(op="placeholder")
        placeholder.meta["example_value"] = mode.from_real(example, dynamic_dims=[0])
    compiled = BACKENDS[backend](gm, [example])
    _check(compiled, example)
    _check(compiled, every_other_column(4))  # fresh values
    if dynamic:
        _check(compiled, every_other_column(9))  # a new size, the same graph
