"""Guards and recompiles: every assumption made while tracing is checked on later calls; a
failing guard recaptures (logging which guard failed), and past the recompile limit the
function runs eagerly with one warning."""

from __future__ import annotations

import logging

import capture
import pytest
import torch

from helpers import assert_same, cache_of, captures, compile_eager, run_and_compare

FLAG = True


def fn(x, n=2):
    return (x * n) if FLAG else (x - n)


@pytest.mark.parametrize(
    "change",
    [
        lambda: (torch.randn(4, 3, dtype=torch.float64),),
        lambda: (torch.randn(5, 3),),
        lambda: (torch.randn(3, 4).t(),),
        lambda: (torch.randn(4, 3, requires_grad=True),),
        lambda: (torch.randn(4, 3), 3),
        lambda: (torch.randn(4, 3), 2.0),
    ],
    ids=["dtype", "size", "stride", "requires_grad", "int value", "int to float"],
)
def test_each_change_recaptures_once(change):
    compiled = compile_eager(fn)
    run_and_compare(compiled, fn, (torch.randn(4, 3),))
    run_and_compare(compiled, fn, (torch.randn(4, 3),))
    assert captures(compiled) == 1
    run_and_compare(compiled, fn, change())
    run_and_compare(compiled, fn, change())
    assert captures(compiled) == 2
    run_and_compare(compiled, fn, (torch.randn(4, 3),))
    assert captures(compiled) == 2, "the first entry still serves the first inputs"


def test_global_change_recaptures():
    global FLAG
    compiled = compile_eager(fn)
    x = torch.randn(2)
    run_and_compare(compiled, fn, (x,))
    FLAG = False
    try:
        run_and_compare(compiled, fn, (x,))
    finally:
        FLAG = True
    assert captures(compiled) == 2


@pytest.mark.parametrize(
    "state",
    [torch.no_grad, torch.inference_mode, lambda: torch.autocast("cpu", dtype=torch.bfloat16)],
    ids=["no_grad", "inference_mode", "autocast"],
)
def test_global_state_picks_its_own_entry(state):
    """Entries captured under different global state each serve calls made under theirs (the
    dispatcher compares the global state once per call, not inside each guard function)."""

    def matmul(x, w):
        return x @ w

    compiled = compile_eager(matmul)
    make_args = lambda: (torch.randn(3, 4, requires_grad=True), torch.randn(4, 2))  # noqa: E731
    for _ in range(2):
        run_and_compare(compiled, matmul, make_args())
        with state():
            run_and_compare(compiled, matmul, make_args())
    assert captures(compiled) == 2


def test_recompile_log_names_the_failing_guard(caplog):
    compiled = compile_eager(fn)
    compiled(torch.randn(4, 3))
    with caplog.at_level(logging.INFO, logger="compiler.recompiles"):
        compiled(torch.randn(5, 3))
    assert "recompiling fn" in caplog.text
    assert "L['x']" in caplog.text and "failed" in caplog.text


def test_recompile_limit_falls_back_to_eager(monkeypatch, caplog):
    monkeypatch.setattr(capture.config, "recompile_limit", 2)
    compiled = compile_eager(fn, dynamic=False)
    compiled(torch.randn(1))
    compiled(torch.randn(2))
    x = torch.randn(3)
    recompiles = caplog.at_level(logging.INFO, logger="compiler.recompiles")
    with pytest.warns(UserWarning, match="recompile limit"), recompiles:
        assert_same(compiled(x), fn(x))
    assert "hit the recompile limit" in caplog.text and "L['x']" in caplog.text
    assert captures(compiled) == 2
    y = torch.randn(4)
    assert_same(compiled(y), fn(y))


def test_guard_function_is_readable_python():
    compiled = compile_eager(fn)
    compiled(torch.randn(4, 3))
    guard = cache_of(compiled).entries[0].guard
    assert "def " in guard.source and "L['x']" in guard.source
    assert guard.why(torch.randn(4, 4)) is not None
    assert guard.why(torch.randn(4, 3)) is None


def test_compiled_entry_is_readable_python():
    compiled = compile_eager(lambda x: {"double": x * 2})
    compiled(torch.randn(2))
    source = cache_of(compiled).entries[0].source
    compile(source, "<entry>", "exec")
    assert "_compiled_graph(x)" in source and "{'double': outs[0]}" in source


def test_reset_forgets_entries():
    compiled = compile_eager(fn)
    compiled(torch.randn(2))
    capture.reset()
    assert captures(compiled) == 0
    compiled(torch.randn(2))
    assert captures(compiled) == 1
