"""A compiled function called under a user's TorchFunctionMode gives eager's values: the mode
is traced into the graph, and the compiled graph's extern calls (matmuls, attention and
convolutions go through their Python bindings, torch.addmm / torch.convolution) do not hand
their results to the mode a second time. Compared with eager on the first call, on new values
(a cache hit) and at a new size."""

import pytest
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

import compiler


class AddsOne(TorchFunctionMode):
    """Adds 1 to every float tensor a torch function returns."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out + 1 if isinstance(out, torch.Tensor) and out.is_floating_point() else out


def linear(x, w, b):
    return F.linear(x, w, b).relu()


def conv(x, w, b):
    return F.conv2d(x, w, b, padding=1).relu()


def attention(x, w, b):
    q = x @ w
    return F.scaled_dot_product_attention(q, q, q, is_causal=True) + b


CASES = {
    "linear": (linear, lambda n: (torch.randn(n, 6), torch.randn(5, 6), torch.randn(5))),
    "conv": (conv, lambda n: (torch.randn(1, 3, n, n), torch.randn(4, 3, 3, 3), torch.randn(4))),
    "attention": (attention, lambda n: (torch.randn(1, 2, n, 8), torch.randn(8, 8), torch.randn(8))),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_graph_under_a_torch_function_mode_matches_eager(case):
    fn, inputs = CASES[case]
    compiled = compiler.compile(fn, backend="inductor")
    for n in (6, 6, 9):
        args = inputs(n)
        with AddsOne():
            expected = fn(*args)
            actual = compiled(*args)
        torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)
