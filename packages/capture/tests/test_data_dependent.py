"""Data-dependent sizes and `.item()`: where the graph breaks, compared with torch.compile.

By default (as torch) `nonzero`, boolean masks, `masked_select`, `unique` and `.item()` break
the graph before them. With `capture.config.capture_dynamic_output_shape_ops` /
`capture_scalar_outputs` (and always with fullgraph=True) they stay in the graph with an
unbacked size or number (u0); a branch on one breaks the graph there with a reason, or with
fullgraph=True raises naming the line. Each scenario runs on fresh random inputs (different
counts of selected elements) with torch.compile and with capture, and the number of graphs
each backend received must agree; results must equal eager's.

PYTEST_DONT_REWRITE: the functions here are traced.
"""

from __future__ import annotations

import contextlib

import pytest
import torch
import torch._dynamo

import capture
from helpers import assert_same, captures


def masked_sum(x):
    y = x * 2
    return y[y > 0].sum() + 1, y[y > 0] * 3


def nonzero_rows(x):
    return torch.nonzero(x > 0).float().sum(0) + x.nonzero().shape[0]


def masked_select_exp(x):
    return torch.masked_select(x, x > 0).exp().sum()


def unique_values(x):
    return torch.unique(x.round()).sum() * 2


def scale_by_item(x):
    return x * (x * 2).sum().item()


def count_times_size(x):
    n = x.shape[0]
    y = x[x > 0]
    return y.shape[0] * 2 + n, torch.cat([y, y]).cos()


def branch_on_count(x):
    y = x[x > 0]
    if y.shape[0] > 3:
        return y.sum()
    return y.mean()


SCENARIOS = [masked_sum, nonzero_rows, masked_select_exp, unique_values, scale_by_item, count_times_size, branch_on_count]


class GraphCounter:
    def __init__(self):
        self.graphs: list[torch.fx.GraphModule] = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward


@contextlib.contextmanager
def settings(enabled: bool):
    saved = capture.config.capture_scalar_outputs, capture.config.capture_dynamic_output_shape_ops
    capture.config.capture_scalar_outputs = capture.config.capture_dynamic_output_shape_ops = enabled
    try:
        with torch._dynamo.config.patch(capture_scalar_outputs=enabled, capture_dynamic_output_shape_ops=enabled):
            yield
    finally:
        capture.config.capture_scalar_outputs, capture.config.capture_dynamic_output_shape_ops = saved


def inputs():
    # Same size twice (the second a cache hit with another count of positives), then a new size.
    # Seeded: how many graphs a data-dependent branch costs depends on the values (the tests run
    # before this one moved the global generator, and the count then differed now and then).
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(8, generator=generator), torch.randn(8, generator=generator), torch.randn(11, generator=generator)]


def run_both(fn, enabled: bool, **options):
    """Graphs torch.compile and capture compile for the same calls; results checked."""
    counts = {}
    calls = inputs()  # the same for both: which branch runs depends on the data
    for name, optimize, reset in (
        ("torch", torch.compile, torch._dynamo.reset),
        ("ours", capture.optimize, capture.reset),
    ):
        reset()
        counter = GraphCounter()
        with settings(enabled):
            compiled = optimize(fn, backend=counter, **options)
            for x in calls:
                assert_same(compiled(x.clone()), fn(x.clone()))
        counts[name] = len(counter.graphs)
    return counts, compiled, counter


@pytest.mark.parametrize("enabled", [False, True], ids=["default", "captured"])
@pytest.mark.parametrize("fn", SCENARIOS, ids=lambda f: f.__name__)
def test_graphs_match_torch_compile(fn, enabled):
    counts, _, _ = run_both(fn, enabled)
    assert counts["ours"] == counts["torch"]


@pytest.mark.parametrize("fn", [masked_sum, nonzero_rows, masked_select_exp, unique_values, scale_by_item, count_times_size], ids=lambda f: f.__name__)
def test_captured_ops_stay_in_one_graph_whatever_the_count(fn):
    capture.reset()
    counter = GraphCounter()
    with settings(True):
        compiled = capture.optimize(fn, backend=counter)
        for _ in range(4):  # one size: only the number of selected elements changes
            x = torch.randn(8)
            assert_same(compiled(x), fn(x))
    assert len(counter.graphs) == 1 and captures(compiled) == 1


def test_default_breaks_before_the_data_dependent_op():
    capture.reset()
    counter = GraphCounter()
    compiled = capture.optimize(nonzero_rows, backend=counter)
    x = torch.randn(8)
    assert_same(compiled(x), nonzero_rows(x))
    first = [n.target for n in counter.graphs[0].graph.nodes if n.op == "call_function"]
    assert torch.nonzero not in first


def test_branch_on_unbacked_size_breaks_with_the_reason(caplog):
    capture.reset()
    with settings(True), caplog.at_level("DEBUG", logger="compiler.graph_breaks"):
        compiled = capture.optimize(branch_on_count, backend=GraphCounter())
        x = torch.randn(8)
        assert_same(compiled(x), branch_on_count(x))
    assert "data-dependent" in caplog.text and "u0 > 3" in caplog.text


@pytest.mark.parametrize("enabled", [False, True], ids=["default", "captured"])
def test_fullgraph_raises_at_the_branch_naming_the_line(enabled):
    """With fullgraph=True torch keeps the mask in the graph even by default; so do we."""
    capture.reset()
    with settings(enabled), pytest.raises(capture.Unsupported, match="data-dependent") as info:
        capture.optimize(branch_on_count, backend=GraphCounter(), fullgraph=True)(torch.randn(8))
    assert info.value.source_line == "if y.shape[0] > 3:"
    assert "u0" in str(info.value) and "y = x[x > 0]" in str(info.value)


@pytest.mark.parametrize("fn", [masked_sum, scale_by_item, count_times_size], ids=lambda f: f.__name__)
def test_fullgraph_captures_without_the_settings(fn):
    counts, _, _ = run_both(fn, False, fullgraph=True)
    assert counts["ours"] == counts["torch"]


def test_mark_unbacked_input_dim_serves_0_1_and_more_with_one_graph():
    capture.reset()
    counter = GraphCounter()

    def fn(x):
        return (x * 2).sum(0), x.t() @ x

    compiled = capture.optimize(fn, backend=counter)
    for rows in (3, 1, 0, 7):
        x = torch.randn(rows, 4)
        capture.mark_unbacked(x, 0)
        assert_same(compiled(x), fn(x))
    assert len(counter.graphs) == 1
