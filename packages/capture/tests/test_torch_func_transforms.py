"""torch.func in compiled code: its transforms (vmap, grad, jacrev, hessian) run natively
between graphs, since fake tensors do not model their batched and gradient levels; the code
around them and `functional_call` are traced. Before, the closure `vmap(f)` returns was put
in the graph under a name it cannot be imported by: every call raised an AttributeError.
With `fullgraph=True` each is refused, naming the transform."""

from __future__ import annotations

import pytest
import torch
from torch.func import functional_call, grad, hessian, jacrev, vmap

import capture
from helpers import assert_same, compile_eager

LINEAR = torch.nn.Linear(3, 2)


def batched_dot(a, b):
    return vmap(torch.dot)(a, b) * 2


def batched_with_a_shared_argument(a, w):
    return vmap(lambda row, w: (row * w).sum(), in_dims=(0, None))(a, w).relu()


def gradient(x):
    return grad(lambda y: (y.sin() * y).sum())(x) + 1


def per_row_gradients(x):
    return vmap(grad(lambda y: (y**3).sum()))(x)


def jacobian(x):
    return jacrev(lambda y: y.sin() * 2)(x).sum(0)


def second_derivatives(x):
    return hessian(lambda y: (y**3).sum())(x)


def ensemble(weights, x):
    return vmap(lambda w: functional_call(LINEAR, {"weight": w, "bias": LINEAR.bias}, (x,)))(weights)


def with_parameters_dict(x, w):
    return functional_call(LINEAR, {"weight": w, "bias": torch.zeros(2)}, (x,)).tanh()


CASES = {
    batched_dot: lambda n: (torch.randn(n, 3), torch.randn(n, 3)),
    batched_with_a_shared_argument: lambda n: (torch.randn(n, 3), torch.randn(3)),
    gradient: lambda n: (torch.randn(n),),
    per_row_gradients: lambda n: (torch.randn(n, 3),),
    jacobian: lambda n: (torch.randn(n),),
    second_derivatives: lambda n: (torch.randn(n),),
    ensemble: lambda n: (torch.randn(5, 2, 3), torch.randn(n, 3)),
    with_parameters_dict: lambda n: (torch.randn(n, 3), torch.randn(2, 3)),
}


@pytest.mark.parametrize("fn", CASES, ids=lambda fn: fn.__name__)
def test_compiled_matches_eager(fn):
    compiled = compile_eager(fn)
    for n in (4, 4, 6):  # first call, cache hit with new values, new size
        args = CASES[fn](n)
        assert_same(compiled(*args), fn(*args))


@pytest.mark.parametrize("fn", [batched_dot, gradient, jacobian], ids=lambda fn: fn.__name__)
def test_fullgraph_refuses_a_transform(fn):
    with pytest.raises(capture.Unsupported, match="runs natively"):
        compile_eager(fn, fullgraph=True)(*CASES[fn](4))
