"""What CPython hands back for an exact tuple copied or sliced whole (the tuple itself), and the
ValueError of a zero slice step, raised where the program's except can catch it."""

from __future__ import annotations

import pytest
import torch

from helpers import compile_eager, run_and_compare


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


def copy_then_compare(x):
    t = (x, x.shape[0])
    return tuple(t) is t, t[:] is t, t[::-1] is t, t[0:1] is t


def copy_across_a_break(x):
    t = (x, 1)
    u = tuple(t)
    v = t[:]
    brk()
    return u is t, v is t, x + 1


def one_tuple_held_twice_across_a_break(x):
    t = (x * 2, 1)
    u = t
    pair = [t, t]
    brk()
    return u is t, pair[0] is pair[1], pair[0] is t


def one_tuple_returned_twice(x):
    t = (x + 1, x.shape[0])
    return t, t, {"again": t}


def list_copies_are_new(x):
    items = [x, 1]
    return list(items) is items, items[:] is items


@pytest.mark.parametrize("fn", [copy_then_compare, copy_across_a_break, one_tuple_held_twice_across_a_break, list_copies_are_new])
def test_identity_of_copies(fn):
    # Before: tuple(t) and t[:] were new tuples, and a tuple made while tracing was rebuilt once
    # per mention at a break: every `is` above said False where Python says True.
    compiled = compile_eager(fn)
    for size in (3, 3, 5):
        run_and_compare(compiled, fn, (torch.randn(size),))


@pytest.mark.parametrize("container", ["[1, 2, 3]", "(1, 2, 3)", "'abc'"])
def test_zero_slice_step_is_the_programs_value_error(container):
    # Before: CaptureInternalError (ValueError raised inside the tracer).
    namespace = {}
    exec(f"def fn(x):\n    try:\n        {container}[::x.shape[0] - x.shape[0]]\n    except ValueError as e:\n        return x * 2, str(e)\n    return x, None", namespace)
    fn = namespace["fn"]
    compiled = compile_eager(fn)
    for size in (3, 3, 5):
        run_and_compare(compiled, fn, (torch.randn(size),))


def test_one_tuple_returned_twice_is_one_object():
    # Before: the entry rebuilt the tuple at each mention (r[0] is r[1] was False).
    r = compile_eager(one_tuple_returned_twice)(torch.randn(3))
    assert r[0] is r[1] and r[2]["again"] is r[0]
