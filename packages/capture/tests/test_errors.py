"""What capture cannot trace is refused, with `fullgraph=True`, with `capture.Unsupported`: the
reason, the user's file:line and source line, the chain of calls that led there, and a hint.

PYTEST_DONT_REWRITE: the functions here are traced.
"""

from __future__ import annotations

import pytest
import torch

import capture
from helpers import compile_eager


def helper_that_prints(t):
    print("hello")  # the unsupported line
    return t


@pytest.mark.parametrize(
    "fn, reason",
    [
        # fullgraph keeps `.item()` in the graph (as torch does), but not a branch on its value.
        (lambda x: x + 1 if x.sum().item() > 0 else x - 1, "data-dependent"),
        (lambda x: x + 1 if x.sum() > 0 else x - 1, "data-dependent"),
        (lambda x: helper_that_prints(x), "print"),
        # tolist() of a few elements is traced, one item() each (as torch does)
        (lambda x: x.repeat(30).tolist(), "tolist"),
        (lambda x: torch.manual_seed(0) and x, "random state"),
        # read in a graph, the state would be the compile-time one on every call
        (lambda x: (torch.get_rng_state(), x)[1], "random state"),
        (lambda x: int(x) + 1, "tensor"),
    ],
    ids=["branch on item", "branch on data", "print", "tolist", "manual_seed", "get_rng_state", "int of tensor"],
)
def test_unsupported_constructs_are_refused(fn, reason):
    with pytest.raises(capture.Unsupported, match=reason):
        compile_eager(fn, fullgraph=True)(torch.randn(3))


def test_error_names_file_line_source_and_stack():
    def outer(x):
        return helper_that_prints(x * 2)

    with pytest.raises(capture.Unsupported) as info:
        compile_eager(outer, fullgraph=True)(torch.randn(3))
    error = info.value
    assert error.filename == __file__
    assert error.source_line == 'print("hello")  # the unsupported line'
    assert [loc.function for loc in error.stack] == ["outer", "helper_that_prints"]
    assert error.hint
    text = str(error)
    assert "helper_that_prints" in text and f"line {error.lineno}" in text and "hint:" in text


def test_fullgraph_raises_the_same_error():
    with pytest.raises(capture.Unsupported, match="print"):
        capture.optimize(helper_that_prints, capture.backends.eager, fullgraph=True)(torch.randn(2))


def test_exception_raised_by_the_program_reaches_the_caller():
    def fn(x):
        return {"a": x}["b"]

    with pytest.raises(KeyError, match="b"):
        compile_eager(fn)(torch.randn(2))


def test_shape_errors_are_the_programs_own():
    with pytest.raises(RuntimeError, match="size"):
        compile_eager(lambda x, y: x + y)(torch.randn(2), torch.randn(3))


def test_optimize_refuses_non_callables():
    with pytest.raises(capture.CaptureError, match="expects a callable"):
        capture.optimize(42, capture.backends.eager)


def test_error_describes_the_frame_at_the_refused_instruction():
    def fn(x):
        doubled = x * 2
        label = "value"
        print(label, doubled)
        return doubled

    with pytest.raises(capture.Unsupported) as info:
        compile_eager(fn, fullgraph=True)(torch.randn(3))
    snapshot = info.value.snapshot
    assert snapshot.opname == "CALL"
    assert set(snapshot.locals) == {"x", "doubled", "label"}
    assert [v.describe() for v in snapshot.stack[-2:]] == ["constant 'value'", "a Tensor (float32[3])"]


def test_a_backends_error_says_which_graph_and_inputs_it_compiled():
    # Backends name graph inputs by position ("writes into input 1"); the note maps them back.
    def refusing_backend(gm, example_inputs):
        raise RuntimeError("cannot compile a write into input 1")

    def scale_in_place(weight, x):
        x.mul_(weight)
        return x

    with pytest.raises(RuntimeError, match="input 1") as error:
        capture.optimize(scale_in_place, refusing_backend)(torch.randn(3), torch.randn(3))
    (note,) = error.value.__notes__
    assert "graph captured from" in note and "scale_in_place" in note and __file__ in note
    assert "0 = L['x'], 1 = L['weight']" in note  # graph inputs in the order the graph reads them
