"""A value the forward saves for the backward keeps its traced strides where memory_order does
not keep them: the backward was compiled to read it with those, and inductor's forward returned
it row-major. No error, wrong gradients:

- gapped: functionalized, `attn[..., i, :i] = row` is aten.copy of that slice, and eager's copy
  keeps the slice's strides ((27, 9, 1) for a (2, 3, 1) copy): kimi_linear's chunked delta
  attention in the HF training zoo;
- symbolic and not row-major: tanh of a transposed conv1d output, (2, s0, 64) with strides
  (64*s0, 1, s0) once the length is dynamic: squeezebert at a new length;
- a view of such a value (heads of a transposed conv's sum), which the forward returned as a
  view of a row-major buffer: inkling's attention at a new length;
- an extern kernel's result over an input inductor realized in another order than eager's: a
  depthwise conv over a permuted view of computed tokens, realized row-major, returns row-major
  where eager's is channels-last: CvT's query projection in the HF training zoo.

Compiled against eager: first call, fresh values, new sizes (symbolic strides).
"""

from __future__ import annotations

import pytest
import torch

import compiler


def triangular_solve_rows(a):
    # The row-by-row update of kimi_linear's (and qwen3_next's) chunked attention.
    attn = a * 1.0
    for i in range(1, a.shape[-1]):
        row = attn[..., i, :i].clone()
        sub = attn[..., :i, :i].clone()
        attn[..., i, :i] = row + (row.unsqueeze(-1) * sub).sum(-2)
    return attn


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_gradients_through_slices_written_in_a_loop_match_eager(backend):
    compiler.reset()
    compiled = compiler.compile(triangular_solve_rows, backend=backend)
    torch.manual_seed(0)
    for batch in ((2, 3), (2, 3), (3, 5), (4, 2)):
        x = torch.randn(*batch, 4, 4)
        values_and_gradients_match(compiled, triangular_solve_rows, [x])
    compiler.reset()


def values_and_gradients_match(compiled, fn, args, wrt=(0,)):
    """compiled(*args) against fn(*args): the values, and the gradients of the arguments at
    positions `wrt` under one random cotangent (each side gets its own copies of those)."""
    ours = [a.clone().requires_grad_() if k in wrt else a for k, a in enumerate(args)]
    eager = [a.clone().requires_grad_() if k in wrt else a for k, a in enumerate(args)]
    actual, expected = compiled(*ours), fn(*eager)
    torch.testing.assert_close(actual, expected)
    cotangent = torch.randn_like(expected)
    actual.backward(cotangent)
    expected.backward(cotangent)
    for k in wrt:
        torch.testing.assert_close(ours[k].grad, eager[k].grad)


def copy_of_a_slice(x):
    # An output (not only a saved value) with gaps: eager's strides, as torch.compile returns.
    y = x * 2
    return torch.ops.aten.copy.default(y[:, 1:3], x[:, :2] + 1)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_an_output_with_gaps_has_eager_strides(backend):
    compiler.reset()
    compiled = compiler.compile(copy_of_a_slice, backend=backend)
    for rows in (4, 4, 7):
        x = torch.randn(rows, 5)
        actual, expected = compiled(x), copy_of_a_slice(x)
        torch.testing.assert_close(actual, expected)
        assert actual.stride() == expected.stride()
    compiler.reset()


def conv_over_the_sequence(x, weight, gain):
    y = torch.nn.functional.conv1d(x.transpose(1, 2), weight).transpose(1, 2)
    return torch.tanh(y) * gain  # tanh(y) is saved, in y's (transposed) layout


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_saved_transposed_activation_at_new_lengths_matches_eager(backend):
    compiler.reset()
    compiled = compiler.compile(conv_over_the_sequence, backend=backend)
    torch.manual_seed(0)
    for length in (12, 12, 9, 17):
        args = [torch.randn(2, length, 8), torch.randn(8, 8, 1), torch.randn(8)]
        values_and_gradients_match(compiled, conv_over_the_sequence, args, wrt=(1, 2))
    compiler.reset()


def short_conv_then_head_norm(k, weight, gain):
    # inkling's attention: a causal depthwise conv over the sequence plus its input, viewed as
    # heads, then an RMS norm. The saved view of that sum keeps the transposed conv's layout:
    # (8*s0, 1, 4*s0, s0) at a new length, where a view of a row-major sum had (8*s0, 8, 4, 1).
    length = k.shape[1]
    conv = torch.nn.functional.conv1d(k.transpose(1, 2), weight, padding=3, groups=8)[:, :, :length]
    heads = (conv.transpose(1, 2) + k).view(2, length, -1, 4)
    return gain * (heads * torch.rsqrt(heads.pow(2).mean(-1, keepdim=True) + 1e-6))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_saved_view_of_a_transposed_sum_at_new_lengths_matches_eager(backend):
    compiler.reset()
    compiled = compiler.compile(short_conv_then_head_norm, backend=backend)
    torch.manual_seed(0)
    weight, gain = torch.randn(8, 1, 4), torch.rand(4) + 0.5
    for length in (12, 12, 9, 15):
        values_and_gradients_match(compiled, short_conv_then_head_norm, [torch.randn(2, length, 8), weight, gain])
    compiler.reset()


def depthwise_conv_over_tokens(tokens, weight, gain):
    # CvT's convolutional projection: tokens (batch, 1 + h*w, channels) of a layer norm (here a
    # pointwise op), the class token split off, the rest viewed as a channels-last image.
    image = (tokens * 2 + 1)[:, 1:].permute(0, 2, 1).view(2, 8, 2, 2)
    return torch.nn.functional.conv2d(image, weight, padding=1, groups=8) * gain[:, None, None]


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_saved_convolution_over_a_realized_view_matches_eager(backend):
    compiler.reset()
    compiled = compiler.compile(depthwise_conv_over_tokens, backend=backend)
    torch.manual_seed(0)
    for _ in range(2):
        args = [torch.randn(2, 5, 8), torch.randn(8, 1, 3, 3), torch.rand(8) + 0.5]
        values_and_gradients_match(compiled, depthwise_conv_over_tokens, args, wrt=(0, 1, 2))
    compiler.reset()
