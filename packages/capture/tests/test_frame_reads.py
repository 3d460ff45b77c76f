"""What a function reads from its own frame or from the process: `globals()`, `locals()`,
`vars()`, `dir()` answer from the real frame (the function runs natively), and
`os.environ` is read and guarded like any global, so a changed variable is seen."""

from __future__ import annotations

import io
import os

import pytest
import torch

from helpers import assert_same, compile_eager

MARK = 5


def reads_globals(x):
    g = globals()
    g["WRITTEN_BY_TEST"] = g.get("WRITTEN_BY_TEST", 0) + 1
    return x * g["MARK"] + g["WRITTEN_BY_TEST"], g is globals()


def reads_locals(x):
    y = x * 2
    names = locals()
    return y + len(names), sorted(names)


def reads_locals_after_a_break(x):
    y = x * 2
    print("a graph break", file=io.StringIO())
    z = y + 1
    return z + len(locals()), sorted(locals())


def reads_vars_and_dir(x):
    y = x + 1
    return y * len(vars()), dir()


@pytest.mark.parametrize(
    "fn", [reads_globals, reads_locals, reads_locals_after_a_break, reads_vars_and_dir], ids=lambda f: f.__name__
)
def test_frame_introspection_answers_from_the_real_frame(fn):
    compiled = compile_eager(fn)
    for _ in range(2):
        x = torch.randn(3)
        expected = fn(x)
        if fn is reads_globals:
            globals()["WRITTEN_BY_TEST"] -= 1  # the compiled call repeats eager's increment
        assert_same(compiled(x), expected)


def scaled_by_environment(x):
    factor = 2 if os.environ.get("CAPTURE_TEST_FLAG") == "1" else 3
    if "CAPTURE_TEST_OTHER" in os.environ:
        factor += int(os.environ["CAPTURE_TEST_OTHER"])
    return x * factor


def test_environment_variables_read_in_the_function_are_guarded(monkeypatch):
    compiled = compile_eager(scaled_by_environment)
    for flag, other in (("0", None), ("1", None), ("1", "4"), ("0", None)):
        monkeypatch.setenv("CAPTURE_TEST_FLAG", flag)
        if other is None:
            monkeypatch.delenv("CAPTURE_TEST_OTHER", raising=False)
        else:
            monkeypatch.setenv("CAPTURE_TEST_OTHER", other)
        x = torch.randn(3)
        assert_same(compiled(x), scaled_by_environment(x))
