"""Counters of what inductor did in this process, for reports such as `compiler.demo`.

`snapshot()` returns them as a dict; `reset()` zeroes them.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class Metrics:
    graphs_compiled: int = 0      # ATen graphs lowered and generated in this process
    graph_cache_hits: int = 0     # ATen graphs loaded from the on-disk graph cache instead
    kernels_generated: int = 0    # fused kernels in the graphs generated (C++ or Triton)
    codegen_seconds: float = 0.0  # lowering + scheduling + code generation + kernel builds
    # Triton launches: block-size configs a kernel took at a new size bucket that it had not run
    # with before (on a GPU each is a binary compiled), and kernels whose candidates were timed.
    # After a kernel's first launch both stay flat at new sizes (runtime/triton_launch.py).
    kernel_configs_added: int = 0
    kernel_block_timings: int = 0
    # ATen graphs handed back to run as they are, uncompiled (a symbolic float input, arithmetic
    # on a symbolic number that lowering has no rule for): each is a performance gap.
    graphs_run_uncompiled: int = 0


counters = Metrics()


def snapshot() -> dict:
    return dataclasses.asdict(counters)


def reset() -> None:
    global counters
    for field in dataclasses.fields(Metrics):
        setattr(counters, field.name, field.default)
