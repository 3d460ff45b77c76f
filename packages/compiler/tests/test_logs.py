"""Our loggers stay quiet unless a channel is turned on, as torch.compile's do (issue 17).

A program that configures logging for itself (`logging.basicConfig(level=logging.INFO)`) gets
nothing from compiling, recompiling or breaking a graph, with torch.compile as with ours;
COMPILER_LOGS / set_logs turn single channels on; an unknown channel is an error naming the
valid ones. Programs run in subprocesses: logging configuration is per process.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import compiler

# A graph break (print), a recompile (a new dtype) and inductor's code generation.
PROGRAM = """
import logging, sys, torch
logging.basicConfig(level=logging.INFO)
COMPILE
def f(x):
    y = x.sin() + 1
    print("user output")
    return y * 2
compiled = COMPILE(f)
compiled(torch.randn(4))
compiled(torch.randn(4, dtype=torch.float64))
"""

REFERENCE = "torch.compile"
OURS = "compiler.compile"


def _run(compile_name: str, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    source = PROGRAM.replace("COMPILE\n", "import compiler\n" if compile_name == OURS else "\n")
    source = source.replace("COMPILE(f)", f"{compile_name}(f)")
    env = {k: v for k, v in os.environ.items() if k not in ("COMPILER_LOGS", "TORCH_LOGS")}
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True, timeout=300)


def _log_lines(stderr: str) -> list[str]:
    # torch may warn about NumPy or CUDA in some environments; those are not compile logs.
    return [line for line in stderr.splitlines() if line.strip() and "Warning" not in line and "warn(" not in line]


@pytest.mark.slow
def test_root_logger_at_info_prints_nothing_from_compiling_like_torch_compile():
    reference = _run(REFERENCE)
    ours = _run(OURS)
    assert reference.returncode == 0, reference.stderr
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == reference.stdout  # only the program's own prints
    assert _log_lines(reference.stderr) == []  # the behaviour we match
    assert _log_lines(ours.stderr) == []


@pytest.mark.slow
def test_environment_turns_on_only_the_listed_channel():
    done = _run(OURS, {"COMPILER_LOGS": "recompiles"})
    assert done.returncode == 0, done.stderr
    assert "[compiler.recompiles] recompiling f" in done.stderr
    assert "[compiler.graph_breaks]" not in done.stderr and "[compiler.output_code]" not in done.stderr
    assert "INFO:" not in done.stderr  # nothing reached the root logger's handler


@pytest.mark.slow
def test_unknown_channel_in_the_environment_fails_at_import_naming_the_valid_ones():
    done = _run(OURS, {"COMPILER_LOGS": "bogus,graph_breaks"})
    assert done.returncode != 0
    assert "unknown log channel(s) 'bogus'" in done.stderr
    assert all(name in done.stderr for name in compiler.logs.CHANNELS)
    # torch.compile refuses an unknown TORCH_LOGS name too, at import.
    assert _run(REFERENCE, {"TORCH_LOGS": "bogus,graph_breaks"}).returncode != 0


def test_set_logs_refuses_unknown_channels_and_changes_nothing():
    compiler.set_logs("graph_breaks")
    try:
        with pytest.raises(ValueError, match="the channels are: graph_breaks, recompiles"):
            compiler.set_logs("recompiles,nope")
        import logging

        assert logging.getLogger("compiler.graph_breaks").isEnabledFor(logging.DEBUG)
        assert not logging.getLogger("compiler.recompiles").isEnabledFor(logging.INFO)
    finally:
        compiler.set_logs()


def test_channels_write_to_stderr_when_on_and_nothing_when_off(capsys):
    import torch

    def f(x):
        y = x + 1
        print("", end="")
        return y

    compiler.compile(f, backend="eager")(torch.randn(2))
    assert "[compiler." not in capsys.readouterr().err
    compiler.reset()
    compiler.set_logs(["graph_breaks"])
    try:
        compiler.compile(f, backend="eager")(torch.randn(2))
    finally:
        compiler.set_logs()
    assert "[compiler.graph_breaks] graph break in" in capsys.readouterr().err
