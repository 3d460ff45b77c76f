"""Autograd through fakes: backward produces fake gradients with eager's metadata."""

import pytest
import torch
from torch import nn

from fake_tensor import FakeTensorMode, is_fake


def metadata(t):
    return t.shape, t.stride(), t.dtype, t.device


MODELS = {
    "mlp": (lambda: nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 3)), lambda: torch.randn(5, 6)),
    "conv": (
        lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.MaxPool2d(2), nn.Flatten()),
        lambda: torch.randn(2, 3, 9, 9),
    ),
    "channels_last_conv": (
        lambda: nn.Conv2d(3, 5, 3).to(memory_format=torch.channels_last),
        lambda: torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last),
    ),
    "attention": (lambda: nn.MultiheadAttention(8, 2, batch_first=True), lambda: torch.randn(2, 5, 8)),
    "layer_norm_bf16": (lambda: nn.LayerNorm(8).to(torch.bfloat16), lambda: torch.randn(4, 8, dtype=torch.bfloat16)),
}


def first_output(out):
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("make_model,make_input", MODELS.values(), ids=MODELS.keys())
def test_backward_gives_fake_grads_with_eager_metadata(make_model, make_input):
    model, x = make_model(), make_input().requires_grad_()
    eager_args = (x, x, x) if isinstance(model, nn.MultiheadAttention) else (x,)
    first_output(model(*eager_args)).sum().backward()

    mode = FakeTensorMode()
    fake_model, fake_x = mode.from_module(model), mode.from_real(x.detach().requires_grad_())
    fake_args = (fake_x, fake_x, fake_x) if isinstance(model, nn.MultiheadAttention) else (fake_x,)
    with mode:
        first_output(fake_model(*fake_args)).sum().backward()

    assert is_fake(fake_x.grad) and metadata(fake_x.grad) == metadata(x.grad)
    fake_params = dict(fake_model.named_parameters())
    for name, real in model.named_parameters():
        assert is_fake(fake_params[name].grad), name
        assert metadata(fake_params[name].grad) == metadata(real.grad), name


def test_autograd_grad_returns_fakes():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(3, 2, requires_grad=True)
    eager = torch.autograd.grad((x @ w).tanh().sum(), (x, w))
    mode = FakeTensorMode()
    fx, fw = mode.from_real(x), mode.from_real(w)
    with mode:
        fake = torch.autograd.grad((fx @ fw).tanh().sum(), (fx, fw))
    assert [metadata(g) for g in fake] == [metadata(g) for g in eager]
    assert all(is_fake(g) for g in fake)


def test_requires_grad_and_grad_fn_propagate_like_eager():
    x, y = torch.randn(3, requires_grad=True), torch.randn(3)
    mode = FakeTensorMode()
    fx, fy = mode.from_real(x), mode.from_real(y)
    eager = [x * y, y * 2, (x * y).detach()]
    with mode:
        fake = [fx * fy, fy * 2, (fx * fy).detach()]
    assert [(t.requires_grad, t.is_leaf, type(t.grad_fn).__name__) for t in fake] == [
        (t.requires_grad, t.is_leaf, type(t.grad_fn).__name__) for t in eager
    ]


def test_retained_grad_of_a_non_leaf_is_fake():
    x = torch.randn(2, 3, requires_grad=True)
    mode = FakeTensorMode()
    fx = mode.from_real(x)
    with mode:
        hidden = fx.t() * 3
        hidden.retain_grad()
        hidden.exp().sum().backward()
    real_hidden = x.t() * 3
    real_hidden.retain_grad()
    real_hidden.exp().sum().backward()
    assert is_fake(hidden.grad) and metadata(hidden.grad) == metadata(real_hidden.grad)


class ScaledTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = torch.tanh(x) * scale
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (ctx.scale - y * y / ctx.scale), None


def test_custom_autograd_function_runs_forward_and_backward_on_fakes():
    x = torch.randn(4, 5, requires_grad=True)
    ScaledTanh.apply(x.t(), 2.0).sum().backward()
    mode = FakeTensorMode()
    fx = mode.from_real(x.detach().requires_grad_())
    with mode:
        out = ScaledTanh.apply(fx.t(), 2.0)
        out.sum().backward()
    assert type(out.grad_fn).__name__ == "ScaledTanhBackward"
    assert is_fake(fx.grad) and metadata(fx.grad) == metadata(x.grad)
