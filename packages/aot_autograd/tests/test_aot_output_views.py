"""Outputs that are views of inputs are rebuilt on the real inputs after the compiled graph ran
(runtime/epilogue.py): their gradients flow through the view as in eager, for expanded views
(expand's backward, not as_strided's, whose rounding differs) and for real/complex reinterpretations (view_as_complex,
view_as_real). Compiled against eager: first call, a call with fresh values, a new size."""

from __future__ import annotations

import pytest
import torch

from aot_autograd import aot_eager
from aot_testing import functions_graph
from fake_tensor import FakeTensorMode, ShapeEnv


def broadcast(a, b):
    return torch.broadcast_tensors(a, b)


def expand_row(a):
    return (a.expand(3, -1, -1, -1), a.expand(-1, 4, -1))


def as_complex(x):
    return (torch.view_as_complex(x),)


def as_real(z):
    return (torch.view_as_real(z),)


def _compile(fn, examples, dynamic: bool):
    gm = functions_graph(fn)
    if dynamic:
        mode = FakeTensorMode(shape_env=ShapeEnv())
        for placeholder, example in zip(gm.graph.find_nodes(op="placeholder"), examples):
            placeholder.meta["example_value"] = mode.from_real(example, dynamic_dims=[0])
    return aot_eager(gm, examples)


def _check(fn, compiled, inputs):
    ours = [x.detach().clone().requires_grad_() for x in inputs]
    actual, expected = compiled(*ours), fn(*inputs)
    assert [o.requires_grad for o in actual] == [o.requires_grad for o in expected]
    cotangents = [torch.randn_like(o) for o in expected]
    torch.testing.assert_close(actual, expected, rtol=0, atol=0)
    # Bitwise: the same backward formulas run on the same values.
    torch.testing.assert_close(
        torch.autograd.grad(actual, ours, cotangents), torch.autograd.grad(expected, inputs, cotangents), rtol=0, atol=0
    )


CASES = {
    # Gradients summed over two broadcast dims: as_strided's backward sums one dim at a time,
    # rounding to bfloat16 in between, expand's sums both at once in float32 (ulps apart).
    "broadcast_bf16": (broadcast, lambda n: [torch.randn(64, 1, dtype=torch.bfloat16), torch.randn(n, 1, 32, dtype=torch.bfloat16)]),
    "expand_float32": (expand_row, lambda n: [torch.randn(n, 1, 5)]),
    "view_as_complex": (as_complex, lambda n: [torch.randn(n, 3, 2)]),
    "view_as_real": (as_real, lambda n: [torch.randn(n, 3, dtype=torch.complex64)]),
}


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("case", CASES)
def test_gradients_through_output_views_match_eager(case, dynamic):
    torch.manual_seed(0)
    fn, make = CASES[case]
    examples = [x.requires_grad_() for x in make(512)]
    compiled = _compile(fn, examples, dynamic)
    _check(fn, compiled, examples)
    _check(fn, compiled, [x.requires_grad_() for x in make(512)])  # fresh values
    if dynamic:
        _check(fn, compiled, [x.requires_grad_() for x in make(300)])  # a new size, same graph
