"""compiler.explain, the COMPILER_LOGS channels, and the function marks (disable,
allow_in_graph) as the public namespace offers them.

PYTEST_DONT_REWRITE: the functions here are traced.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest
import torch

import compiler


def two_graphs(x):
    y = x.sin() * 2
    print("break")
    return y.cos() + 1


def test_explain_counts_graphs_and_breaks(capsys):
    explanation = compiler.explain(two_graphs)(torch.randn(3))
    assert explanation.graph_count == 2 == len(explanation.graphs)
    assert explanation.graph_break_count == 1
    (reason,) = explanation.break_reasons
    assert "print" in reason.reason
    assert reason.stack[-1].source_line == 'print("break")'
    assert explanation.ops_per_graph == [["sin", "mul"], ["cos", "add"]]
    assert all("def " in guard.source for guard in explanation.out_guards)


def test_explain_report_is_printable():
    text = str(compiler.explain(two_graphs)(torch.randn(3)))
    assert "Graph count: 2" in text and "Graph break count: 1" in text
    assert 'print("break")' in text and "hint:" in text


def test_explain_of_a_module():
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
    explanation = compiler.explain(model)(torch.randn(2, 3))
    assert explanation.graph_count == 1 and explanation.graph_break_count == 0


@pytest.mark.parametrize(
    "channel, expected",
    [
        ("graph_breaks", "graph break in two_graphs"),
        ("graph_code", "def forward"),
        ("guards", "def guards_two_graphs"),
        ("bytecode", "resumes two_graphs at offset"),
    ],
)
def test_log_channel_shows_its_records(caplog, channel, expected):
    compiler.set_logs(channel)
    try:
        with caplog.at_level(logging.DEBUG, logger=f"compiler.{channel}"):
            compiler.compile(two_graphs)(torch.randn(3))
    finally:
        compiler.set_logs("")
    assert expected in caplog.text


def test_recompiles_channel_names_the_failing_guard(caplog):
    compiled = compiler.compile(lambda x: x + 1, dynamic=False)
    compiled(torch.randn(2))
    with caplog.at_level(logging.DEBUG, logger="compiler.recompiles"):
        compiled(torch.randn(2, dtype=torch.float64))
    assert "recompiling" in caplog.text and "dtype" in caplog.text


def test_unknown_log_channel_is_refused():
    with pytest.raises(ValueError, match="unknown log channel"):
        compiler.set_logs("graph_breaks,nope")


@pytest.mark.slow
def test_compiler_logs_environment_variable_turns_channels_on():
    script = (
        "import torch, compiler\n"
        "def f(x):\n"
        "    print(end='')\n"
        "    return x + 1\n"
        "compiler.compile(f)(torch.randn(2))\n"
    )
    env = {**os.environ, "COMPILER_LOGS": "graph_breaks,recompiles"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "[compiler.graph_breaks] graph break in f" in done.stderr


def test_disabled_function_runs_natively_between_graphs(capsys):
    @compiler.disable
    def host_side(t):
        return float(t.sum())  # reads data: not traceable

    def fn(x):
        return x * host_side(x)

    x = torch.randn(3)
    explanation = compiler.explain(fn)(x)
    assert "compiler.disable" in explanation.break_reasons[0].reason
    torch.testing.assert_close(compiler.compile(fn)(x), fn(x))


def test_allow_in_graph_keeps_the_call_as_one_node():
    def scaled(t):
        return t * 3

    compiler.allow_in_graph(scaled)
    explanation = compiler.explain(lambda x: scaled(x) + 1)(torch.randn(2))
    assert explanation.ops_per_graph == [["scaled", "add"]]


def test_mark_dynamic_and_mark_static_are_public():
    x = torch.randn(4, 3)
    compiler.mark_dynamic(x, 0, min=2, max=16)
    compiler.mark_static(x, 1)
    compiled = compiler.compile(lambda t: t.sum(1))
    torch.testing.assert_close(compiled(x), x.sum(1))
