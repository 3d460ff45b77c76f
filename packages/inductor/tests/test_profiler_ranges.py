"""Under torch.profiler each generated kernel runs in a range naming its graph, its name in the
wrapper and the bytes of the buffers it takes (runtime/profiling.py), for C++ kernels (invisible
to the profiler otherwise) and Triton ones; results still match eager."""

from __future__ import annotations

import torch

import inductor
from conftest import backend_options
from inductor.runtime.profiling import RANGE


def sin_sum_and_cos(x, y):
    return (x.sin() + y).sum(-1), (x * y).cos()


def test_each_kernel_runs_in_a_profiler_range_naming_it_and_its_bytes(device):
    x, y = torch.randn(64, 128, device=device), torch.randn(64, 128, device=device)
    compiled = inductor.compile_fx(torch.fx.symbolic_trace(sin_sum_and_cos), [x, y], options=backend_options())
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, y), sin_sum_and_cos(x, y))  # outside a profiler: no ranges
        x, y = torch.randn_like(x), torch.randn_like(y)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
            result = compiled(x, y)
    torch.testing.assert_close(result, sin_sum_and_cos(x, y))
    ranges = [found for event in profiler.events() if (found := RANGE.fullmatch(event.name))]
    assert ranges and len({r["kernel"] for r in ranges}) == len(ranges)  # each kernel once per call
    assert len({r["graph"] for r in ranges}) == 1
    matrix, row_sums = x.numel() * x.element_size(), x.shape[0] * x.element_size()
    # every kernel takes both inputs; it writes the sums, the cosines, or both
    for found in ranges:
        assert int(found["bytes"]) in {2 * matrix + out for out in (row_sums, matrix, row_sums + matrix)}
