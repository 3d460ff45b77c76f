"""Factories given `out=` (`torch.eye(n, out=w)`, as nn.init.eye_ calls it; `torch.arange(n,
out=buf)`, zeros, ones, full, linspace, logspace) inside compiled functions, against eager:
the written tensor and the result, at a first size, on a cache hit with new values, at new
sizes (dynamic), and where `out` is a view of an input or a tensor the function made."""

from __future__ import annotations

import pytest
import torch

import compiler


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
