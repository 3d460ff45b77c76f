"""Resizing a parameter to the input's size (F.interpolate, as ViTs resize their position
embeddings), trained through compiler.compile: every mode's backward, first on static sizes
and then on symbolic ones after a size change, compared with eager's values and gradients."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import compiler

MODES = [
    ("nearest", False),
    ("bilinear", False),
    ("bilinear", True),
    ("bicubic", False),
    ("bicubic", True),  # its backward's meta kernel in torch takes no symbolic sizes
]


def _resized_sum(table, x, mode, antialias):
    # The table shrinks or grows to the image's size, like dinov2's interpolate_pos_encoding.
    align = {} if mode == "nearest" else {"align_corners": False, "antialias": antialias}
    resized = F.interpolate(table, size=x.shape[-2:], mode=mode, **align)
    return (resized * x).square().mean()


@pytest.mark.parametrize(("mode", "antialias"), MODES, ids=[f"{m}{'_aa' if a else ''}" for m, a in MODES])
def test_resize_trains_as_eager_on_new_values_and_new_sizes(mode, antialias):
    torch.manual_seed(0)
    table = torch.randn(2, 3, 7, 7, requires_grad=True)
    compiled = compiler.compile(_resized_sum, backend="inductor")
    # First call, a cache hit with new values, a new size (symbolic H and W), another size.
    for height, width in ((9, 9), (9, 9), (12, 10), (6, 13)):
        x = torch.randn(2, 3, height, width)
        table.grad = None
        got = compiled(table, x, mode, antialias)
        got.backward()
        got_grad, table.grad = table.grad, None
        want = _resized_sum(table, x, mode, antialias)
        want.backward()
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(got_grad, table.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_resize_by_a_scale_factor_trains_as_eager_at_symbolic_sizes(dtype):
    # The output is floor(1.7 * w) wide, a size computed through floats: the backward reads a
    # gradient of that width (in bfloat16, with a kernel that converts it), which C++ cannot
    # print as floor(FloatMul(s2, 1.7)): it is a symbol read from the gradient's size.
    def resized(x):
        return F.interpolate(x, scale_factor=1.7, mode="nearest").sin()

    torch.manual_seed(0)
    compiled = compiler.compile(resized, backend="inductor", dynamic=True)
    for width in (4, 4, 7, 10):
        x = torch.randn(2, 3, width, dtype=dtype, requires_grad=True)
        ours = x.detach().clone().requires_grad_()
        got, want = compiled(ours), resized(x)
        cotangent = torch.randn_like(want)
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(torch.autograd.grad(got, ours, cotangent), torch.autograd.grad(want, x, cotangent))
