"""Per-kernel time for the compile report: the compiled function run a few more times under
torch.profiler, each generated kernel read from the range inductor puts around it while a
profiler records (inductor/runtime/profiling.py: `inductor <graph>/<kernel> <bytes>B`).

A kernel's time is its GPU time where the profiler saw one, else the range's wall time (C++
kernels, and CUDA kernels, which inductor synchronizes around while profiled). Bytes are those
of the distinct buffers the kernel takes, each counted once: a lower bound on the memory it moves
(a buffer read and written counts once), so the bandwidth shown is one too.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import torch
from inductor.runtime.profiling import RANGE

RUNS = 3  # profiled calls after each call that compiled: enough to average, short enough for a report


@dataclasses.dataclass
class KernelTime:
    graph: str    # the first digits of the graph's cache key (the folder output_code names)
    kernel: str   # its name in the wrapper (kernel0, ...)
    nbytes: int   # per call
    calls: int = 0
    seconds: float = 0.0
    on_gpu: bool = False  # seconds are GPU time (else wall time of the call)

    @property
    def seconds_per_call(self) -> float:
        return self.seconds / max(self.calls, 1)

    @property
    def bandwidth(self) -> float:
        """Bytes per second (a lower bound: see the module docstring)."""
        return self.nbytes / self.seconds_per_call if self.seconds else 0.0


def profile_kernels(fn: Callable, args: tuple, kwargs: dict) -> list[KernelTime] | str:
    """`fn(*args, **kwargs)` run RUNS times under torch.profiler: each generated kernel's time,
    or why nothing was measured."""
    if torch.autograd._profiler_enabled():
        return "not measured: a profiler was already recording (torch.profiler cannot nest)"
    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as profiler:
        for _ in range(RUNS):
            fn(*args, **kwargs)
    events = profiler.events()
    device_kernels = [e.time_range for e in events if e.device_type == torch.autograd.DeviceType.CUDA]
    times: dict[tuple, KernelTime] = {}
    for event in events:
        found = RANGE.fullmatch(event.name)
        if found is None or event.device_type != torch.autograd.DeviceType.CPU:
            continue
        key = (found["graph"], found["kernel"], int(found["bytes"]))
        entry = times.setdefault(key, KernelTime(*key))
        gpu_us = event.device_time_total or _device_time_inside(event.time_range, device_kernels)
        entry.calls += 1
        entry.seconds += (gpu_us or event.cpu_time_total) * 1e-6
        entry.on_gpu = entry.on_gpu or gpu_us > 0
    return list(times.values())


def _device_time_inside(span, device_kernels) -> float:
    """Microseconds of GPU kernels that started inside `span`. Inductor synchronizes before and
    after each profiled CUDA kernel, so the kernels running inside its range are its own; this
    finds them where the profiler did not link them to the range (Triton launches through the
    driver, which Kineto may not correlate with the CPU op around them)."""
    return sum(k.elapsed_us() for k in device_kernels if span.start <= k.start <= span.end)
