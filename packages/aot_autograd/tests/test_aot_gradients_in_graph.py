"""A graph that takes gradients itself (`torch.autograd.grad` inside it) and returns none that
carry a gradient: its inputs must still require grad, and grad mode stay on, while it is
traced. Differential against eager: first call, new values, new size."""

from __future__ import annotations

import pytest
import torch

from aot_testing import BACKENDS, functions_graph


def grad_of_sum(x, w):
    y = (x.sin() * w).sum()
    (gx,) = torch.autograd.grad(y, x)
    return (gx * 2,)


def grads_of_two_inputs(x, w):
    y = (x * w).exp().sum()
    gx, gw = torch.autograd.grad(y, [x, w])
    return gx + gw, gx.requires_grad


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [grad_of_sum, grads_of_two_inputs])
def test_graph_taking_gradients_matches_eager(backend, fn):
    for n in (4, 4, 7):
        x, w = torch.randn(n, requires_grad=True), torch.randn(n, requires_grad=True)
        compiled = BACKENDS[backend](functions_graph(fn), [x, w])
        for _ in range(2):  # the first call, then new values
            expected = fn(x, w)
            actual = compiled(x, w)
            torch.testing.assert_close(tuple(actual), expected)
            assert [a.requires_grad for a in actual if isinstance(a, torch.Tensor)] == [
                e.requires_grad for e in expected if isinstance(e, torch.Tensor)
            ]
            x, w = torch.randn(n, requires_grad=True), torch.randn(n, requires_grad=True)
