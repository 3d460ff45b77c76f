"""Tensor hooks registered in a compiled function, which break the graph and are registered
natively. A break at `t.register_hook(...)` / `t.retain_grad()` of a tensor the graph made: the
hook must see the gradient of every use of `t`, those in the graph before the break included,
with a backend that makes each graph one autograd node (as aot_autograd does). Differential
against eager: first call, new values, new size."""

from __future__ import annotations

import pytest
import torch

import capture


def one_autograd_node(gm, example_inputs):
    """A backend like aot_autograd's, as far as autograd can tell: the whole graph is one node,
    whose outputs are siblings (no output's gradient passes through another output)."""

    class Graph(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args]
            with torch.enable_grad():
                outputs = gm(*inputs)
            ctx.inputs, ctx.outputs = inputs, outputs
            return tuple(o.detach() for o in outputs)

        @staticmethod
        def backward(ctx, *grads):
            pairs = [(o, g) for o, g in zip(ctx.outputs, grads) if isinstance(o, torch.Tensor) and o.requires_grad and g is not None]
            wanted = [i for i in ctx.inputs if isinstance(i, torch.Tensor) and i.requires_grad]
            found = iter(torch.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True))
            return tuple(next(found) if isinstance(i, torch.Tensor) and i.requires_grad else None for i in ctx.inputs)

    def run(*args):
        return list(Graph.apply(*args))

    return run


def hook_after_use(x):
    y = x * 2
    z = y + 1  # uses y before the hook: its gradient reaches y too
    y.register_hook(lambda g: g * 3)
    w = y.sin()
    return z * w


def hook_records(x, seen):
    y = x.exp()
    z = y * y
    y.register_hook(lambda g: seen.append(g.clone()))
    return z + y


def retained(x):
    y = x.cos()
    z = y * 4
    y.retain_grad()
    return z + y.tanh(), y


def double_grad(p):
    p.grad.mul_(2)


def post_accumulate(x):
    x.register_post_accumulate_grad_hook(double_grad)
    return x.sin()


CASES = {
    "hook_after_use": (hook_after_use, lambda n: (torch.randn(n, requires_grad=True),)),
    "post_accumulate_grad_hook": (post_accumulate, lambda n: (torch.randn(n, requires_grad=True),)),
    "hook_records": (hook_records, lambda n: (torch.randn(n, requires_grad=True), [])),
    "retain_grad": (retained, lambda n: (torch.randn(n, requires_grad=True),)),
}


def backward(out, seed):
    outputs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.requires_grad]
    generator = torch.Generator().manual_seed(seed)
    torch.autograd.backward(outputs, [torch.randn(o.shape, generator=generator) for o in outputs])


@pytest.mark.parametrize("name", CASES)
def test_hook_sees_every_use_of_the_tensor(name):
    fn, make_args = CASES[name]
    compiled = capture.optimize(fn, one_autograd_node)
    for call, n in enumerate((4, 4, 7)):
        torch.manual_seed(call)
        expected_args = make_args(n)
        actual_args = tuple(a.detach().clone().requires_grad_() if isinstance(a, torch.Tensor) else [] for a in expected_args)
        expected, actual = fn(*expected_args), compiled(*actual_args)
        torch.testing.assert_close(actual, expected)
        backward(expected, call)
        backward(actual, call)
        torch.testing.assert_close(actual_args[0].grad, expected_args[0].grad)
        if name == "hook_records":
            torch.testing.assert_close(actual_args[1], expected_args[1])
        if name == "retain_grad":
            torch.testing.assert_close(actual[1].grad, expected[1].grad)


def test_graph_is_split_only_where_the_tensor_is_used_after_it():
    """A hooked tensor nothing else in the graph uses keeps the graph whole."""
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def unused_after(x):
        y = x * 2
        y.register_hook(lambda g: g * 3)
        return y.sin()

    x = torch.randn(4, requires_grad=True)
    capture.optimize(unused_after, counting)(x)
    assert len(graphs) == 2  # before the break, and the resume function
    graphs.clear()
    capture.optimize(hook_after_use, counting)(x)
    assert len(graphs) == 3  # the graph before the break in two pieces, then the resume function


FIRED = []


def count_grads(grads):
    FIRED.append(sum(g is not None for g in grads))


def multi_grad_hook(x):
    y = x * 3
    torch.autograd.graph.register_multi_grad_hook((x, y), count_grads)
    return y.sin()


def test_multi_grad_hook_is_registered():
    """register_multi_grad_hook returns a handle, which must not pass for a metadata answer
    (the hook would be registered on the fake tensors only)."""
    compiled = capture.optimize(multi_grad_hook, one_autograd_node)
    for n in (4, 4, 7):
        FIRED.clear()
        multi_grad_hook(torch.randn(n, requires_grad=True)).sum().backward()
        expected = list(FIRED)
        FIRED.clear()
        compiled(torch.randn(n, requires_grad=True)).sum().backward()
        assert FIRED == expected == [2]
