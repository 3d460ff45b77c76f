"""Where a GPU workload's time goes, kernel by kernel: eager, torch.compile and ours side by side
(issue 18 asks to close gaps kernel by kernel, against torch.compile's profile).

    PYTHONPATH=$(ls -d packages/*/src | tr '\\n' :) python benchmarks/gpu_profile.py mobilenetv3_infer \\
        [--top 15] [--steps 5] [--out $OUT/profile.txt] [--python]

Takes a workload of gpu_models.py, compiles it both ways in one process (ours first, so its
cache is cold as in the benchmark; timings here are for comparing kernels, not for the suite's
ratios), calls it at each of the workload's sizes (so dynamic_lengths is profiled dynamic, at
its last length, as the suite times it), runs `--steps` steps of each under torch.profiler and prints per compiler: CUDA time
per step, kernel launches per step, and the top kernels by total CUDA time with their count.
Kernel names are grouped by their family (our `pointwise_<hash>` kernels by kind, cuBLAS/cuDNN
by library), then listed one by one.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]  # see gpu_models.py
sys.path.append(_HERE)

from gpu_models import BUILDERS  # noqa: E402


LIBRARY_FAMILIES = [
    (r"gemm|cutlass|sm90_xmma|cublas|nvjet", "matmul (cuBLAS/CUTLASS)"),
    (r"conv|cudnn|implicit_convolve|xmma_fprop|dgrad|wgrad", "convolution (cuDNN)"),
    (r"flash|fmha|attention", "attention"),
    (r"elementwise|vectorized|reduce_kernel|CatArrayBatched|copy", "ATen native"),
]


def _family(name: str) -> str:
    if ours := re.match(r"(pointwise|persistent|looped|tiled|combo)_", name):
        return f"ours: {ours.group(1)}"
    if theirs := re.match(r"triton_(poi|per|red|tem)_", name):
        return f"torch.compile: {theirs.group(1)}"
    return next((family for pattern, family in LIBRARY_FAMILIES if re.search(pattern, name, re.IGNORECASE)), "other")


def _warm_up(fn, sizes) -> tuple:
    """Calls `fn` at each size in turn (a workload with new sizes goes dynamic, as in the
    suite), then twice more at the last: compiled, tuned and warm. Returns the last size."""
    for args in [*sizes, sizes[-1], sizes[-1]]:
        fn(*args)
    return sizes[-1]


def _profile(torch, fn, sizes, steps: int):
    from torch.profiler import ProfilerActivity, profile

    args = _warm_up(fn, sizes)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        fn(*args)
    torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - start) / steps * 1000
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            fn(*args)
        torch.cuda.synchronize()
    kernels = collections.Counter()
    counts = collections.Counter()
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            kernels[event.name] += event.device_time_total
            counts[event.name] += 1
    return wall_ms, kernels, counts


def _host_report(torch, fn, sizes, steps: int, top: int) -> str:
    """Host time per step of our compiled step, by function: the part a host-bound row pays."""
    import cProfile
    import io
    import pstats

    args = _warm_up(fn, sizes)
    torch.cuda.synchronize()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        fn(*args)
    profiler.disable()
    torch.cuda.synchronize()
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return f"== ours, host time over {steps} steps (cProfile)\n" + text.getvalue()


def _report(who: str, wall_ms: float, kernels, counts, steps: int, top: int) -> str:
    total = sum(kernels.values()) / steps / 1000
    lines = [
        f"== {who}: {wall_ms:.3f} ms per step (wall, without the profiler), {total:.3f} ms CUDA time per step, "
        f"{sum(counts.values()) / steps:.0f} kernels per step"
    ]
    families = collections.Counter()
    for name, us in kernels.items():
        families[_family(name)] += us
    for family, us in families.most_common():
        lines.append(f"   {us / steps / 1000:8.3f} ms  {family}")
    lines.append("   top kernels (ms per step, launches per step):")
    for name, us in kernels.most_common(top):
        lines.append(f"   {us / steps / 1000:8.3f} ms  x{counts[name] / steps:<4.0f} {name[:110]}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", choices=sorted(BUILDERS))
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--out", help="also write the report to this file")
    parser.add_argument(
        "--python",
        action="store_true",
        help="instead: where ours spends host time per step (cProfile, by cumulative time)",
    )
    parser.add_argument("--ours-only", action="store_true", help="profile ours alone")
    options = parser.parse_args()

    import torch

    import compiler

    torch.manual_seed(0)
    work = BUILDERS[options.workload](torch)
    runner = lambda target: lambda *a: work.step(target, *a)  # noqa: E731
    sizes = [work.args, *work.new_sizes]  # profiled at the last, as the suite times it
    targets = {
        "ours": runner(compiler.compile(work.model, backend="inductor", mode=work.mode or "default")),
        "torch.compile": runner(torch.compile(work.model, mode=work.mode)),
        "eager": runner(work.model),
    }
    if options.python or options.ours_only:
        targets = {"ours": targets["ours"]}
    sections = []
    for who, fn in targets.items():
        if options.python:
            sections.append(_host_report(torch, fn, sizes, options.steps, options.top))
            print(sections[-1], flush=True)
            continue
        if work.reset:
            work.reset()
        sections.append(_report(who, *_profile(torch, fn, sizes, options.steps), options.steps, options.top))
        print(sections[-1], flush=True)
    if options.out:
        with open(options.out, "w") as file:
            file.write(f"# {options.workload}\n" + "\n\n".join(sections) + "\n")


if __name__ == "__main__":
    main()
