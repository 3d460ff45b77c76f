"""Convolution: an aten call (cuDNN, oneDNN), its bias added by a kernel on CUDA devices.

cuDNN does not fuse a bias: aten adds it in a kernel of its own after the convolution, which
reads and writes the whole output once more (ConvNeXt-tiny's 22 biased convolutions: 0.46 ms
of an H200's 4.9 ms per inference step). So, as torch.compile does on GPUs, the convolution runs
without its bias and the bias is a pointwise add that fuses into the output's readers (a layer
norm, an activation). oneDNN adds the bias inside its CPU kernel for free, before rounding a
bfloat16/float16 output once: CPU tensors keep it, whichever kernels they get (Triton's under
the interpreter rounded the output twice, a bf16 ulp off eager where bias and sum cancel).
"""

from __future__ import annotations

import torch

from . import LOWERINGS, register_lowering
from .extern import EXTERN_OVERLOADS, extern
from .views import view

aten = torch.ops.aten


@register_lowering(aten.convolution.default)
def convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    geometry = (stride, padding, dilation, transposed, output_padding, groups)
    if bias is None or x.device.type != "cuda":
        return extern(aten.convolution.default, (x, weight, bias, *geometry), {})
    out = extern(aten.convolution.default, (x, weight, None, *geometry), {})
    spatial = len(out.size) - 2
    return LOWERINGS[aten.add.Tensor](out, view(bias, [bias.size[0]] + [1] * spatial))


EXTERN_OVERLOADS.add(aten.convolution.default)
