"""Inputs sharing memory, one written in place: compiled, they are read as views of one base
input (synthetic_bases.py), so the write shows through the others as in eager. Differential:
each program runs compiled and eagerly on copies that share memory as the inputs do, twice
(the second call with new values), and results and inputs must agree.

A foreach op writes its list's items one after another in eager: where they share memory, a
later item reads an earlier one's write (functionalization then writes item by item)."""

from __future__ import annotations

import pytest
import torch

from aot_autograd import UnsupportedProgramError, aot_eager
from aot_testing import functions_graph


def write_first_read_second(x, y):
    x.add_(1)
    return (y * 2,)


def write_second_read_both(x, y):
    y.mul_(3)
    return (x + 1, y.sum())


def write_both(x, y):
    x.add_(1)
    y.mul_(2)
    return (x.clone(),)


def write_and_return_a_view(x, y, z):
    x.sub_(z)
    return (y[0], x + y)


def foreach_add_of_both(x, y):
    torch._foreach_add_([x, y], [torch.ones_like(x), torch.full_like(y, 10.0)])
    return (x * 1,)


def foreach_lerp_towards_each_other(x, y):
    # the second item's end is the first item, as written a moment before (eager refuses
    # ends that overlap their own item: these two are apart)
    torch._foreach_lerp_([x, y], [y, x], 0.25)
    return ()


def foreach_mul_of_one_listed_twice(x, y):
    torch._foreach_mul_([x, x], [y.abs() + 1, y.sigmoid()])
    return (x + 0,)


def _listed_twice(buffer):
    return buffer, torch.randn(4, 4)


def _row_and_matrix(buffer):
    return buffer, buffer[1]


def _overlapping(buffer):
    return buffer[:3], buffer[1:4]


def _matrix_and_transpose(buffer):
    return buffer, buffer.t()


def _two_windows_and_another(buffer):
    return buffer[:2], buffer[1:3], torch.randn(2, 4)


CASES = [
    (write_first_read_second, _row_and_matrix),
    (write_first_read_second, _overlapping),
    (write_second_read_both, _matrix_and_transpose),
    (write_both, _overlapping),
    (write_and_return_a_view, _two_windows_and_another),
    (foreach_add_of_both, _overlapping),
    (foreach_add_of_both, _row_and_matrix),
    (foreach_lerp_towards_each_other, _listed_twice),
    (foreach_mul_of_one_listed_twice, _listed_twice),
]


def _copies(tensors):
    """`tensors` again, sharing memory as they do (views of one cloned buffer each)."""
    clones = {}
    copies = []
    for t in tensors:
        base = t._base if t._base is not None else t
        clone = clones.setdefault(id(base), base.clone())
        copies.append(clone.as_strided(t.shape, t.stride(), t.storage_offset()))
    return copies


@pytest.mark.parametrize("fn, make", CASES, ids=lambda v: v.__name__)
def test_inputs_sharing_memory_see_each_others_writes(fn, make):
    compiled = aot_eager(functions_graph(fn), list(make(torch.randn(4, 4))))
    for _ in range(2):
        ours = list(make(torch.randn(4, 4)))
        theirs = _copies(ours)
        expected = fn(*theirs)
        actual = compiled(*ours)
        for a, e in zip([*actual, *ours], [*expected, *theirs]):
            torch.testing.assert_close(a, e)


def test_a_foreach_op_with_a_tensor_of_scalars_over_shared_memory_is_refused():
    def addcdiv_of_one_listed_twice(x, y):
        torch._foreach_addcdiv_([x, x], [y, y], [y.abs() + 1, y.abs() + 2], torch.tensor([0.5, 2.0]))
        return ()

    with pytest.raises(UnsupportedProgramError, match="share memory"):
        aot_eager(functions_graph(addcdiv_of_one_listed_twice), list(_listed_twice(torch.randn(4, 4))))
