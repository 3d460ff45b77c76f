"""inductor's log channels when inductor is used without capture or compiler: silent under
the program's own logging configuration, and COMPILER_LOGS=output_code prints the code."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAM = """
import logging, torch, inductor
logging.basicConfig(level=logging.DEBUG)
def fn(x):
    return (torch.relu(x) * 3,)
inductor.compile_fx(torch.fx.symbolic_trace(fn), [torch.randn(4)])
"""


def _run(logs: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COMPILER_LOGS": logs}
    return subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("logs", ["", "output_code"])
def test_output_code_only_when_asked(logs):
    done = _run(logs)
    assert done.returncode == 0, done.stderr
    printed = [line for line in done.stderr.splitlines() if line.startswith("[compiler.")]
    if logs:
        assert any(line.startswith("[compiler.output_code] inductor: ") for line in printed)
        assert all(line.startswith("[compiler.output_code]") for line in printed)
    else:
        assert printed == []
    assert "DEBUG:compiler" not in done.stderr and "INFO:compiler" not in done.stderr
