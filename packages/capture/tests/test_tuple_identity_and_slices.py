"""What CPython hands back for an exact tuple copied or sliced whole (the tuple itself), and the
ValueError of a zero slice step, raised where the program's except can catch it."""

from __future__ import annotations

import pytest
import torch

from helpers import compile_eager, run_and_compare


@pytest.mark.parametrize("container", ["[1, 2, 3]", "(1, 2, 3)", "'abc'"])
def test_zero_slice_step_is_the_programs_value_error(container):
    # Before: CaptureInternalError (ValueError raised inside the tracer).
    namespace = {}
    exec(f"def fn(x):\n    try:\n        {container}[::x.shape[0] - x.shape[0]]\n    except ValueError as e:\n        return x * 2, str(e)\n    return x, None", namespace)
    fn = namespace["fn"]
    compiled = compile_eager(fn)
    for size in (3, 3, 5):
        run_and_compare(compiled, fn, (torch.randn(size),))
