"""Differential fuzzing of float16/bfloat16 programs at large magnitudes, through the whole stack
with inductor: random chains of reductions and normalizations (mean, sums divided by a count,
variance, softmax, logsumexp, norms, layer and RMS norm) on inputs scaled up to thousands.

The class of bug this guards: a lowering that rounds an intermediate to the half dtype where
eager keeps it in float32. A float16 mean rounded its float32 sum first: the mean of 5,000
values of magnitude 3,000 came out -inf (eager: -18.98). The yardstick is the same program in
float32: ours must be finite wherever it and eager are, and no further from it than twice
eager's largest error (eager rounds some intermediates itself) or a few units in the last place
of the output's magnitude.

CI runs a fixed budget; `HALF_FUZZ_EXAMPLES=200` runs more (a failure prints the program).
"""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F

import compiler

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("HALF_FUZZ_EXAMPLES", "6"))

# Each step maps a [rows, cols] value to one of the same shape (reductions keep their dims).
STEPS = {
    "mean": lambda x: x - x.mean(-1, keepdim=True),
    "mean_all": lambda x: x * 0.5 + x.mean(),
    "sum_over_count": lambda x: x - x.sum(0, keepdim=True) / x.shape[0],
    "var": lambda x: x / (x.var(-1, keepdim=True) + 1.0).sqrt(),
    "std_mean": lambda x: (x - torch.std_mean(x, 0, keepdim=True)[1]),
    "softmax": lambda x: x.softmax(-1) * x.shape[-1],
    "log_softmax": lambda x: x.log_softmax(-1),
    "logsumexp": lambda x: x - torch.logsumexp(x, -1, keepdim=True),
    "norm": lambda x: x / (torch.linalg.vector_norm(x, dim=-1, keepdim=True) + 1.0),
    "layer_norm": lambda x: F.layer_norm(x, x.shape[-1:]),
    "rms_norm": lambda x: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6),
    "scale_up": lambda x: x * 1000.0,
}


@st.composite
def programs(draw):
    names = draw(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=4))
    return names, draw(st.sampled_from([torch.float16, torch.bfloat16])), draw(st.integers(1, 3000))


def _run(names, x):
    for name in names:
        x = STEPS[name](x)
    return x


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(programs())
def test_half_precision_programs_round_as_eager(program):
    names, dtype, scale = program
    compiled = compiler.compile(lambda x: _run(names, x), backend="inductor")
    for shape in [(4, 3000), (4, 3000), (6, 2500)]:  # first call, cache hit with new values, new size
        x = (torch.randn(shape) * scale).to(dtype)
        reference = _run(names, x.float())
        eager, ours = _run(names, x).float(), compiled(x).float()
        finite = torch.isfinite(reference.to(dtype).float()) & torch.isfinite(eager)
        where = f"{' -> '.join(names)} on {dtype} inputs of scale {scale}, shape {shape}"
        assert torch.isfinite(ours)[finite].all(), f"{where}: not finite where eager and float32 are"
        if not finite.any():
            continue
        ulp = 2.0 ** (-8 if dtype == torch.bfloat16 else -11)
        eager_error = (eager - reference).abs()[finite].max()
        bound = max(2 * eager_error, 4 * ulp * reference.abs()[finite].max())
        error = (ours - reference).abs()[finite].max()
        assert error <= bound, f"{where}: max error {error:.3g}, eager's {eager_error:.3g}"
