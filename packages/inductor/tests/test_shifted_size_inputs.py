"""A graph input that is a symbol plus or minus a constant (the partitioner saves `-s0`, the
negated pad, for constant_pad_nd's backward) binds that symbol for the kernels that index with
it (graph.py `_bind_shifted_symbol`): they failed to compile with `s0` undeclared. Compiled
against eager, forward and backward: first call, fresh values, a new pad and a new size."""

from __future__ import annotations

import pytest
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
