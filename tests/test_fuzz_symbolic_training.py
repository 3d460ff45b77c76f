"""Differential fuzzing of training programs at symbolic sizes, through inductor's C++ kernels:
random chains of shape-changing steps (pads and crops by int arguments, slices, narrow, cat,
roll, flips, transposes, repeats, expands, pooling, interpolation, unfold, split, gathers)
mixed with pointwise ops and reductions, on a 2-d input that requires grad and two int
arguments `a` and `b`. Compiled with dynamic=True, so sizes and ints are symbols from the
first call; the output and the input's gradient are compared with eager on the first call, a
cache hit with fresh values, and new sizes with new ints (the same graphs, or guarded new ones).
Where eager raises (a crop past the size), the compiled call must raise too.

The class of bug this guards: a backward graph whose sizes use a symbol none of its inputs
carries. The backward of `F.pad(x, (a, b))` gets the saved -a, -b and a gradient of width
n + a + b, never n, yet the input's gradient has x's strides (n, 1): the kernel stored with n
undeclared (g++ failed; inductor's input_symbols.py now solves n from the gradient's width).
Or one whose sizes were computed through floats (interpolate by a scale factor of 1.7: a
gradient floor(1.7 * n) wide, which C++ kernels cannot print). And joint-graph rewrites that
leave a node before the size it reads (max-pool's returned indices read a sym_size node
inserted after them: KeyError in the partitioner).

CI runs a fixed budget; `FUZZ_SYMBOLIC_TRAINING_EXAMPLES=200` runs more (a failure prints the
program).
"""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F  # noqa: F401  (the programs' namespace)

import compiler

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("FUZZ_SYMBOLIC_TRAINING_EXAMPLES", "6"))

# Each step maps a 2-d `x` to a 2-d value, reading the int arguments a, b (0 to 3) as it likes.
STEPS = [
    "F.pad(x, (a, b), value=0.5)",
    "F.pad(x, (-1, a, b, -1))",
    "F.pad(x, (b, -a))",
    "F.pad(x[None], (1, 2), mode='reflect')[0]",
    "F.pad(x[None], (a, 1), mode='replicate')[0]",
    "x[:, a:]",
    "x[a:, : x.shape[1] - b]",
    "x[:-1, ::2]",
    "x[b::2]",
    "x.narrow(1, a, x.shape[1] - a)",
    "x.select(0, a)[None]",
    "torch.cat([x, x[:, : a + 1]], 1)",
    "torch.cat([x[b:], x * 2], 0)",
    "torch.cat([x, x.new_full((x.shape[0], a), 1.5)], 1)",
    "torch.stack([x, x * 2], 2).flatten(1)",
    "x.roll(a, 1)",
    "x.flip(0)",
    "x.t()",
    "x.t().contiguous() * 3",
    "x.reshape(x.shape[1], x.shape[0])",
    "x.view(-1)[a:][None]",
    "x.repeat(1, 2)",
    "x[:, None, :].expand(-1, 2, -1).reshape(-1, x.shape[1])",
    "x.unsqueeze(0).expand(2, -1, -1).sum(0)",
    "F.max_pool1d(x[None], 2, ceil_mode=True)[0]",
    "F.max_pool1d(x[None], 3, 2, 1)[0]",
    "F.max_pool2d(x[None], 2, ceil_mode=True)[0]",
    "F.avg_pool1d(x[None], 2, ceil_mode=True)[0]",
    "F.interpolate(x[None], scale_factor=2)[0]",
    "F.interpolate(x[None], scale_factor=1.7)[0]",
    "F.interpolate(x[None], size=x.shape[1] + a, mode='linear')[0]",
    "x.unfold(1, 2, 1).sum(-1)",
    "torch.split(x, a + 1, 1)[-1]",
    "x.chunk(2, 1)[0]",
    "x.index_select(1, torch.arange(a, x.shape[1]))",
    "x.gather(1, torch.arange(x.shape[1]).flip(0).expand(x.shape[0], -1))",
    "x.sin() * a + b",
    "x - x.mean(1, keepdim=True)",
    "x.softmax(1)",
    "x.cumsum(0)",
    "x @ x.t()",
    "x * x.shape[1] - x.sum(0)",
]


@st.composite
def programs(draw):
    steps = draw(st.lists(st.sampled_from(STEPS), min_size=1, max_size=4))
    calls = [draw(st.tuples(st.integers(3, 8), st.integers(4, 12), st.integers(0, 3), st.integers(0, 3)))]
    calls.append(calls[0])  # a cache hit with fresh values
    calls += draw(st.lists(st.tuples(st.integers(3, 8), st.integers(4, 12), st.integers(0, 3), st.integers(0, 3)),
                           min_size=2, max_size=2))
    return steps, calls


def _program(steps: list[str]):
    source = "def program(x, a, b):\n" + "".join(f"    x = {step}\n" for step in steps) + "    return x\n"
    namespace = {"torch": torch, "F": torch.nn.functional}
    exec(compile(source, "<fuzzed program>", "exec"), namespace)
    return namespace["program"], source


def _run(fn, x, a, b, seed: int):
    """fn's output and x's gradient for a seeded cotangent; or the exception it raised."""
    x = x.detach().clone().requires_grad_()
    try:
        out = fn(x, a, b)
        cotangent = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed))
        (grad,) = torch.autograd.grad(out, x, cotangent)
    except Exception as error:  # noqa: BLE001  (eager's errors are the spec)
        return error
    return out.detach(), grad


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=[Phase.explicit, Phase.generate])
@given(programs())
def test_training_programs_at_symbolic_sizes_match_eager(program):
    steps, calls = program
    fn, source = _program(steps)
    first = calls[0]
    hypothesis.assume(not isinstance(_run(fn, torch.randn(first[:2]), *first[2:], seed=0), Exception))
    compiler.reset()
    compiled = compiler.compile(fn, backend="inductor", dynamic=True)
    for number, (rows, columns, a, b) in enumerate(calls):
        where = f"call {number}: x of shape ({rows}, {columns}), a={a}, b={b}, of\n{source}"
        x = torch.randn(rows, columns)
        expected = _run(fn, x, a, b, seed=number)
        if isinstance(expected, Exception):
            assert isinstance(_run(compiled, x, a, b, seed=number), Exception), f"eager raised {expected!r}; {where}"
            continue
        actual = _run(compiled, x, a, b, seed=number)
        if isinstance(actual, Exception):
            raise AssertionError(f"compiled raised where eager did not; {where}") from actual
        for name, ours, theirs in zip(("output", "gradient"), actual, expected):
            assert ours.shape == theirs.shape, f"{name} shape {tuple(ours.shape)}, eager {tuple(theirs.shape)}; {where}"
            torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-4, msg=lambda m: f"{name}: {m}; {where}")
