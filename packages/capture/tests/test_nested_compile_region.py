"""Functions marked as nested compile regions (torch.compiler.nested_compile_region, or ours)
compile inline and match eager: values and gradients, at a cache hit and a new size. torch's
mark wraps the function in a placeholder that raises while compiling; it crashed the graph
before capture read the mark."""

from __future__ import annotations

import pytest
import torch

import capture

MARKS = {"torch": torch.compiler.nested_compile_region, "ours": capture.nested_compile_region}


def _block(x, w):
    return torch.relu(x @ w) + x


def _breaking_block(x, w):
    y = x @ w
    print(end="")  # a graph break inside the region
    return y.tanh() + x


@pytest.mark.parametrize("mark", MARKS)
@pytest.mark.parametrize("body", [_block, _breaking_block], ids=["one graph", "graph break"])
def test_marked_region_matches_eager(mark, body):
    block = MARKS[mark](body)
    nested = MARKS[mark](max_reuse_entries=4)(block)  # a region inside a region, marked with arguments

    def model(x, w1, w2):
        return nested(block(x, w1), w2).sum()

    compiled = capture.optimize(model, capture.backends.eager, fullgraph=body is _block)
    for n in (4, 4, 6):
        x, w1, w2 = (torch.randn(n, n, requires_grad=True) for _ in range(3))
        twins = [t.detach().clone().requires_grad_() for t in (x, w1, w2)]
        got, expected = compiled(x, w1, w2), model(*twins)
        torch.testing.assert_close(got, expected)
        got.backward()
        expected.backward()
        for t, twin in zip((x, w1, w2), twins):
            torch.testing.assert_close(t.grad, twin.grad)


def test_our_mark_is_a_no_op_eagerly():
    marked = capture.nested_compile_region(_block)
    x, w = torch.randn(3, 3), torch.randn(3, 3)
    torch.testing.assert_close(marked(x, w), _block(x, w))
    assert marked.__name__ == "_block"


def test_a_torch_closure_the_graph_cannot_name_is_traced_into():
    """The mechanism behind the crash: a Python function of torch that FX's printed name
    (`module.name`) does not lead back to is interpreted, not recorded as one call."""
    from capture.calls.torch_ops import is_torch_operation

    wrapper = torch.compiler.nested_compile_region(_block)
    assert not is_torch_operation(wrapper)
    assert is_torch_operation(torch.nn.functional.gelu) and is_torch_operation(torch.nn.functional.max_pool2d)
