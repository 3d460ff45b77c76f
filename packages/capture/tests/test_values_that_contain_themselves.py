"""Values made while tracing that lead back to themselves (`l.append(l)`, `o.me = o`, an
attribute holding a method bound to its own object) are rebuilt as one object whose inner
mention is that same object, at a return and at a graph break."""

from __future__ import annotations

import torch

from helpers import compile_eager


class Box:
    def method(self, x):
        return x * 2


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


def test_list_holding_itself_is_returned():
    def fn(x):
        items = [x + 1]
        items.append(items)
        return items

    result = compile_eager(fn)(torch.ones(2))
    assert result[1] is result
    torch.testing.assert_close(result[0], torch.full((2,), 2.0))


def test_dict_holding_itself_is_returned():
    def fn(x):
        d = {"t": x * 3}
        d["self"] = d
        return d

    result = compile_eager(fn)(torch.ones(2))
    assert result["self"] is result and list(result) == ["t", "self"]
    torch.testing.assert_close(result["t"], torch.full((2,), 3.0))


def test_object_holding_itself_is_returned():
    def fn(x):
        o = Box()
        o.me = o
        o.t = x - 1
        return o

    result = compile_eager(fn)(torch.ones(2))
    assert result.me is result and list(vars(result)) == ["me", "t"]


def test_object_holding_its_own_bound_method_across_a_break():
    def fn(x):
        o = Box()
        o.fn = torch.no_grad()(o.method)
        brk()
        return o.fn(x), torch.is_grad_enabled()

    x = torch.ones(2, requires_grad=True)
    y, grad_enabled = compile_eager(fn)(x)
    assert grad_enabled and not y.requires_grad
    torch.testing.assert_close(y, torch.full((2,), 2.0))


def test_object_holding_itself_dead_at_a_break():
    def fn(x):
        o = Box()
        o.me = o
        y = x + 1
        brk()
        return y * 2

    torch.testing.assert_close(compile_eager(fn)(torch.ones(2)), torch.full((2,), 4.0))


def test_repr_and_equality_of_a_list_holding_itself():
    # Building the list as a Python constant recursed without end (CaptureInternalError:
    # RecursionError); Python's repr prints the inner mention as `[...]`.
    def fn(x):
        items = [1, x.shape[0]]
        items.append(items)
        nested = {"k": 1}
        nested["self"] = nested
        return x + 1, repr(items), repr(nested)

    x = torch.ones(3)
    expected = fn(x)
    actual = compile_eager(fn)(x)
    assert actual[1:] == expected[1:]
    torch.testing.assert_close(actual[0], expected[0])
