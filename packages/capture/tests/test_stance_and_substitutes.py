"""capture's stance, function substitutes and constant results, the export flag and the
automatic-dynamic switch, used through capture alone (compiler's tests compare them with
torch.compiler).

PYTEST_DONT_REWRITE: the functions here are traced.
"""

from __future__ import annotations

import bisect

import pytest
import torch

import capture


class Counting:
    def __init__(self):
        self.compiles = 0

    def __call__(self, gm, example_inputs):
        self.compiles += 1
        return gm.forward


@pytest.fixture
def stance():
    yield capture.stance.set_stance
    capture.stance.set_stance("default")


def double(x):
    return x * 2


def test_force_eager_runs_the_original_even_on_a_hit(stance):
    backend = Counting()
    compiled = capture.optimize(double, backend)
    compiled(torch.randn(2))
    stance("force_eager")
    x = torch.randn(3, 3)  # would need a new entry
    torch.testing.assert_close(compiled(x), double(x))
    assert backend.compiles == 1


def test_fail_on_recompile_names_the_failing_guard(stance):
    compiled = capture.optimize(double, Counting(), dynamic=False)
    compiled(torch.randn(2))
    stance("fail_on_recompile")
    compiled(torch.randn(2))  # a hit is fine
    with pytest.raises(capture.RecompileError, match=r"double .*would capture again:\n.*L\['x'\]"):
        compiled(torch.randn(2, dtype=torch.float64))


def test_eager_on_recompile_captures_nothing_new(stance):
    backend = Counting()
    compiled = capture.optimize(double, backend, dynamic=False)
    stance("eager_on_recompile")
    x = torch.randn(4)
    torch.testing.assert_close(compiled(x), double(x))
    assert backend.compiles == 0


def test_unknown_stance_changes_nothing(stance):
    with pytest.raises(ValueError, match="the stances are"):
        stance("never")
    assert capture.stance.current_stance() == "default"


def test_automatic_dynamic_shapes_switch(monkeypatch):
    monkeypatch.setattr(capture.config, "automatic_dynamic_shapes", False)
    backend = Counting()
    compiled = capture.optimize(double, backend)
    for size in (2, 3, 4):
        compiled(torch.randn(size))
    assert backend.compiles == 3


def bisect_right_polyfill(a, x, lo=0, hi=None, *, key=None):
    hi = len(a) if hi is None else hi
    while lo < hi:
        middle = (lo + hi) // 2
        if x < (a[middle] if key is None else key(a[middle])):
            hi = middle
        else:
            lo = middle + 1
    return lo


def test_substitute_is_traced_and_runs_the_original_eagerly():
    def fn(x):
        return x * bisect.bisect_right([1, 3, 3, 8], x.shape[0])

    x = torch.randn(3)
    with pytest.raises(capture.Unsupported, match="bisect_right"):
        capture.export(fn, (x,))  # a C function capture cannot trace into
    substitute = capture.substitute_in_graph(bisect.bisect_right)(bisect_right_polyfill)
    assert substitute([1, 3, 3, 8], 3) == bisect.bisect_right([1, 3, 3, 8], 3)
    torch.testing.assert_close(capture.export(fn, (x,))(x), fn(x))


def test_assume_constant_result_needs_constant_arguments():
    @capture.assume_constant_result
    def scale_of(t):
        return float(t.sum())

    with pytest.raises(capture.Unsupported, match="not constants"):
        capture.export(lambda x: x * scale_of(x), (torch.randn(2),))


def test_is_exporting_only_while_exporting():
    seen = []

    def fn(x):
        seen.append(torch.compiler.is_exporting())
        return x + 1

    capture.export(fn, (torch.randn(2),))
    assert seen[0] is True and not torch.compiler.is_exporting()


def test_a_function_marked_as_torch_compile_marks_it_runs_at_trace_time():
    # transformers marks its install probes (`is_mambapy_available`, which calls
    # importlib.util.find_spec) with `_dynamo_marked_constant`, torch.compile's mark for
    # assume_constant_result; traced, find_spec read sys.modules while imports changed it.
    calls = []

    def probe() -> bool:
        calls.append(1)
        return True

    probe._dynamo_marked_constant = True

    def fn(x):
        return x + 1 if probe() else x - 1

    graph = capture.export(fn, (torch.randn(2),))
    assert len(calls) == 1  # called once, natively, while tracing
    x = torch.randn(2)
    torch.testing.assert_close(graph(x), fn(x))
