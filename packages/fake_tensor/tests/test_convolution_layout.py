"""Convolutions on fakes return outputs and gradients in the memory format eager's backend
picks (channels-last in, channels-last out), for every dtype, dimensionality and variant."""

import pytest
import torch
from torch.nn import functional as F

from fake_tensor import FakeTensorMode

CHANNELS_LAST = {4: torch.channels_last, 5: torch.channels_last_3d}


def _layout(t: torch.Tensor, channels_last: bool) -> torch.Tensor:
    return t.to(memory_format=CHANNELS_LAST[t.dim()]) if channels_last and t.dim() in CHANNELS_LAST else t


CONVOLUTIONS = {
    "conv1d": (F.conv1d, (2, 4, 9), (6, 4, 3), {}),
    "conv2d": (F.conv2d, (2, 4, 9, 7), (6, 4, 3, 3), {"padding": 1}),
    "conv2d_1x1_spatial_out": (F.conv2d, (2, 4, 3, 3), (6, 4, 3, 3), {}),
    "conv2d_grouped_strided": (F.conv2d, (2, 4, 9, 7), (6, 2, 3, 3), {"groups": 2, "stride": 2}),
    "conv2d_depthwise": (F.conv2d, (2, 4, 9, 7), (4, 1, 3, 3), {"groups": 4}),
    "conv_transpose2d": (F.conv_transpose2d, (2, 4, 5, 6), (4, 3, 3, 3), {"stride": 2}),
    "conv3d": (F.conv3d, (2, 4, 5, 6, 5), (3, 4, 3, 3, 3), {}),
}
LAYOUTS = {"contiguous": (False, False), "channels_last_input": (True, False), "channels_last_weight": (False, True),
           "channels_last_both": (True, True)}


def _metadata(t):
    return t.shape, t.stride(), t.dtype


def _significant_metadata(t):
    # Backends disagree among themselves on strides of size-1 dims (e.g. a depthwise
    # weight's gradient); those never change which element is where.
    return t.shape, [st for size, st in zip(t.shape, t.stride()) if size > 1], t.dtype


def _bias_size(conv, weight_shape, options):
    return weight_shape[1] * options.get("groups", 1) if conv is F.conv_transpose2d else weight_shape[0]


def _run_both(name, layout, dtype, program):
    conv, input_shape, weight_shape, options = CONVOLUTIONS[name]
    input_last, weight_last = LAYOUTS[layout]
    reals = [
        _layout(torch.randn(input_shape, dtype=dtype), input_last).requires_grad_(),
        _layout(torch.randn(weight_shape, dtype=dtype), weight_last).requires_grad_(),
        torch.randn(_bias_size(conv, weight_shape, options), dtype=dtype, requires_grad=True),
    ]
    eager = program(lambda *a: conv(*a, **options), *reals)
    mode = FakeTensorMode()
    fakes = [mode.from_real(t) for t in reals]
    with mode:
        fake = program(lambda *a: conv(*a, **options), *fakes)
    return eager, fake


# float32 takes oneDNN on CPU, float64 the slow kernels (as bfloat16 does).
DTYPES = [torch.float32, torch.float64]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUTS.keys())
@pytest.mark.parametrize("name", CONVOLUTIONS)
def test_convolution_output_has_eager_layout(name, layout, dtype):
    eager, fake = _run_both(name, layout, dtype, lambda conv, x, w, b: conv(x, w, b))
    assert _metadata(fake) == _metadata(eager)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUTS.keys())
@pytest.mark.parametrize("name", CONVOLUTIONS)
def test_convolution_gradients_have_eager_layout(name, layout, dtype):
    def gradients(conv, x, w, b):
        out = conv(x, w, b)
        # autograd.grad returns convolution_backward's own outputs (`.grad` would be
        # re-laid out like each parameter by gradient accumulation).
        return torch.autograd.grad(out, (x, w, b), torch.ones_like(out))

    eager, fake = _run_both(name, layout, dtype, gradients)
    assert [_significant_metadata(g) for g in fake] == [_significant_metadata(g) for g in eager]
