"""Factories given `out=` (`torch.eye(n, out=w)`, as nn.init.eye_ calls it; `torch.arange(n,
out=buf)`, zeros, ones, full, linspace, logspace) inside compiled functions, against eager:
the written tensor and the result, at a first size, on a cache hit with new values, at new
sizes (dynamic), and where `out` is a view of an input or a tensor the function made. And
any op given an input as `out=` of another shape than its result, which resizes the input."""

from __future__ import annotations

import pytest
import torch

import compiler
from capture import Unsupported


def arange_into_input(x):
    torch.arange(x.shape[0], out=x)
    return x * 2


def zeros_into_input(x):
    torch.zeros(x.shape, out=x)
    return x + 1


def full_into_input(x):
    torch.full((x.shape[0],), 3.5, out=x)
    return x.sum()


def ranges_into_input(x):
    torch.linspace(0, 1, x.shape[0], out=x)
    y = x * 3
    torch.logspace(0, 2, x.shape[0], out=x)
    return y + x


def arange_into_view_of_input(x):
    torch.arange(1, 2 * x.shape[0] - 1, 2, out=x[1:])
    return x


def arange_into_new_int_tensor(x):
    steps = torch.empty(x.shape[0], dtype=torch.int64)
    torch.arange(x.shape[0], out=steps)
    return x * steps


def init_eye(x):
    w = x.reshape(x.shape[0], 1).expand(-1, 3).clone()
    torch.nn.init.eye_(w)
    return w * x[:, None]


PROGRAMS = [arange_into_input, zeros_into_input, full_into_input, ranges_into_input, arange_into_view_of_input,
            arange_into_new_int_tensor, init_eye]


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda fn: fn.__name__)
def test_factory_writing_through_out_matches_eager(fn, backend):
    compiled = compiler.compile(fn, backend=backend)
    for size in (4, 4, 6, 3):
        x = torch.randn(size)
        expected_x, actual_x = x.clone(), x.clone()
        expected = fn(expected_x)
        actual = compiled(actual_x)
        torch.testing.assert_close(actual, expected)
        torch.testing.assert_close(actual_x, expected_x)


def add_resizing_its_out(x, y):
    torch.add(y, y, out=x)
    return x * 2


def sum_resizing_its_out(x, y):
    torch.sum(y.reshape(3, -1), 0, out=x)
    return x + 1


def arange_resizing_its_out(x, y):
    torch.arange(y.shape[0], out=x)
    return x - 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("fn", [add_resizing_its_out, sum_resizing_its_out, arange_resizing_its_out],
                         ids=lambda fn: fn.__name__)
def test_out_of_another_shape_resizes_the_callers_tensor(fn, backend):
    # Eager resizes an input given as out= to the result's shape (with a warning); a graph
    # cannot change its input's size, so the call runs outside it (a graph break). Before,
    # aot_eager failed copying back and inductor left the caller's tensor at its old size.
    compiled = compiler.compile(fn, backend=backend)
    for size in (4, 4, 7):
        y = torch.randn(6)
        expected_x, actual_x = torch.randn(size), torch.randn(size)
        with pytest.warns(UserWarning, match="resized"):
            expected = fn(expected_x, y)
        actual = compiled(actual_x, y)
        torch.testing.assert_close(actual, expected)
        torch.testing.assert_close(actual_x, expected_x)


def test_out_of_another_shape_under_fullgraph_names_the_call():
    compiled = compiler.compile(add_resizing_its_out, backend="aot_eager", fullgraph=True)
    with pytest.raises(Unsupported, match=r"resizes its out= tensor, a graph input of shape \(4,\), to \(6,\)"):
        compiled(torch.randn(4), torch.randn(6))
