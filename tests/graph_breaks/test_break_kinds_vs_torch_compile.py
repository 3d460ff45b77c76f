"""Each kind of graph break (break_kinds.py) through compiler.compile: same results, printed
output and exceptions as eager, and a graph count that relates to torch.compile's on the same
function as the table says (torch.compile is the reference here, with a counting backend).
The side-by-side counts are recorded in the test report (`pytest tests/graph_breaks -rP`).
"""

from __future__ import annotations

import contextlib
import io

import pytest
import torch

import compiler
from break_kinds import KINDS

pytestmark = pytest.mark.slow


def run(fn, args):
    """(result or raised exception, printed output)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            result = fn(*args)
        except Exception as exc:  # compared: the same exception must reach the caller
            result = exc
    return result, out.getvalue()


def assert_same(actual, expected):
    if isinstance(expected, Exception):
        assert type(actual) is type(expected) and str(actual) == str(expected), f"{actual!r} != {expected!r}"
    elif isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(actual, expected)
    else:
        assert actual == expected


def counting_backend(graphs):
    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    return backend


def torch_compile_counts(fn, args) -> tuple[int, int]:
    """Graphs and graph breaks of torch.compile's first call of `fn`."""
    import torch._dynamo
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    graphs: list = []
    run(torch.compile(fn, backend=counting_backend(graphs)), args)
    return len(graphs), sum(counters["graph_break"].values())


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_break_kind_matches_eager_and_torch_compile(kind):
    graphs: list = []
    compiled = compiler.compile(kind.fn, backend=counting_backend(graphs))
    for call in range(2):
        args = kind.make_args()
        expected = run(kind.fn, tuple(t.clone() for t in args))
        actual = run(compiled, args)
        assert_same(actual[0], expected[0])
        assert actual[1] == expected[1], "printed output differs"
        if call == 0:
            ours = len(graphs)
    explained = run(compiler.explain(kind.fn), kind.make_args())[0]
    breaks = "-" if isinstance(explained, Exception) else explained.graph_break_count
    reference_graphs, reference_breaks = torch_compile_counts(kind.fn, kind.make_args())
    print(f"{kind.name:40} ours: {ours} graphs, {breaks} breaks | torch.compile: {reference_graphs} graphs, {reference_breaks} breaks")
    compare = {"same": int.__eq__, "more": int.__gt__, "fewer": int.__lt__}[kind.relation]
    assert compare(ours, reference_graphs), f"{ours} graphs against torch.compile's {reference_graphs}: expected {kind.relation}"
