"""Sizes rounded by math.floor, math.ceil, math.trunc and round (`math.ceil(n / 4)`, chunk counts,
pooled lengths) stay symbolic: one graph serves every size, as under torch.compile. Capture
specialized them, so each new size was a recompile (and the function ran eagerly after
recompile_limit sizes).

Against eager on each backend, values and gradients, at the first call, a cache hit and
sizes where each rounding goes the other way; at most two captures (the static first one,
then the symbolic one) for all of them, a third where the program branches on a rounded size.
"""

from __future__ import annotations

import math

import pytest
import torch

import compiler

BACKENDS = ["eager", "aot_eager", "inductor"]
# From 14 on: no rounded size is 0 or 1, which a graph may specialize as it does input sizes.
SIZES = [16, 16, 19, 23, 30, 41, 47, 50, 57]


def chunked_means(x):
    # ceil(n / 4) chunks of 4, the last one padded: a reshape by the rounded size.
    chunks = math.ceil(x.shape[-1] / 4)
    padded = torch.nn.functional.pad(x, (0, chunks * 4 - x.shape[-1]))
    return padded.reshape(x.shape[0], chunks, 4).mean(-1)


def floor_slice(x):
    keep = math.floor(x.shape[-1] * 0.3)
    return x[..., :keep].tanh() * keep


def trunc_and_ceil_mixed(x):
    n = x.shape[-1]
    head = math.trunc(n / 7)
    tail = math.ceil((n - head) / 2)
    return torch.cat([x[..., :head] * 2, x[..., -tail:].sin()], dim=-1), head + tail


def branch_on_rounded(x):
    # A guard on a rounded size: the entry must branch as the program does at every size.
    if math.ceil(x.shape[-1] / 8) % 2 == 0:
        return x.cos()
    return x.sin() + math.floor(x.shape[-1] / 3)


def rounded_half_to_even(x):
    # round() of a size's float, as Python rounds (half to even): 2.5 -> 2, 3.5 -> 4.
    keep = round(x.shape[-1] / 4 + 0.5)
    return x[..., :keep] * 2, round(x.shape[-1] / 3), round(x.shape[-1] * 0.37, 1)


def factory_of_rounded(x):
    n = x.shape[-1]
    return x.sum(-1, keepdim=True) + torch.arange(math.ceil(n / 3), dtype=x.dtype)


PROGRAMS = [chunked_means, floor_slice, trunc_and_ceil_mixed, branch_on_rounded, rounded_half_to_even, factory_of_rounded]
# The static capture, then one symbolic entry per way the program branches on a rounded size.
# round(v, 1) is a float the graph returns: specialized (guarded), each size its own entry.
CAPTURES = {branch_on_rounded: 3, rounded_half_to_even: len(set(SIZES))}


def _assert_same(got, expected):
    if isinstance(expected, tuple):
        assert type(got) is tuple and len(got) == len(expected)
        for g, e in zip(got, expected):
            _assert_same(g, e)
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected)
    else:
        assert type(got) is type(expected) and got == expected


def _first_tensor(result):
    return result[0] if isinstance(result, tuple) else result


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("backend", BACKENDS)
def test_rounded_sizes_serve_every_size_with_one_graph(program, backend):
    compiler.reset()
    compiled = compiler.compile(program, backend=backend)
    for n in SIZES:
        x = torch.randn(3, n, requires_grad=True)
        twin = x.detach().clone().requires_grad_()
        got, expected = compiled(x), program(twin)
        _assert_same(got, expected)
        _first_tensor(got).sum().backward()
        _first_tensor(expected).sum().backward()
        torch.testing.assert_close(x.grad, twin.grad)
    assert len(compiled._capture_cache.entries) <= CAPTURES.get(program, 2)
