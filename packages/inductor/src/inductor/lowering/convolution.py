"""Convolution and its backward: aten calls (cuDNN, oneDNN), channels-last where the graph chose it.

cuDNN does not fuse a bias: aten adds it in a kernel of its own after the convolution, which
reads and writes the whole output once more (ConvNeXt-tiny's 22 biased convolutions: 0.46 ms
of an H200's 4.9 ms per inference step). So, as torch.compile does on GPUs, the convolution runs
without its bias and the bias is a pointwise add that fuses into the output's readers (a layer
norm, an activation). oneDNN adds the bias inside its CPU kernel for free, before rounding a
bfloat16/float16 output once: CPU tensors keep it, whichever kernels they get (Triton's under
the interpreter rounded the output twice, a bf16 ulp off eager where bias and sum cancel).

Where layout optimization chose channels-last (layout_optimization.py), the activations a
convolution reads (its input; a backward's output gradient and input) are laid out so; aten
then runs the channels-last kernel and returns channels-last outputs and gradients.
"""

from __future__ import annotations

import torch

from ..context import current_graph
from ..ir import Buffer, Pointwise, ReinterpretView
from ..layout_optimization import CHANNELS_LAST
from ..memory_order import dense_in_order, with_dense_strides
from . import LOWERINGS, register_lowering
from .extern import EXTERN_OVERLOADS, extern_call
from .views import view

aten = torch.ops.aten


@register_lowering(aten.convolution.default)
def convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    x, traced = _activations_laid_out(x)
    geometry = (stride, padding, dilation, transposed, output_padding, groups)
    if bias is None or x.device.type != "cuda":
        return extern_call(aten.convolution.default, (x, weight, bias, *geometry), {}, is_fallback=False, traced=traced)
    out = extern_call(aten.convolution.default, (x, weight, None, *geometry), {}, is_fallback=False, traced=traced)
    spatial = len(out.size) - 2
    return LOWERINGS[aten.add.Tensor](out, view(bias, [bias.size[0]] + [1] * spatial))


@register_lowering(aten.convolution_backward.default)
def convolution_backward(grad_output, x, weight, *rest):
    grad_output, traced = _activations_laid_out(grad_output)
    x, _ = _activations_laid_out(x)
    return extern_call(aten.convolution_backward.default, (grad_output, x, weight, *rest), {}, is_fallback=False,
                       traced=traced)


def _activations_laid_out(value):
    """(`value` channels-last where the graph chose that for this node, the node's value as aten
    will return it then); else (`value`, None: the traced value)."""
    graph = current_graph()
    if graph.current_node not in graph.channels_last or len(value.size) != 4:
        return value, None
    if not isinstance(value, (Buffer, ReinterpretView)):
        value = graph.realize_in_memory_order(value, list(CHANNELS_LAST))
    elif not dense_in_order(value.layout.size, value.layout.stride, CHANNELS_LAST):
        copy = Pointwise(value.device, value.dtype, value.size, value.make_loader())  # the stem's input
        value = graph.realize_in_memory_order(copy, list(CHANNELS_LAST))
    return with_dense_strides(value, CHANNELS_LAST), _channels_last_outputs(graph.current_val())


def _channels_last_outputs(val):
    """The traced value(s) with channels-last strides: what aten returns for channels-last
    activations. extern_call re-runs the op on fakes where sizes are static; with symbolic ones
    it takes these, so the wrapper does not copy the result back to row-major."""
    if isinstance(val, (tuple, list)):
        return type(val)(_channels_last_outputs(v) for v in val)
    if not isinstance(val, torch.Tensor) or val.dim() != 4:
        return val
    n, c, h, w = val.shape
    return val.as_strided(val.shape, (h * w * c, 1, w * c, c))


EXTERN_OVERLOADS.update({aten.convolution.default, aten.convolution_backward.default})
