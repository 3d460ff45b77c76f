"""Graphs with in-place ops, mutations through views, input mutations and aliased outputs
behave as in eager, while the graphs handed to compilers are functional."""

from __future__ import annotations

import pytest
import torch

from aot_autograd import aot_module_simplified
from aot_autograd.functionalization.op_semantics import ALIAS_ONLY
from aot_testing import functions_graph, recording_compiler


def inplace_on_intermediates(x, w):
    y = x * 2
    y.add_(w)
    y.relu_()
    return (y.sin(),)


def write_through_views_of_intermediate(x, w):
    y = x.clone()
    y[:, 0].mul_(3)
    y[1].copy_(w)
    y.t()[2].add_(1)
    z = y.view(-1)
    z[:3].fill_(0.5)
    return (y * 2, z.sum())


def write_into_input(x, w):
    x.add_(w)
    return (x * 2,)


def write_into_view_of_input(x, w):
    x[0].mul_(w[0])
    x[:, 1:].add_(1)
    return (x.sum(1),)


def copy_into_input(x, w):
    x.copy_(w.expand_as(x) * 3)
    return (w + 1,)


def return_views_of_input(x, w):
    return (x.view(-1), x.t(), x[1:, :2], x * w)


def return_outputs_sharing_storage(x, w):
    y = x * w
    return (y, y.view(-1), y[0])


def return_written_input(x, w):
    x.mul_(w)
    return (x, x.view(-1))


def return_detached_inputs(x, w):
    return (x.detach(), w.detach(), w.detach().view(1, -1), x * w)


def factories_writing_through_out(x, w):
    # `.out` forms of factories: their functional forms take the dtype and device of `out`.
    torch.eye(4, 5, out=x)
    torch.arange(5, out=x[2])
    steps = torch.empty(3, dtype=torch.int64)
    torch.arange(3, out=steps)
    return (x * 2 + w, steps * 1)


PROGRAMS = {
    fn.__name__: fn
    for fn in (
        factories_writing_through_out,
        inplace_on_intermediates,
        write_through_views_of_intermediate,
        write_into_input,
        write_into_view_of_input,
        copy_into_input,
        return_views_of_input,
        return_outputs_sharing_storage,
        return_written_input,
        return_detached_inputs,
    )
}


def _inputs(requires_grad: bool = False):
    return [torch.randn(4, 5), torch.randn(5, requires_grad=requires_grad)]


def _clone(values):
    return [v.detach().clone().requires_grad_(v.requires_grad) for v in values]


@pytest.mark.parametrize("program", PROGRAMS)
def test_outputs_and_inputs_after_the_call_match_eager(program):
    fn = PROGRAMS[program]
    inputs = _inputs()
    compiled = aot_module_simplified(functions_graph(fn), _clone(inputs), recording_compiler([]))
    eager_inputs, compiled_inputs = _clone(inputs), _clone(inputs)
    expected = fn(*eager_inputs)
    actual = compiled(*compiled_inputs)
    torch.testing.assert_close(actual, expected)
    torch.testing.assert_close(compiled_inputs, eager_inputs)


@pytest.mark.parametrize("program", PROGRAMS)
def test_gradients_match_eager(program):
    fn = PROGRAMS[program]
    inputs = _inputs(requires_grad=True)
    compiled = aot_module_simplified(functions_graph(fn), _clone(inputs), recording_compiler([]))
    results = []
    for run in (fn, compiled):
        x, w = _clone(inputs)
        outputs = run(x, w)
        loss = sum((o * torch.arange(o.numel()).view(o.shape)).sum() for o in outputs if o.requires_grad)
        results.append((outputs, torch.autograd.grad(loss, w)))
    torch.testing.assert_close(results[1], results[0])


@pytest.mark.parametrize("requires_grad", [False, True], ids=["inference", "training"])
@pytest.mark.parametrize("program", PROGRAMS)
def test_compiled_graphs_are_functional(program, requires_grad):
    graphs = []
    aot_module_simplified(functions_graph(PROGRAMS[program]), _inputs(requires_grad), recording_compiler(graphs))
    for gm in graphs:
        for node in gm.graph.nodes:
            if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
                continue
            assert not node.target._schema.is_mutable, node.format_node()
            assert node.target not in ALIAS_ONLY, node.format_node()


@pytest.mark.parametrize("requires_grad", [False, True], ids=["inference", "training"])
def test_every_node_carries_a_fake_value(requires_grad):
    graphs = []
    aot_module_simplified(functions_graph(write_through_views_of_intermediate), _inputs(requires_grad), recording_compiler(graphs))
    for gm in graphs:
        for node in gm.graph.nodes:
            if node.op != "output":
                assert "val" in node.meta, node.format_node()


def test_views_of_inputs_share_the_input_storage():
    x, w = _inputs()
    compiled = aot_module_simplified(functions_graph(return_views_of_input), [x, w], recording_compiler([]))
    flat, transposed, corner, _ = compiled(x, w)
    for view in (flat, transposed, corner):
        assert view.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert (transposed.stride(), corner.storage_offset()) == (x.t().stride(), x[1:, :2].storage_offset())
    x.add_(1)
    torch.testing.assert_close(corner, x[1:, :2])


def test_outputs_aliasing_each_other_share_storage():
    x, w = _inputs()
    compiled = aot_module_simplified(functions_graph(return_outputs_sharing_storage), [x, w], recording_compiler([]))
    y, flat, row = compiled(x, w)
    y.mul_(2)
    torch.testing.assert_close(flat, y.view(-1))
    torch.testing.assert_close(row, y[0])


def test_written_input_returned_is_the_input_itself():
    x, w = _inputs()
    compiled = aot_module_simplified(functions_graph(return_written_input), [x, w], recording_compiler([]))
    same, _ = compiled(x, w)
    assert same is x


def test_write_into_non_leaf_input_requiring_grad_flows_gradient():
    a, w = torch.randn(4, 5, requires_grad=True), torch.randn(5, requires_grad=True)
    compiled = aot_module_simplified(functions_graph(write_into_input), [a.detach().clone(), w], recording_compiler([]))
    grads = []
    for run in (write_into_input, compiled):
        x = a * 1
        (out,) = run(x, w)
        grads.append(torch.autograd.grad((out.sum() + x.square().sum()), [a, w]))
    torch.testing.assert_close(grads[1], grads[0])


@pytest.mark.parametrize("requires_grad", [False, True], ids=["inference", "training"])
def test_detached_inputs_returned_are_new_objects_without_history(requires_grad):
    # x.detach() is another tensor object over x's storage: handing back x itself let a later
    # `requires_grad_()` on the result turn the caller's input into a leaf that requires grad.
    x, w = _inputs(requires_grad)
    compiled = aot_module_simplified(functions_graph(return_detached_inputs), _clone([x, w]), recording_compiler([]))
    outputs = compiled(x, w)
    expected = return_detached_inputs(x, w)
    for actual, eager in zip(outputs[:3], expected[:3]):
        assert actual is not x and actual is not w
        assert actual.untyped_storage().data_ptr() == eager.untyped_storage().data_ptr()
        assert (actual.requires_grad, actual.grad_fn, actual.shape) == (eager.requires_grad, eager.grad_fn, eager.shape)
    outputs[0].requires_grad_()
    assert not x.requires_grad
    torch.testing.assert_close(outputs, expected)
