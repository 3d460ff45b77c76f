"""Differential fuzzing of programs that update their inputs in place (an optimizer step, running
statistics, a cache), through the whole stack with inductor: random chains of in-place ops on
three input tensors, compiled vs eager on the first call, a cache hit with new values, a new
size, and inputs that are windows of one buffer (a write into one shows in another), or
windows that overlap in part (eager refuses many writes between those: compiled must raise
eager's error exactly then); inputs after the call and the returned value (or error) compared.
Foreach updates list two tensors that may be one (a tensor listed twice is updated twice in
eager).

The class of bug this guards: compiling runs a kernel more than once on the real arguments.
Triton picks block sizes by timing candidates at a kernel's first launch, and a compiled AdamW
step applied its update once per timed run on the H200. The interpreter has one candidate, so
here Triton kernels get two and a "timer" that runs each three times: an update that is not
idempotent then shows. The C++ backend runs the same programs (it times nothing).

CI runs a fixed budget; `INDUCTOR_FUZZ_EXAMPLES=200` runs more (a failure prints the program).
"""

from __future__ import annotations

import dataclasses
import os

import pytest
import torch

import compiler

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("INDUCTOR_FUZZ_EXAMPLES", "8"))
NAMES = ("a", "b", "c")

# In-place updates of `t`, reading `u` (another input, or `t` itself). Each keeps values finite
# and of moderate size, so eager and compiled results compare with float tolerances.
UPDATES = [
    "{t}.add_({u})",
    "{t}.mul_(0.5)",
    "{t}.addcmul_({u}, {u}, value=0.1)",
    "{t}.lerp_({u}, 0.3)",
    "{t}.clamp_(-2.0, 2.0)",
    "{t}[::2].add_(1.0)",
    "{t}.copy_({u} * 0.5 + 1.0)",
    "{t}.sub_({t}.mean())",
    "{t}.div_({t}.abs().sum(-1, keepdim=True) + 1.0)",
    "{t}.mul_(0.9).add_({u}.sin(), alpha=0.1)",
    "{t}.t().add_({u}.t())",
    "{t}.t()[1:].mul_(2.0)",
    # foreach ops write their items in turn: `t` and `u` may be one tensor or share memory
    "torch._foreach_add_([{t}, {u}], [{u}.cos(), {t}.sin()])",
    "torch._foreach_mul_([{u}, {t}], [0.5, 0.25])",
]
# Besides the inputs, updates may write `d`, a value the program computes: written through a
# transposed view and returned with views of it, its layout and its views' must be eager's.
TARGETS = (*NAMES, "d")


@st.composite
def programs(draw):
    steps = draw(st.lists(
        st.tuples(st.sampled_from(UPDATES), st.sampled_from(TARGETS), st.sampled_from(NAMES)), min_size=1, max_size=5))
    lines = ["d = a * 1.0", *(update.format(t=t, u=u) for update, t, u in steps)]
    result = draw(st.sampled_from(["a + b", "c.sum(0)", "a * 2", "None", "d, d.t()", "d.t(), d[1:]"]))
    return "def program(a, b, c):\n" + "".join(f"    {line}\n" for line in lines) + f"    return {result}\n"


def _function(source: str):
    scope: dict = {"torch": torch}
    exec(compile(source, "<fuzzed program>", "exec"), scope)  # noqa: S102  (a program we generated)
    return scope["program"]


@pytest.fixture
def triton_kernels_timed_three_times(monkeypatch):
    from inductor.runtime import triton_launch

    one_config = triton_launch.TritonLauncher._candidates

    def two_configs(self, numels, interpreted):
        [config] = one_config(self, numels, interpreted)[:1]
        return [config, dataclasses.replace(config, XBLOCK=max(1, config.XBLOCK // 2))]

    def time_by_running_three_times(launch):
        for _ in range(3):
            launch()
        return 1.0

    monkeypatch.setattr(triton_launch.TritonLauncher, "_candidates", two_configs)
    monkeypatch.setattr(triton_launch, "_time_ms", time_by_running_three_times)
    monkeypatch.setattr(triton_launch.TritonLauncher, "_store_choices", lambda *a: None)


def _inputs(rows: int):
    return [torch.randn(rows, 6) for _ in NAMES]


def _sharing_rows(buffer: torch.Tensor, rows: int) -> list:
    """The three inputs as row windows of one buffer: `a` and `c` the same rows (a write into
    one shows in the other), `b` the next ones. Compiled, the graph reads them as views of one
    base."""
    return [buffer[:rows], buffer[rows:], buffer[:rows]]


def _overlapping_rows(buffer: torch.Tensor, rows: int) -> list:
    """`a` and `b` row windows one row apart (they overlap in part: eager refuses `a.add_(b)`,
    allows `a.mul_(0.5)`), `c` the rows after them."""
    return [buffer[:rows], buffer[1 : rows + 1], buffer[rows + 1 : 2 * rows + 1]]


WINDOWS = {"shared": (_sharing_rows, 2), "overlapping": (_overlapping_rows, 3)}


def _inputs_of(kind: str, rows: int) -> tuple[list, list]:
    """Two copies (ours, eager's) of the inputs of one call."""
    if kind == "separate":
        inputs = _inputs(rows)
        return [t.clone() for t in inputs], [t.clone() for t in inputs]
    windows, buffer_rows = WINDOWS[kind]
    buffer = torch.randn(buffer_rows * rows, 6)
    return windows(buffer.clone(), rows), windows(buffer.clone(), rows)


def _outcome(fn, inputs):
    try:
        return fn(*inputs), None
    except RuntimeError as error:
        return None, str(error)


def _check(source: str, options: dict):
    fn = _function(source)
    # First call, cache hit, new size; then, compiled anew, inputs sharing memory: first call,
    # cache hit, new size (dynamic sizes: the graph runs natively then); then inputs that
    # overlap in part, the same way.
    kinds = (
        ((4, "separate"), (4, "separate"), (7, "separate")),
        ((5, "shared"), (5, "shared"), (6, "shared")),
        ((5, "overlapping"), (5, "overlapping"), (6, "overlapping")),
    )
    for calls in kinds:
        compiled = compiler.compile(_function(source), backend="inductor", options=options)
        for call, (rows, kind) in enumerate(calls):
            ours, theirs = _inputs_of(kind, rows)
            expected, refusal = _outcome(fn, theirs)
            actual, error = _outcome(compiled, ours)
            assert error == refusal, f"compiled raised {error!r}, eager {refusal!r}\n{source}"
            # Strides too, where sizes are static (symbolic ones: tests/test_inductor_output_views.py).
            torch.testing.assert_close(
                actual, expected, rtol=1e-4, atol=1e-5, check_stride=call < 2, msg=lambda m: f"{m}\n{source}"
            )
            # Writes made before a refused one stay made, in eager and compiled.
            for name, a, e in zip(NAMES, ours, theirs):
                torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-5, msg=lambda m: f"input {name}: {m}\n{source}")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=programs())
def test_in_place_updates_match_eager_with_triton_kernels_timed(source, triton_kernels_timed_three_times):
    _check(source, {"cpu_backend": "triton"})


@settings(max_examples=max(EXAMPLES // 2, 3), deadline=None, suppress_health_check=list(HealthCheck))
@given(source=programs())
def test_in_place_updates_match_eager_in_cpp(source):
    _check(source, {})
