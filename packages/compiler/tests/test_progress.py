"""Progress while compiling: quiet by default when stderr is not a terminal, a status line
per phase change with progress="always" once a compile runs past the delay, and the summary
on the compile_time log channel only.

PYTEST_DONT_REWRITE: the functions here are traced.
"""

from __future__ import annotations

import pytest
import torch

import compiler
from compiler import progress


def sine_mlp(x, w):
    return torch.sin(x @ w).relu() * 2


@pytest.fixture
def no_delay(monkeypatch):
    monkeypatch.setattr(progress, "DELAY_SECONDS", 0.0)
    yield
    compiler.config.progress = "auto"


def compile_and_check(backend="inductor"):
    compiler.reset()
    compiled = compiler.compile(sine_mlp, backend=backend)
    x, w = torch.randn(4, 8), torch.randn(8, 8)
    torch.testing.assert_close(compiled(x, w), sine_mlp(x, w))


def test_quiet_by_default_when_stderr_is_not_a_terminal(capfd, no_delay):
    compiler.config.progress = "auto"
    compile_and_check()
    assert capfd.readouterr().err == ""


def test_always_shows_each_phase(capfd, no_delay, tmp_path, monkeypatch):
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))  # a cold cache: every phase runs
    compiler.config.progress = "always"
    compile_and_check()
    err = capfd.readouterr().err
    assert "[compiler]" in err
    for phase in ("capture sine_mlp", "backend inductor", "lowering", "kernel builds"):
        assert phase in err
    assert "compiled in" not in err  # the summary goes to the compile_time channel only


def test_summary_on_the_compile_time_channel(capfd, no_delay):
    compiler.config.progress = "always"
    compiler.set_logs("compile_time")
    try:
        compile_and_check(backend="eager")
    finally:
        compiler.set_logs()
    assert "[compiler.compile_time] compiled in" in capfd.readouterr().err


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="auto, always, never"):
        compiler.config.progress = "sometimes"
