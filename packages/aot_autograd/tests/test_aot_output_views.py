"""Outputs that are views of inputs are rebuilt on the real inputs after the compiled graph ran
(runtime/epilogue.py): their gradients flow through the view as in eager, for expanded views
(expand's backward, not as_strided's, whose rounding differs) and for real/complex reinterpretations (view_as_complex,
view_as_real). Compiled against eager: first call, a call with fresh values, a new size."""

from __future__ import annotations

import pytest
import torch

from aot_autograd import aot_eager, aot_module_simplified
from aot_autograd.backends import run_graph_module
from aot_testing import dynamic_functions_graph, functions_graph, graph_calling


def broadcast(a, b):
    return torch.broadcast_tensors(a, b)


def expand_row(a):
    return (a.expand(3, -1, -1, -1), a.expand(-1, 4, -1))


def as_complex(x):
    return (torch.view_as_complex(x),)


def as_real(z):
    return (torch.view_as_real(z),)


def _compile(fn, examples, dynamic: bool):
    gm = dynamic_functions_graph(fn, examples) if dynamic else functions_graph(fn)
    return aot_eager(gm, examples)


def _check(fn, compiled, inputs):
    ours = [x.detach().clone().requires_grad_() for x in inputs]
    actual, expected = compiled(*ours), fn(*inputs)
    assert [o.requires_grad for o in actual] == [o.requires_grad for o in expected]
    cotangents = [torch.randn_like(o) for o in expected]
    torch.testing.assert_close(actual, expected, rtol=0, atol=0)
    # Bitwise: the same backward formulas run on the same values.
    torch.testing.assert_close(
        torch.autograd.grad(actual, ours, cotangents), torch.autograd.grad(expected, inputs, cotangents), rtol=0, atol=0
    )


CASES = {
    # Gradients summed over two broadcast dims: as_strided's backward sums one dim at a time,
    # rounding to bfloat16 in between, expand's sums both at once in float32 (ulps apart).
    "broadcast_bf16": (broadcast, lambda n: [torch.randn(64, 1, dtype=torch.bfloat16), torch.randn(n, 1, 32, dtype=torch.bfloat16)]),
    "expand_float32": (expand_row, lambda n: [torch.randn(n, 1, 5)]),
    "view_as_complex": (as_complex, lambda n: [torch.randn(n, 3, 2)]),
    "view_as_real": (as_real, lambda n: [torch.randn(n, 3, dtype=torch.complex64)]),
}


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("case", CASES)
def test_gradients_through_output_views_match_eager(case, dynamic):
    torch.manual_seed(0)
    fn, make = CASES[case]
    examples = [x.requires_grad_() for x in make(512)]
    compiled = _compile(fn, examples, dynamic)
    _check(fn, compiled, examples)
    _check(fn, compiled, [x.requires_grad_() for x in make(512)])  # fresh values
    if dynamic:
        _check(fn, compiled, [x.requires_grad_() for x in make(300)])  # a new size, same graph


def _detached_first(x):
    t = x * 2 + 1
    return t.detach(), t


def _detached_last(x):
    t = x * 2 + 1
    return t, t.detach()


def _detached_and_view(x):
    t = x * 2 + 1
    return t.detach(), t.view(-1)


def _view_before_tensor(x):
    t = x * 2 + 1
    return t[1:], t, t.detach()[:1]


def _same_tensor_twice(x):
    t = x * 2 + 1
    return t, t


ALIASED_INTERMEDIATES = [_detached_first, _detached_last, _detached_and_view, _view_before_tensor, _same_tensor_twice]


def _identities(outputs) -> list:
    """Which outputs are one object, which share storage, which are views, which have history."""
    return (
        [[a is b for b in outputs] for a in outputs],
        [[a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() for b in outputs] for a in outputs],
        [o._base is not None for o in outputs],
        [o.requires_grad for o in outputs],
    )


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
@pytest.mark.parametrize("fn", ALIASED_INTERMEDIATES, ids=lambda fn: fn.__name__.strip("_"))
def test_outputs_aliasing_a_tensor_the_graph_made_are_the_objects_eager_returns(fn, grad):
    # The graph returns one value for `t` and `t.detach()`: `t` stays the object with history,
    # the detached one another object over its storage, whichever comes first.
    compiled = None
    for size in (5, 5, 7):
        x = torch.randn(size, requires_grad=True)
        with torch.set_grad_enabled(grad):
            compiled = compiled or _compile(fn, [x], dynamic=True)
            actual, expected = compiled(x), fn(x)
        assert _identities(actual) == _identities(expected)
        torch.testing.assert_close(actual, expected)
        if grad:
            differentiable = [(a, e) for a, e in zip(actual, expected) if e.requires_grad]
            cotangents = [torch.randn_like(e) for _, e in differentiable]
            torch.testing.assert_close(
                torch.autograd.grad([a for a, _ in differentiable], x, cotangents),
                torch.autograd.grad([e for _, e in differentiable], x, cotangents),
            )


def _written_then_transposed(x, y):
    x.add_(y)
    return x.transpose(0, 1)[1:], x[:, :2]


def _row_written_then_flattened(x, y):
    x.select(1, 0).copy_(y[:, 1])  # x[:, 0] = y[:, 1]
    return x.view(-1)[3:], x.sum()


@pytest.mark.parametrize("keep_input_mutations", [False, True], ids=["epilogue_copies", "graph_writes"])
@pytest.mark.parametrize("fn", [_written_then_transposed, _row_written_then_flattened], ids=lambda fn: fn.__name__.strip("_"))
def test_views_of_an_input_written_in_place_with_symbolic_shapes_alias_it_as_in_eager(fn, keep_input_mutations):
    # Longformer's attention: the view's place in the input is read off the graph's own value
    # of it, a view of the new value the graph returns for the input.
    compiled = None
    for size in (5, 5, 7):
        x, y = torch.randn(size, 4), torch.randn(size, 4)
        ours = x.clone()
        if compiled is None:
            gm = dynamic_functions_graph(fn, (ours, y))
            compiled = aot_module_simplified(gm, [ours, y], run_graph_module, keep_input_mutations=keep_input_mutations)
        actual, expected = compiled(ours, y), fn(x, y)
        torch.testing.assert_close(actual, expected)
        torch.testing.assert_close(ours, x)
        actual[0].add_(1)  # shows through the input, as in eager
        expected[0].add_(1)
        torch.testing.assert_close(ours, x)


class _ReturnsInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 5


class _ReturnsTail(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x[1:]

    @staticmethod
    def backward(ctx, g):
        return torch.cat([g.new_zeros(1, *g.shape[1:]), g * 3])


class _CallingFunctions(torch.nn.Module):
    def forward(self, x):
        y = _ReturnsInput.apply(x)
        t = x * 2
        return y, y.view(-1)[1:], _ReturnsTail.apply(x), t, _ReturnsInput.apply(t), x[1:]


def test_views_a_custom_function_returns_keep_its_backward():
    """An output viewing an input, another output or an intermediate through a custom Function
    is returned as the graph computes it (functionalization/output_histories.py): rebuilt as a
    view of its base, its gradient skipped the Function's backward (x.grad 1 where eager's 5)."""
    fn = _CallingFunctions()
    compiled = {}
    for size in (5, 5, 7):  # the graph is static: a new size is a new graph
        x = torch.randn(size, requires_grad=True)
        ours = x.detach().clone().requires_grad_()
        if size not in compiled:
            compiled[size] = aot_eager(graph_calling(fn, 1), [ours])
        actual, expected = compiled[size](ours), fn(x)
        torch.testing.assert_close(actual, expected)
        assert [o._base is ours for o in actual] == [o._base is x for o in expected]
        cotangents = [torch.randn_like(o) for o in expected]
        torch.testing.assert_close(torch.autograd.grad(actual, ours, cotangents), torch.autograd.grad(expected, x, cotangents))


def _slice_scaled_in_place(x, w):
    v = x[1:]
    v.mul_(w[1:])
    return (v,)


def test_view_of_an_input_written_with_a_gradient_at_a_new_size_aliases_it_as_in_eager():
    # The training graph computes the view's value on its own, not as a view of the new value
    # it returns for x: its place in x comes from the call's sizes (reading_geometry_of_written_inputs_views).
    # Before, the compile failed at the new size ("does not show where in that tensor it lies").
    compiled = None
    for size in (5, 5, 7):
        x, w = torch.randn(size), torch.randn(size)
        ours, our_w, eager_w = x.clone(), w.clone().requires_grad_(), w.clone().requires_grad_()
        if compiled is None:
            compiled = aot_eager(dynamic_functions_graph(_slice_scaled_in_place, (ours, our_w)), [ours, our_w])
        (actual,), (expected,) = compiled(ours, our_w), _slice_scaled_in_place(x, eager_w)
        torch.testing.assert_close(actual, expected)
        cotangent = torch.randn(size - 1)
        actual.backward(cotangent)
        expected.backward(cotangent)
        torch.testing.assert_close(our_w.grad, eager_w.grad)
        with torch.no_grad():
            actual.add_(1)  # shows through the input, as in eager
            expected.add_(1)
        torch.testing.assert_close(ours, x)
