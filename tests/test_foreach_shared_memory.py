"""Foreach ops writing lists whose items share memory, compiled by inductor (C++ kernels, and
Triton's in its interpreter) against eager on copies sharing memory the same way.

Eager writes a list's items one after another, so a later item reads an earlier one's write:
a tensor listed twice is updated twice, overlapping views see each other's update, and an
item whose argument is an earlier item reads it as written. (torch.compile computes every
item from the values before the op: a tensor listed twice keeps only its last update.)
"""

from __future__ import annotations

import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is first imported

import compiler  # noqa: E402


def add_of_both(xs, gs):
    torch._foreach_add_(xs, gs, alpha=-0.5)


def lerp_towards_each_other(xs, gs):
    torch._foreach_lerp_(xs, list(reversed(xs)), 0.25)


def addcdiv_with_a_tensor_of_scalars(xs, gs):
    torch._foreach_addcdiv_(xs, gs, [g.abs() + 1 for g in gs], torch.tensor([0.5, 2.0]))


def _listed_twice(base):
    return [base[:64], base[:64]]


def _overlapping(base):
    return [base[:64], base[16:80]]


def _apart(base):
    return [base[:64], base[64:128]]


@pytest.mark.parametrize("cpu_backend", ["cpp", "triton"])
@pytest.mark.parametrize("layout", [_listed_twice, _overlapping, _apart], ids=lambda f: f.__name__[1:])
@pytest.mark.parametrize("program", [add_of_both, lerp_towards_each_other, addcdiv_with_a_tensor_of_scalars],
                         ids=lambda f: f.__name__)
def test_items_sharing_memory_see_each_others_writes(program, layout, cpu_backend):
    if program is lerp_towards_each_other and layout is not _apart:
        pytest.skip("eager refuses a lerp_ whose end overlaps the tensor it writes")
    compiled = compiler.compile(program, backend="inductor", options={"cpu_backend": cpu_backend})
    for _ in range(2):  # the second call: a cache hit with new values
        base, gs = torch.randn(128), [torch.randn(64), torch.randn(64)]
        expected_base = base.clone()
        program(layout(expected_base), gs)
        compiled(layout(base), gs)
        torch.testing.assert_close(base, expected_base)
