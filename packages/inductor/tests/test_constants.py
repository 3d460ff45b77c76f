"""Tensors the traced code made itself (`x + torch.tensor([1., 2.])`) reach the graph as get_attr
constants: kernels read them like inputs, on every backend, in inference and training graphs."""

from __future__ import annotations

import pytest
import torch
import torch.fx

import inductor
from conftest import assert_same, backend_options, compile_graph

aten = torch.ops.aten


class WithConstant(torch.nn.Module):
    """`fn(x, self.constant)`; a plain tensor attribute, so symbolic_trace records a get_attr."""

    def __init__(self, constant: torch.Tensor, fn):
        super().__init__()
        self.constant, self.fn = constant, fn

    def forward(self, x):
        return (self.fn(x, self.constant),)


def constant_of(dtype: torch.dtype, device) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.rand(8, device=device) > 0.5
    if dtype.is_floating_point:
        return torch.randn(8, device=device).to(dtype)
    return torch.randint(-5, 5, (8,), device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.int32, torch.bool])
def test_constant_of_each_dtype_is_read_by_the_kernel(dtype, device):
    module = WithConstant(constant_of(dtype, device), lambda x, c: aten.mul.Tensor(aten.add.Tensor(x, c), 2))
    x = torch.randn(4, 8, device=device)
    compiled = compile_graph(torch.fx.symbolic_trace(module), [x])
    assert_same(compiled(x), module(x))


def test_constant_read_by_two_kernels(device):
    # A matmul between them keeps the two kernels apart.
    def fn(x, c):
        return aten.add.Tensor(aten.mm.default(aten.mul.Tensor(x, c), x), aten.sin.default(c))

    module = WithConstant(torch.randn(8, device=device), fn)
    x = torch.randn(8, 8, device=device)
    compiled = compile_graph(torch.fx.symbolic_trace(module), [x])
    assert len(compiled.kernel_sources) >= 2
    assert_same(compiled(x), module(x), rtol=1e-5, atol=1e-5)


def test_non_contiguous_constant_keeps_its_strides(device):
    module = WithConstant(torch.randn(8, 4, device=device).t(), lambda x, c: aten.add.Tensor(x, c))
    x = torch.randn(4, 8, device=device)
    assert_same(compile_graph(torch.fx.symbolic_trace(module), [x])(x), module(x))


def test_constants_of_different_shapes_do_not_share_a_cached_graph(device):
    # Same graph code, same inputs: only the constant's size tells the two graphs apart.
    x = torch.randn(4, 8, device=device)
    for constant in (torch.randn(8, device=device), torch.randn(1, device=device)):
        module = WithConstant(constant, lambda x, c: aten.add.Tensor(x, c))
        assert_same(compile_graph(torch.fx.symbolic_trace(module), [x])(x), module(x))


def test_constant_in_a_training_graph_gets_eagers_gradients(device):
    pytest.importorskip("aot_autograd")
    module = WithConstant(torch.randn(8, device=device), lambda x, c: torch.tanh(x * c + c))
    x = torch.randn(4, 8, device=device, requires_grad=True)
    compiled = inductor.compile_fx(torch.fx.symbolic_trace(module), [x], options=backend_options())
    out = compiled(x)[0]
    (grad,) = torch.autograd.grad(out.sum(), x)
    expected = module(x)[0]
    (expected_grad,) = torch.autograd.grad(expected.sum(), x)
    assert_same([out, grad], [expected, expected_grad], rtol=1e-5, atol=1e-5)
