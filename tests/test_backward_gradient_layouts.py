"""Training through an activation whose output is transposed before use: the gradient reaching
the activation's backward is transposed, and eager's kernel (TensorIterator) returns a
transposed gradient. The backward graph must be traced with that layout, or its `view` for
the linear layer's backward fails at run time (HF Doge in training:
`exp(A * softplus(dt_proj(v))).transpose(-1, -2)`). Differential: loss and every gradient
against eager, on a first call, fresh values, and a new size."""

import pytest
import torch
import torch.nn.functional as F

import compiler

ACTIVATIONS = {
    "softplus": F.softplus,
    "elu": F.elu,
    "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish,
    "hardtanh": F.hardtanh,
    "logit": lambda h: torch.logit(h.sigmoid()),
    "xlogy": lambda h: torch.xlogy(h, h.sigmoid()),
    "copysign": lambda h: torch.copysign(h, h.cos()),
}


def make_step(activation):
    linear = torch.nn.Linear(4, 3)
    scale = torch.nn.Parameter(torch.randn(3))

    def step(x):
        return torch.exp(scale * activation(linear(x))).transpose(-1, -2)

    return step, [linear.weight, linear.bias, scale]


def gradients(fn, parameters, x):
    for p in parameters:
        p.grad = None
    out = fn(x)
    (out * torch.arange(out.numel()).reshape(out.shape)).sum().backward()
    return out.detach(), [p.grad for p in parameters]


# aot_eager runs the backward graph as traced; inductor decomposes these ops (one case, ~5 s each).
@pytest.mark.parametrize(
    ("name", "backend"), [*((name, "aot_eager") for name in ACTIVATIONS), ("softplus", "inductor")]
)
def test_transposed_activation_gradient_matches_eager(name, backend):
    torch.manual_seed(0)
    step, parameters = make_step(ACTIVATIONS[name])
    compiled = compiler.compile(step, backend=backend)
    for shape in [(2, 5, 4), (2, 5, 4), (3, 7, 4)]:
        x = torch.randn(shape)
        expected, expected_grads = gradients(step, parameters, x)
        actual, actual_grads = gradients(compiled, parameters, x)
        torch.testing.assert_close(actual, expected)
        for got, want in zip(actual_grads, expected_grads):
            torch.testing.assert_close(got, want)


def pad_to_blocks_then_transpose(linear, h):
    # LongT5's local attention: pad the sequence to a multiple of the block length; the pad's
    # backward cuts the permuted gradient (a symbolic cut once the length is dynamic).
    batch, length, _ = h.shape
    x = linear(h).view(batch, length, 4, 16)
    return F.pad(x, (0, 0, 0, 0, 0, -length % 8)).transpose(1, 2).contiguous() * 2


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_symbolic_pad_of_a_permuted_gradient_matches_eager(backend):
    torch.manual_seed(0)
    linear = torch.nn.Linear(8, 64)
    parameters = [linear.weight, linear.bias]
    compiled = compiler.compile(lambda h: pad_to_blocks_then_transpose(linear, h), backend=backend)
    for length in (12, 12, 9, 10):  # the third call makes the length dynamic
        h = torch.randn(2, length, 8)
        expected, expected_grads = gradients(lambda h: pad_to_blocks_then_transpose(linear, h), parameters, h)
        actual, actual_grads = gradients(compiled, parameters, h)
        torch.testing.assert_close(actual, expected)
        for got, want in zip(actual_grads, expected_grads):
            torch.testing.assert_close(got, want)
