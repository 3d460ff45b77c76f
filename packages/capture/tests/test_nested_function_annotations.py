"""A function defined in the traced code keeps its annotations (MAKE_FUNCTION's flag 4 operand)
as its own __annotations__ dict: read, changed, and on the function handed back."""

from __future__ import annotations

import pytest
import torch

from helpers import compile_eager, run_and_compare


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


def read_annotations(x):
    def g(t: torch.Tensor, k: int = 2) -> torch.Tensor:
        return t * k

    return g(x), sorted(g.__annotations__), g.__annotations__["k"] is int


def annotations_changed(x):
    def g(t: torch.Tensor):
        return t

    g.__annotations__["extra"] = x.shape[0]
    h = lambda t: t  # noqa: E731
    h.__annotations__["n"] = 1
    return g(x), dict(g.__annotations__), h.__annotations__


def function_returned(x):
    def g(t: "Tensor", n: "int" = 1):  # noqa: F821
        return t * n

    return g(x), g


def across_a_break(x):
    def g(t: torch.Tensor) -> None:
        return t + 1

    brk()
    return g(x), g.__annotations__


@pytest.mark.parametrize("fn", [read_annotations, annotations_changed, across_a_break])
def test_annotations_of_functions_defined_inside(fn):
    # Before: __annotations__ of an annotated function made while tracing was {} (sorted: [],
    # eager ['k', 'return', 't']), and g.__annotations__['k'] raised KeyError.
    compiled = compile_eager(fn)
    for size in (3, 3, 5):
        run_and_compare(compiled, fn, (torch.randn(size),))


def test_annotations_of_a_function_handed_back():
    compiled = compile_eager(function_returned)
    for size in (3, 3, 5):
        x = torch.randn(size)
        _, g = compiled(x)
        # (Strings either way: this module has `from __future__ import annotations`.)
        assert g.__annotations__ == function_returned(x)[1].__annotations__ == {"t": "'Tensor'", "n": "'int'"}
