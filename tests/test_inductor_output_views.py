"""Outputs that are views of other outputs, through inductor: values and strides as eager's,
at the first call, a cache hit with new values and new sizes (symbolic there), with and
without gradients. A value written through a transposed view of it, and a view of a value
computed before the graph writes an input, were returned with another layout (the first, with
wrong values in the view: aot_autograd rebuilt it at eager's strides over the other layout) or
refused at new sizes.

Strides are checked at static sizes. At new sizes (symbolic strides) only the values are:
inductor lays out a value eager had transposed row-major there (`memory_order` follows eager's
strides only where they are ints), so `z` above comes back transposed in memory."""

from __future__ import annotations

import pytest
import torch

import compiler


def written_through_its_transpose(a, b):
    z = a * 1
    w = z.t()
    w.add_(b)
    return z, w


def permuted_and_scaled(a, b):
    z = (a * 2).view(a.shape[0], 2, -1)
    w = z.permute(1, 0, 2)
    w.mul_(2.0)
    return z.sum(0), z, w


def computed_before_an_input_is_written(a, b):
    d = a * 1.0
    a.add_(b)
    return d, d.t()


def sliced_before_an_input_is_written(a, b):
    d = a * 1.0
    a.mul_(0.5)
    return d, d[1:]


PROGRAMS = [written_through_its_transpose, permuted_and_scaled, computed_before_an_input_is_written,
            sliced_before_an_input_is_written]  # fmt: skip


@pytest.mark.parametrize("requires_grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
def test_outputs_viewing_outputs_match_eager(program, requires_grad):
    writes_input = program in (computed_before_an_input_is_written, sliced_before_an_input_is_written)
    if writes_input and requires_grad:
        pytest.skip("an in-place write into a leaf that requires grad is an error in eager")
    compiled = compiler.compile(program, backend="inductor")
    for n in (4, 4, 6, 8):
        a, b = torch.randn(n, n), torch.randn(n, n)
        ours = [t.clone().requires_grad_(requires_grad) for t in (a, b)]
        theirs = [t.clone().requires_grad_(requires_grad) for t in (a, b)]
        if requires_grad:  # written in place: not as leaves
            ours, theirs = [t * 1 for t in ours], [t * 1 for t in theirs]
        actual, expected = compiled(*ours), program(*theirs)
        for got, want in zip(actual, expected):
            torch.testing.assert_close(got, want, check_stride=n == 4)
        torch.testing.assert_close(ours, theirs)
