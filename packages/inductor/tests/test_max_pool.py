"""max_pool2d lowered to kernels (lowering/pooling.py), and training graphs saving int8 window
offsets (passes/max_pool_offsets.py): differential against eager, ties and NaNs included."""

from __future__ import annotations

import aot_autograd
import pytest
import torch
from torch import nn

import inductor
from conftest import assert_same, backend_options, check, compile_aten, traced, uses_triton
from inductor.compile_fx import partition_for_inductor
from inductor.decompositions import decompositions
from inductor.max_pool_ops import (
    max_pool2d_offsets_to_indices, max_pool2d_with_offsets, max_pool2d_with_offsets_backward,
)

aten = torch.ops.aten

# (input shape, kernel, stride, padding, dilation, ceil_mode)
POOLS = {
    "resnet_stem": ((2, 3, 9, 9), [3, 3], [2, 2], [1, 1], [1, 1], False),
    "ceil_mode_padded": ((2, 3, 10, 9), [3, 3], [2, 2], [1, 1], [1, 1], True),
    "rectangular_dilated": ((2, 2, 11, 10), [3, 2], [2, 1], [1, 1], [2, 1], False),
    "stride_past_kernel": ((1, 2, 7, 8), [2, 2], [3, 3], [0, 0], [1, 1], True),
    "default_stride": ((1, 2, 6, 6), [2, 2], [], [0, 0], [1, 1], False),
    "unbatched": ((3, 8, 7), [2, 2], [2, 2], [1, 0], [1, 1], False),
}


def _ties_and_nans(shape, layout, dtype, device, nans=3):
    """Values in {0, 1, 2} (every window has ties) and a few NaNs, two of them side by side."""
    x = torch.randint(0, 3, shape, device=device).to(dtype)
    flat = x.view(-1)
    for k in torch.randperm(flat.numel())[:nans].tolist():
        flat[k] = float("nan")
        flat[min(k + 1, flat.numel() - 1)] = float("nan")
    if layout == "channels_last" and x.dim() == 4:
        x = x.contiguous(memory_format=torch.channels_last)
    return x


def _pool(name):
    shape, *args = POOLS[name]
    return shape, args


def _forward(args, with_relu=False):
    def fn(x):
        source = aten.relu.default(x) if with_relu else x
        pooled = aten.max_pool2d_with_indices.default(source, *args)
        return pooled[0], pooled[1]

    return fn


def _strides(t):
    """Strides of the dims that have them (a size-1 dim's stride is arbitrary)."""
    return [s for s, n in zip(t.stride(), t.shape) if n != 1]


def _assert_identical(actual, expected):
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape and _strides(a) == _strides(e), (a.dtype, a.stride(), e.stride())
        torch.testing.assert_close(a, e, rtol=0, atol=0, equal_nan=True)


# Every geometry in float32, each in one layout (the lowering reads inputs through their
# strides either way); the half types compare in float32 and round back, which is exact.
CASES = [
    ("resnet_stem", torch.float32, "channels_last"), ("resnet_stem", torch.bfloat16, "contiguous"),
    ("ceil_mode_padded", torch.float32, "contiguous"), ("ceil_mode_padded", torch.float16, "channels_last"),
    ("rectangular_dilated", torch.float32, "channels_last"), ("stride_past_kernel", torch.float32, "contiguous"),
    ("default_stride", torch.float32, "channels_last"), ("unbatched", torch.float32, "contiguous"),
]


@pytest.mark.parametrize("name,dtype,layout", CASES, ids=str)
def test_forward_values_and_indices_are_eagers(name, layout, dtype, device):
    shape, args = _pool(name)
    fn = _forward(args)
    x = _ties_and_nans(shape, layout, dtype, device)
    compiled = compile_aten(fn, [x])
    _assert_identical(compiled(x), fn(x))
    fresh = _ties_and_nans(shape, layout, dtype, device, nans=1)
    _assert_identical(compiled(fresh), fn(fresh))


# stride_past_kernel leaves input positions in no window: their gradient is zero.
@pytest.mark.parametrize("name,layout", [
    ("resnet_stem", "channels_last"), ("ceil_mode_padded", "contiguous"), ("rectangular_dilated", "channels_last"),
    ("stride_past_kernel", "contiguous"), ("unbatched", "contiguous")])
def test_backward_gathers_eagers_gradient(name, layout, device):
    shape, args = _pool(name)
    x = _ties_and_nans(shape, layout, torch.float32, device)
    _, indices = aten.max_pool2d_with_indices.default(x, *args)

    def fn(g1, g2, x, indices):
        # The incoming gradient is a sum (two readers of the pool's output): it fuses in.
        return (aten.max_pool2d_with_indices_backward.default(aten.add.Tensor(g1, g2), x, *args, indices),)

    g1, g2 = (torch.randn(indices.shape, device=device).to(memory_format=_format(indices)) for _ in range(2))
    compiled = check(fn, g1, g2, x, indices)
    assert compiled.kernel_count == 1
    assert _strides(compiled(g1, g2, x, indices)[0]) == _strides(fn(g1, g2, x, indices)[0])


def _format(t):
    if t.dim() == 4 and not t.is_contiguous() and t.is_contiguous(memory_format=torch.channels_last):
        return torch.channels_last
    return torch.contiguous_format


@pytest.mark.parametrize("name,dtype,layout", [
    ("resnet_stem", torch.bfloat16, "channels_last"), ("rectangular_dilated", torch.float32, "contiguous"),
    ("unbatched", torch.float16, "contiguous")], ids=str)
def test_offset_ops_match_their_eager_definition(name, dtype, layout, device):
    shape, (kernel, stride, padding, dilation, ceil_mode) = _pool(name)
    stride = stride or kernel
    x = _ties_and_nans(shape, layout, dtype, device)

    def fn(x, grad):
        pooled = max_pool2d_with_offsets(x, kernel, stride, padding, dilation, ceil_mode)
        values, offsets = pooled[0], pooled[1]
        indices = max_pool2d_offsets_to_indices(offsets, kernel, stride, padding, dilation, shape[-1])
        gradient = max_pool2d_with_offsets_backward(
            grad, offsets, list(shape[-2:]), kernel, stride, padding, dilation, ceil_mode)
        return values, offsets, indices, gradient

    values = aten.max_pool2d_with_indices.default(x, kernel, stride, padding, dilation, ceil_mode)[0]
    grad = torch.randn(values.shape, device=device).to(dtype)
    compiled = compile_aten(fn, [x, grad])
    actual, expected = compiled(x, grad), fn(x, grad)
    _assert_identical(actual[:3], expected[:3])
    # Eager adds a half-precision gradient in that precision, one output at a time; the kernel
    # adds in float32 and rounds once.
    tolerance = {} if dtype == torch.float32 else {"rtol": 2e-2, "atol": 1e-2}
    assert_same(actual[3], expected[3], **tolerance)


def test_relu_then_pool_is_one_kernel(device):
    x = torch.randn(2, 4, 12, 12, device=device).to(memory_format=torch.channels_last)
    compiled = check(_forward([[3, 3], [2, 2], [1, 1], [1, 1], False], with_relu=True), x)
    if uses_triton(device):
        assert compiled.kernel_count == 1
    else:  # C++: ATen's vectorized pool beats a generated window scan (lowering/pooling.py)
        assert "torch.ops.aten.max_pool2d_with_indices.default" in compiled.source


def test_large_windows_stay_aten_calls(device):
    fn = _forward([[6, 6], [2, 2], [3, 3], [1, 1], False])
    x = torch.randn(1, 2, 13, 13, device=device)
    compiled = check(fn, x)
    assert "torch.ops.aten.max_pool2d_with_indices.default" in compiled.source


def _stem(layout):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
    return model.to(memory_format=torch.channels_last) if layout == "channels_last" else model


def _images(size, layout, device):
    x = torch.randn(2, 3, size, size, device=device)
    return (x.contiguous(memory_format=torch.channels_last) if layout == "channels_last" else x).requires_grad_()


def _gradients(model, x, out):
    out.backward(torch.ones_like(out))
    grads = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    return grads


def test_channels_last_training_step_matches_eager(device):
    # (Contiguous layouts: the forward and backward tests above; symbolic sizes: the root
    # tests/test_max_pool_training.py, through compiler.compile.)
    layout = "channels_last"
    model = _stem(layout).to(device)
    compiled = {}
    for size in (16, 16, 20):  # first call, new values, a new size (these graphs are static)
        x = _images(size, layout, device)
        if size not in compiled:
            compiled[size] = inductor.compile_fx(traced(model), [x], options=backend_options())
        out = compiled[size](x)[0]
        ours = _gradients(model, x, out)
        expected = model(x)
        assert _strides(out) == _strides(expected)
        assert_same(out, expected, rtol=1e-4, atol=1e-5)
        for a, e in zip(ours, _gradients(model, x, expected)):
            assert_same(a, e, rtol=1e-4, atol=1e-4)


def test_indices_returned_to_the_caller_are_eagers(device):
    class PoolWithIndices(nn.Module):
        def forward(self, x):
            return nn.functional.max_pool2d(torch.relu(x), 3, 2, 1, return_indices=True)

    x = _ties_and_nans((2, 3, 10, 10), "channels_last", torch.float32, device, nans=1).requires_grad_()
    compiled = inductor.compile_fx(torch.fx.symbolic_trace(PoolWithIndices()), [x], options=backend_options())
    values, indices = compiled(x)
    expected_values, expected_indices = PoolWithIndices()(x)
    _assert_identical([values.detach(), indices], [expected_values.detach(), expected_indices])
    grad = torch.randn_like(values)
    ours = torch.autograd.grad(values, x, grad)[0]
    torch.testing.assert_close(ours, torch.autograd.grad(expected_values, x, grad)[0], equal_nan=True)


def test_training_forward_saves_int8_offsets_not_int64_indices():
    forward_outputs = []

    def keep_forward_outputs(gm, inputs):
        output = next(n for n in gm.graph.nodes if n.op == "output")
        forward_outputs.extend(n.meta["val"] for n in output.args[0] if isinstance(n, torch.fx.Node))
        return gm  # the ATen graph, run eagerly: the offset ops' own definitions

    model = _stem("channels_last")
    x = _images(16, "channels_last", "cpu")
    compiled = aot_autograd.aot_module_simplified(
        traced(model), [x], keep_forward_outputs, lambda gm, inputs: gm,
        decompositions=decompositions(), partition_fn=partition_for_inductor)
    out = compiled(x)[0]
    pooled = tuple(out.shape)
    saved = [(v.dtype, tuple(v.shape)) for v in forward_outputs if isinstance(v, torch.Tensor)]
    assert (torch.int8, pooled) in saved
    assert (torch.int64, pooled) not in saved
    ours = _gradients(model, x, out)
    for a, e in zip(ours, _gradients(model, x, model(x))):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)
