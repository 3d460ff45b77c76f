"""Max-pool ops that keep a window offset instead of an input index, for training graphs.

Eager's `max_pool2d_with_indices` returns, beside the maxima, int64 indices into the input's
H*W plane, which autograd saves for the backward. Which element of its window won needs only
`kh * KW + kw` (< 128 for the windows inductor lowers): an int8 per output, 1/8 of the bytes.
`passes/max_pool_offsets.py` puts these ops into the joint graph in place of the indices the
backward reads; `lowering/pooling.py` lowers them to pointwise kernels. Their eager
implementations (composites of aten ops, which also give fake tensors their metadata) are the
specification: the offsets are eager's indices re-expressed, the backward is eager's backward.

    ptc_inductor::max_pool2d_with_offsets(x, kernel, stride, padding, dilation, ceil_mode)
        -> (values, int8 offsets)
    ptc_inductor::max_pool2d_offsets_to_indices(offsets, kernel, stride, padding, dilation, input_width)
        -> int64 indices, exactly eager's
    ptc_inductor::max_pool2d_with_offsets_backward(grad, offsets, input_hw, kernel, stride, padding, dilation,
                                                    ceil_mode)
        -> the gradient of x (no need of x itself: the backward saves nothing else)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

aten = torch.ops.aten

# A window of more elements is left to aten's kernel: the generated code unrolls the window
# (one load per element), which only pays for small windows (torch.compile's limit too).
MAX_LOWERED_WINDOW = 25


@dataclass(frozen=True)
class PoolGeometry:
    """max_pool2d's int[2] arguments, defaults applied (stride [] means the kernel size)."""

    kernel: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int]

    @staticmethod
    def of(kernel_size, stride=(), padding=0, dilation=1) -> "PoolGeometry":
        kernel = _pair(kernel_size)
        return PoolGeometry(kernel, _pair(stride) if stride not in ((), []) else kernel, _pair(padding), _pair(dilation))

    @property
    def window(self) -> int:
        return self.kernel[0] * self.kernel[1]

    def args(self) -> tuple:
        return list(self.kernel), list(self.stride), list(self.padding), list(self.dilation)


def _pair(value) -> tuple[int, int]:
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    return value * 2 if len(value) == 1 else value


def lowered_as_kernel(dtype: torch.dtype, geometry: PoolGeometry) -> bool:
    """Whether lowering/pooling.py writes this pool as a generated kernel (else an aten call)."""
    return dtype.is_floating_point and geometry.window <= MAX_LOWERED_WINDOW


_LIB = torch.library.Library("ptc_inductor", "DEF")
_LIB.define(
    "max_pool2d_with_offsets(Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, "
    "bool ceil_mode) -> (Tensor, Tensor)"
)
_LIB.define(
    "max_pool2d_offsets_to_indices(Tensor offsets, int[2] kernel_size, int[2] stride, int[2] padding, "
    "int[2] dilation, SymInt input_width) -> Tensor",
    tags=(torch.Tag.pointwise,),
)
_LIB.define(
    "max_pool2d_with_offsets_backward(Tensor grad_output, Tensor offsets, SymInt[2] input_hw, int[2] kernel_size, "
    "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode) -> Tensor"
)


def _output_positions(like: torch.Tensor, geometry: PoolGeometry):
    """Each output's window origin (top-left, padding included) as broadcastable (OH, 1), (OW,)."""
    oh = torch.arange(like.shape[-2], device=like.device).view(-1, 1)
    ow = torch.arange(like.shape[-1], device=like.device)
    return oh * geometry.stride[0] - geometry.padding[0], ow * geometry.stride[1] - geometry.padding[1]


@torch.library.impl(_LIB, "max_pool2d_with_offsets", "CompositeExplicitAutograd")
def _with_offsets(x, kernel_size, stride, padding, dilation, ceil_mode):
    geometry = PoolGeometry.of(kernel_size, stride, padding, dilation)
    values, indices = aten.max_pool2d_with_indices.default(x, kernel_size, stride, padding, dilation, ceil_mode)
    top, left = _output_positions(indices, geometry)
    width = x.shape[-1]
    kh = (torch.div(indices, width, rounding_mode="floor") - top) // geometry.dilation[0]
    kw = (torch.remainder(indices, width) - left) // geometry.dilation[1]
    # empty_like keeps the indices' strides (channels-last stays channels-last).
    offsets = torch.empty_like(indices, dtype=torch.int8).copy_(kh * geometry.kernel[1] + kw)
    return values, offsets


def indices_of(offsets, geometry: PoolGeometry, width):
    top, left = _output_positions(offsets, geometry)
    kh = torch.div(offsets, geometry.kernel[1], rounding_mode="floor").long()
    kw = torch.remainder(offsets, geometry.kernel[1]).long()
    ih, iw = top + kh * geometry.dilation[0], left + kw * geometry.dilation[1]
    return torch.empty_like(offsets, dtype=torch.int64).copy_(ih * width + iw)


@torch.library.impl(_LIB, "max_pool2d_offsets_to_indices", "CompositeExplicitAutograd")
def _offsets_to_indices(offsets, kernel_size, stride, padding, dilation, input_width):
    return indices_of(offsets, PoolGeometry.of(kernel_size, stride, padding, dilation), input_width)


@torch.library.impl(_LIB, "max_pool2d_with_offsets_backward", "CompositeExplicitAutograd")
def _with_offsets_backward(grad_output, offsets, input_hw, kernel_size, stride, padding, dilation, ceil_mode):
    geometry = PoolGeometry.of(kernel_size, stride, padding, dilation)
    indices = indices_of(offsets, geometry, input_hw[1])
    # Eager's backward reads its input for the shape and memory format only; the gradient is
    # laid out as the input was, which the offsets (laid out as the output) tell.
    channels_last = offsets.dim() == 4 and not offsets.is_contiguous() and offsets.is_contiguous(
        memory_format=torch.channels_last)
    like = torch.empty(
        (*offsets.shape[:-2], *input_hw), dtype=grad_output.dtype, device=grad_output.device,
        memory_format=torch.channels_last if channels_last else torch.contiguous_format,
    )
    return aten.max_pool2d_with_indices_backward.default(
        grad_output, like, kernel_size, stride, padding, dilation, ceil_mode, indices
    )


max_pool2d_with_offsets = torch.ops.ptc_inductor.max_pool2d_with_offsets.default
max_pool2d_offsets_to_indices = torch.ops.ptc_inductor.max_pool2d_offsets_to_indices.default
max_pool2d_with_offsets_backward = torch.ops.ptc_inductor.max_pool2d_with_offsets_backward.default
