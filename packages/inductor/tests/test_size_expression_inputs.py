"""Graph inputs that are expressions of symbols rather than symbols (graph.py `_bind`):

- a symbol plus or minus a constant (the partitioner saves `-s0`, the negated pad, for
  constant_pad_nd's backward) binds that symbol for the kernels that index with it;
- any other expression of symbols no input carries alone (channel_shuffle's backward gets
  c // groups, and a gradient of size groups * (c // groups), never c) gets a symbol of its own;
- a symbol no input carries that such an expression holds linearly (the tangent of a pad at both
  ends, n + left + right, beside the saved -left and -right; irfft's gradient, 2n - 2 wide) is
  solved from it.

Both failed: a kernel with `s0` undeclared, or "Cannot convert symbols to int". Compiled against
eager, forward and backward: first call, fresh values, new sizes and scalars.
"""

from __future__ import annotations

import pytest
import sympy
import torch
import torch.fx

import inductor

fake_tensor = pytest.importorskip("fake_tensor")
aten = torch.ops.aten


def pad_last_dim(x, left):
    return (aten.constant_pad_nd.default(x, [left, 2], 1.5),)


def _graph_with_symbolic_pad(x, left):
    gm = torch.fx.symbolic_trace(pad_last_dim)
    mode = fake_tensor.FakeTensorMode(shape_env=fake_tensor.ShapeEnv())
    x_placeholder, left_placeholder = gm.graph.find_nodes(op="placeholder")
    x_placeholder.meta["example_value"] = mode.from_real(x, dynamic_dims=[0])
    left_placeholder.meta["example_value"] = mode.shape_env.scalar(left, "L['left']")
    return gm


def _check(compiled, x, left):
    ours = x.detach().clone().requires_grad_()
    actual, expected = compiled(ours, left)[0], pad_last_dim(x, left)[0]
    torch.testing.assert_close(actual, expected, rtol=0, atol=0)
    cotangent = torch.randn_like(expected)
    (ours_grad,) = torch.autograd.grad(actual, ours, cotangent)
    (eager_grad,) = torch.autograd.grad(expected, x, cotangent)
    torch.testing.assert_close(ours_grad, eager_grad, rtol=0, atol=0)


def test_backward_of_a_symbolic_pad_indexes_with_the_pad():
    torch.manual_seed(0)
    x = torch.randn(4, 3, requires_grad=True)
    compiled = inductor.compile_fx(_graph_with_symbolic_pad(x, 2), [x, 2])
    _check(compiled, x, 2)
    _check(compiled, torch.randn(4, 3, requires_grad=True), 2)  # fresh values
    _check(compiled, torch.randn(4, 3, requires_grad=True), 5)  # another pad, the same graph
    _check(compiled, torch.randn(7, 3, requires_grad=True), 3)  # a new size too


def test_backward_of_a_symbolic_pad_that_crops():
    torch.manual_seed(0)
    x = torch.randn(4, 5, requires_grad=True)
    compiled = inductor.compile_fx(_graph_with_symbolic_pad(x, 2), [x, 2])
    _check(compiled, x, 2)
    _check(compiled, torch.randn(4, 5, requires_grad=True), -1)


def pad_both_ends(x, left, right):
    return (aten.constant_pad_nd.default(x, [left, right], 1.5),)


def test_backward_of_symbolic_pads_at_both_ends_of_a_symbolic_dim():
    # The backward gets the saved -left, -right and a tangent of size n + left + right, never n;
    # the gradient has x's strides (n, 1): n is solved from the tangent's size.
    torch.manual_seed(0)
    x = torch.randn(4, 5, requires_grad=True)
    gm = torch.fx.symbolic_trace(pad_both_ends)
    mode = fake_tensor.FakeTensorMode(shape_env=fake_tensor.ShapeEnv())
    x_placeholder, left_placeholder, right_placeholder = gm.graph.find_nodes(op="placeholder")
    x_placeholder.meta["example_value"] = mode.from_real(x, dynamic_dims=[0, 1])
    left_placeholder.meta["example_value"] = mode.shape_env.scalar(2, "L['left']")
    right_placeholder.meta["example_value"] = mode.shape_env.scalar(3, "L['right']")
    compiled = inductor.compile_fx(gm, [x, 2, 3])
    for rows, columns, left, right in ((4, 5, 2, 3), (4, 5, 2, 3), (6, 7, -1, -2), (3, 9, 4, -3)):
        x = torch.randn(rows, columns, requires_grad=True)
        ours = x.detach().clone().requires_grad_()
        actual, expected = compiled(ours, left, right)[0], pad_both_ends(x, left, right)[0]
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)
        cotangent = torch.randn_like(expected)
        torch.testing.assert_close(
            torch.autograd.grad(actual, ours, cotangent), torch.autograd.grad(expected, x, cotangent), rtol=0, atol=0
        )


def inverse_real_fft(x):
    return (torch.fft.irfft(x),)


def test_backward_of_irfft_returns_a_width_solved_from_the_gradients():
    # irfft of n complex values returns 2n - 2 reals; its backward gets a gradient 2n - 2 wide
    # and no input carrying n, yet returns one n wide: n is (e0 + 2) // 2 ("Cannot convert
    # symbols to int" when the memory plan sized the result). Traced at n = 2, where the
    # backward's rfft is the whole gradient (no slice of it saves n); the trace guards n == 2
    # (the bins between the first and the last, doubled in the backward, are none), so only
    # the rows change.
    torch.manual_seed(0)
    x = torch.randn(3, 2, dtype=torch.complex64, requires_grad=True)
    gm = torch.fx.symbolic_trace(inverse_real_fft)
    mode = fake_tensor.FakeTensorMode(shape_env=fake_tensor.ShapeEnv())
    (x_placeholder,) = gm.graph.find_nodes(op="placeholder")
    x_placeholder.meta["example_value"] = mode.from_real(x, dynamic_dims=[0, 1])
    compiled = inductor.compile_fx(gm, [x])
    for rows, columns in ((3, 2), (3, 2), (5, 2), (2, 2)):
        x = torch.randn(rows, columns, dtype=torch.complex64, requires_grad=True)
        ours = x.detach().clone().requires_grad_()
        actual, expected = compiled(ours)[0], inverse_real_fft(x)[0]
        torch.testing.assert_close(actual, expected)
        cotangent = torch.randn_like(expected)
        torch.testing.assert_close(torch.autograd.grad(actual, ours, cotangent), torch.autograd.grad(expected, x, cotangent))


def shuffle_channels(x, groups):
    return (torch.nn.functional.channel_shuffle(x, groups),)


def test_backward_of_channel_shuffle_with_symbolic_channels_and_groups():
    torch.manual_seed(0)
    x = torch.randn(2, 6, 3, 3, requires_grad=True)
    gm = torch.fx.symbolic_trace(shuffle_channels)
    mode = fake_tensor.FakeTensorMode(shape_env=fake_tensor.ShapeEnv())
    x_placeholder, groups_placeholder = gm.graph.find_nodes(op="placeholder")
    x_placeholder.meta["example_value"] = mode.from_real(x, dynamic_dims=[0, 1])
    groups_placeholder.meta["example_value"] = mode.shape_env.scalar(3, "L['groups']")
    compiled = inductor.compile_fx(gm, [x, 3])
    for batch, channels, groups in ((2, 6, 3), (2, 6, 3), (3, 8, 2), (4, 12, 4)):
        x = torch.randn(batch, channels, 3, 3, requires_grad=True)
        ours = x.detach().clone().requires_grad_()
        actual, expected = compiled(ours, groups)[0], shuffle_channels(x, groups)[0]
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)
        cotangent = torch.randn_like(expected)
        torch.testing.assert_close(
            torch.autograd.grad(actual, ours, cotangent), torch.autograd.grad(expected, x, cotangent), rtol=0, atol=0
        )


def test_an_expression_bound_twice_keeps_its_symbol_and_the_next_gets_another():
    # A padded length p is a saved tensor's size and stride; the gradient's stride is 8 * p.
    # Rebinding p renamed it, and the next expression then got p's (new) name.
    from inductor.input_symbols import InputSymbols

    s0 = sympy.Symbol("s0", integer=True, positive=True)
    padded = s0 + sympy.Mod(-sympy.Mod(s0, 16), 16)
    symbols = InputSymbols()
    size = symbols.bind(padded, "arg0.size(1)", 16)
    stride = symbols.bind(padded, "arg0.stride(0)", 16)
    gradient_stride = symbols.bind(8 * padded, "arg1.stride(0)", 128)
    assert size == stride != gradient_stride
    assert symbols.sources[size] == "arg0.size(1)"
    assert symbols.sources[gradient_stride] == "arg1.stride(0)"
