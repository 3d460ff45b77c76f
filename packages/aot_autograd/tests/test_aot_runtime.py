"""The runtime around compiled graphs: the inference path under no_grad, the backward
compiled on first use, outputs that carry no gradient, and double backward refused."""

from __future__ import annotations

import pytest
import torch

from aot_autograd import DoubleBackwardError, aot_module_simplified
from aot_testing import functions_graph, recording_compiler


def affine_and_argmax(x, w, b):
    y = torch.tanh(x @ w + b)
    return (y, y.argmax(-1), y.detach() * 2)


def _inputs():
    return [torch.randn(6, 4), torch.randn(4, 3, requires_grad=True), torch.randn(3, requires_grad=True)]


class Compilers:
    """Separate recording compilers for forward, backward and inference graphs."""

    def __init__(self):
        self.forward, self.backward, self.inference = [], [], []

    def compile(self, fn, example_inputs, **options):
        return aot_module_simplified(
            functions_graph(fn),
            example_inputs,
            recording_compiler(self.forward),
            recording_compiler(self.backward),
            inference_compiler=recording_compiler(self.inference),
            **options,
        )


def test_no_grad_call_takes_the_inference_path():
    compilers = Compilers()
    inputs = _inputs()
    with torch.no_grad():
        compiled = compilers.compile(affine_and_argmax, inputs)
        actual = compiled(*inputs)
        expected = affine_and_argmax(*inputs)
    assert (len(compilers.inference), len(compilers.forward), len(compilers.backward)) == (1, 0, 0)
    torch.testing.assert_close(actual, expected)
    assert not any(o.requires_grad for o in actual)


def test_grad_and_no_grad_calls_each_get_their_own_graphs():
    compilers = Compilers()
    inputs = _inputs()
    compiled = compilers.compile(affine_and_argmax, inputs)
    with torch.no_grad():
        torch.testing.assert_close(compiled(*inputs), affine_and_argmax(*inputs))
    torch.testing.assert_close(compiled(*inputs), affine_and_argmax(*inputs))
    assert (len(compilers.inference), len(compilers.forward)) == (1, 1)


def test_backward_is_compiled_on_first_use_only():
    compilers = Compilers()
    inputs = _inputs()
    compiled = compilers.compile(affine_and_argmax, inputs)
    outputs = compiled(*inputs)
    assert compilers.backward == []
    outputs[0].sum().backward()
    compiled(*inputs)[0].sum().backward()
    assert len(compilers.backward) == 1


def test_outputs_carry_gradients_as_in_eager():
    inputs = _inputs()
    compiled = Compilers().compile(affine_and_argmax, inputs)
    actual, expected = compiled(*inputs), affine_and_argmax(*inputs)
    assert [o.requires_grad for o in actual] == [o.requires_grad for o in expected]
    assert actual[1].dtype == expected[1].dtype


def test_gradients_of_every_input_match_eager():
    inputs = _inputs()
    compiled = Compilers().compile(affine_and_argmax, inputs)
    grads = [torch.autograd.grad(run(*inputs)[0].pow(2).sum(), inputs[1:]) for run in (affine_and_argmax, compiled)]
    torch.testing.assert_close(grads[1], grads[0])


def test_double_backward_raises_a_clear_error():
    inputs = _inputs()
    compiled = Compilers().compile(affine_and_argmax, inputs)
    (grad_w,) = torch.autograd.grad(compiled(*inputs)[0].sum(), inputs[1], create_graph=True)
    with pytest.raises(DoubleBackwardError, match="double backward"):
        grad_w.sum().backward()


def test_first_order_gradients_under_create_graph_match_eager():
    inputs = _inputs()
    compiled = Compilers().compile(affine_and_argmax, inputs)
    grads = [torch.autograd.grad(run(*inputs)[0].sum(), inputs[1], create_graph=True) for run in (affine_and_argmax, compiled)]
    torch.testing.assert_close(grads[1], grads[0])


def test_backward_graph_gets_non_contiguous_gradients_right():
    inputs = _inputs()
    compiled = Compilers().compile(affine_and_argmax, inputs)
    upstream = torch.randn(3, 6).t()  # a transposed (non-contiguous) gradient
    grads = [torch.autograd.grad(run(*inputs)[0], inputs[1:], upstream) for run in (affine_and_argmax, compiled)]
    torch.testing.assert_close(grads[1], grads[0])


def detached_outputs(x, w, b):
    return ((x @ w).detach() + b.detach(), (x @ w).argmax(-1))


def test_graph_without_differentiable_outputs_returns_what_eager_returns():
    inputs = _inputs()
    compilers = Compilers()
    compiled = compilers.compile(detached_outputs, inputs)
    actual, expected = compiled(*inputs), detached_outputs(*inputs)
    torch.testing.assert_close(actual, expected)
    assert [o.requires_grad for o in actual] == [o.requires_grad for o in expected]
    assert (len(compilers.inference), len(compilers.forward)) == (1, 0)


def scale_in_place(x, y):
    x.mul_(y)
    return (x + y,)


@pytest.mark.parametrize("keep", [False, True])
def test_inference_graph_writes_mutated_inputs_itself_when_asked(keep):
    compilers = Compilers()
    x, y = torch.randn(5, 3), torch.randn(5, 3)
    compiled = compilers.compile(scale_in_place, [x.clone(), y], keep_input_mutations=keep)
    ours, expected = x.clone(), x.clone()
    before = ours._version
    with torch.no_grad():
        out = compiled(ours, y)
        (ref,) = scale_in_place(expected, y)
    torch.testing.assert_close(out[0], ref)
    torch.testing.assert_close(ours, expected)
    assert ours._version > before
    (graph,) = compilers.inference
    writes = [n for n in graph.graph.nodes if n.target is torch.ops.aten.copy_.default]
    # Kept: the graph ends in copy_ into the input and returns only the user's output.
    assert len(writes) == (1 if keep else 0)
    assert len(graph.graph.find_nodes(op="output")[0].args[0]) == (1 if keep else 2)


def track_and_copy(w, stat, mirror):
    """A running statistic (no gradient through it) and a buffer that takes a value with one."""
    y = w * 2
    stat.mul_(0.9).add_(y.detach().mean(0), alpha=0.1)  # (functions_graph traces no no_grad block)
    mirror.copy_(y)
    return (y.sin(),)


@pytest.mark.parametrize("keep", [False, True])
def test_training_forward_writes_inputs_no_gradient_flows_through_when_asked(keep):
    compilers = Compilers()
    w = torch.randn(5, 3, requires_grad=True)
    compiled = compilers.compile(track_and_copy, [w, torch.zeros(3), torch.zeros(5, 3)], keep_input_mutations=keep)
    for rows in (5, 5, 7):  # first call, a call with new values, a new size (a second plan)
        w = torch.randn(rows, 3, requires_grad=True)
        ours = [torch.randn(3), torch.randn(rows, 3)]
        expected = [t.clone() for t in ours]
        before = [t._version for t in ours]
        (out,) = compiled(w, *ours)
        (ref,) = track_and_copy(w, *expected)
        torch.testing.assert_close(out, ref)
        for actual, wanted in zip(ours, expected):
            torch.testing.assert_close(actual, wanted)
        assert all(t._version > v for t, v in zip(ours, before))
        # The mirror carries w's gradient as in eager; the statistic carries none.
        assert ours[1].requires_grad and not ours[0].requires_grad
        grads = torch.autograd.grad((out.sum() + ours[1].sum()), w)
        torch.testing.assert_close(grads, torch.autograd.grad((ref.sum() + expected[1].sum()), w))
    # Kept: the statistic is written by copy_ at the end of the forward graph; the mirror,
    # which autograd must see written, is still returned for the epilogue's copy.
    for forward in compilers.forward:
        writes = [n for n in forward.graph.nodes if n.target is torch.ops.aten.copy_.default]
        assert len(writes) == (1 if keep else 0)


def _graph_turning_grad_on_part_way() -> torch.fx.GraphModule:
    """`a = x * w; with torch.enable_grad(): b = a * w; return a, b` as capture records it:
    `_set_grad_enabled` nodes (symbolic tracing would run them rather than record them)."""
    graph = torch.fx.Graph()
    x, w = graph.placeholder("x"), graph.placeholder("w")
    a = graph.call_function(torch.mul, (x, w))
    graph.call_function(torch._C._set_grad_enabled, (True,))
    b = graph.call_function(torch.mul, (a, w))
    graph.call_function(torch._C._set_grad_enabled, (False,))
    graph.output((a, b))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def test_graph_turning_grad_on_when_called_without_it_gives_eager_gradients():
    def eager(x, w):
        a = x * w
        with torch.enable_grad():
            b = a * w
        return a, b

    compiled = None
    for size in (5, 5, 7):  # the first call, a new call with new values, a new size
        x, w = torch.randn(size), torch.randn(size, requires_grad=True)
        with torch.no_grad():
            if compiled is None:
                compiled = aot_module_simplified(_graph_turning_grad_on_part_way(), [x, w], recording_compiler([]))
            actual = compiled(x, w)
            expected = eager(x, w)
        assert [o.requires_grad for o in actual] == [o.requires_grad for o in expected] == [False, True]
        torch.testing.assert_close(actual, expected)
        torch.testing.assert_close(torch.autograd.grad(actual[1].sum(), w), torch.autograd.grad(expected[1].sum(), w))
