"""Shared timing for the CPU benchmarks: eager vs torch.compile vs ours, in one process.

Each workload is a module and its inputs. Ours is `inductor.compile_fx` fed the graph of
`torch.fx.symbolic_trace` (capture is not wired in yet); torch.compile is the reference.
Cold compile: an empty cache directory; warm: the same compile again with the cache filled
(torch.compile after `torch._dynamo.reset()`, ours on a freshly traced graph).
"""

from __future__ import annotations

import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

THREADS = 2
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="torchinductor_bench_")
os.environ["PTC_INDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="ptc_inductor_bench_")

import torch  # noqa: E402
import torch.fx  # noqa: E402

import inductor  # noqa: E402

torch.set_num_threads(THREADS)
RESULTS = pathlib.Path(__file__).parent / "results"


def traced(module) -> torch.fx.GraphModule:
    """The module's graph, returning a tuple as backends' graphs do."""
    gm = torch.fx.symbolic_trace(module)
    output = next(n for n in gm.graph.nodes if n.op == "output")
    output.args = ((output.args[0],),)
    gm.recompile()
    return gm


def median_ms(fn, *, warmup=3, repeat=15, min_seconds=1.0) -> float:
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < repeat or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
        if len(times) >= 200:
            break
    return statistics.median(times)


def _ours(module, inputs):
    def compile_once():
        gm = traced(module)
        t0 = time.perf_counter()
        compiled = inductor.compile_fx(gm, list(inputs))
        return compiled, time.perf_counter() - t0

    compiled, cold = compile_once()
    compiled, warm = compile_once()
    return compiled, cold, warm


def _torch_compile(module, inputs, step):
    import torch._dynamo

    def compile_once():
        torch._dynamo.reset()
        compiled = torch.compile(module)
        t0 = time.perf_counter()
        step(compiled, inputs)
        return compiled, time.perf_counter() - t0

    compiled, cold = compile_once()
    compiled, warm = compile_once()
    return compiled, cold, warm


def run_workload(name, module, inputs, *, training=False):
    """Time one workload three ways and check ours against eager."""
    if training:
        def step(fn, xs):
            out = fn(*xs)
            out = out[0] if isinstance(out, (tuple, list)) else out
            out.sum().backward()
            return out
    else:
        def step(fn, xs):
            with torch.no_grad():
                out = fn(*xs)
            return out[0] if isinstance(out, (tuple, list)) else out

    ours, ours_cold, ours_warm = _ours(module, inputs)
    expected = step(module, inputs)
    actual = step(ours, inputs)
    torch.testing.assert_close(actual, expected, rtol=1e-3, atol=1e-3)
    reference, ref_cold, ref_warm = _torch_compile(module, inputs, step)
    eager_ms = median_ms(lambda: step(module, inputs))
    ref_ms = median_ms(lambda: step(reference, inputs))
    ours_ms = median_ms(lambda: step(ours, inputs))
    return {
        "workload": name, "eager_ms": eager_ms, "torch_compile_ms": ref_ms, "ours_ms": ours_ms,
        "speedup_vs_eager": eager_ms / ours_ms, "ratio_to_torch_compile": ref_ms / ours_ms,
        "ours_cold_compile_s": ours_cold, "ours_warm_compile_s": ours_warm,
        "torch_compile_cold_s": ref_cold, "torch_compile_warm_s": ref_warm,
    }


def report(results, filename, failed=()):
    RESULTS.mkdir(exist_ok=True)
    meta = {"threads": THREADS, "torch": torch.__version__, "python": sys.version.split()[0],
            "cpu": _cpu_name(), "results": results, "failed": list(failed)}
    (RESULTS / filename).write_text(json.dumps(meta, indent=2) + "\n")
    header = (f"{'workload':<34}{'eager ms':>10}{'t.c ms':>10}{'ours ms':>10}{'vs eager':>10}{'vs t.c':>8}"
              f"{'cold s':>8}{'warm s':>8}{'t.c cold':>10}{'t.c warm':>10}")
    print(header)
    for r in results:
        print(f"{r['workload']:<34}{r['eager_ms']:>10.2f}{r['torch_compile_ms']:>10.2f}{r['ours_ms']:>10.2f}"
              f"{r['speedup_vs_eager']:>9.2f}x{r['ratio_to_torch_compile']:>7.2f}x{r['ours_cold_compile_s']:>8.2f}"
              f"{r['ours_warm_compile_s']:>8.2f}{r['torch_compile_cold_s']:>10.2f}{r['torch_compile_warm_s']:>10.2f}")
    for r in failed:
        print(f"{r['workload']:<34}FAILED: {r['error']}")
    print(f"(vs t.c = torch.compile time / ours; >1 means ours is faster; {THREADS} threads; JSON in {RESULTS / filename})")


def _cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"
