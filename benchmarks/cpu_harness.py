"""Shared timing for the CPU benchmarks: eager vs torch.compile vs ours, in one process.

Each workload is a module and its inputs. Ours is `inductor.compile_fx` fed the graph of
`torch.fx.symbolic_trace` (capture is not wired in yet); torch.compile is the reference.
Cold compile: an empty cache directory; warm: the same compile again with the cache filled
(torch.compile after `torch._dynamo.reset()`, ours on a freshly traced graph).

Timing is interleaved: each round runs eager, torch.compile and ours once each, and each
reports its median over rounds, so a load change on a shared machine hits all three alike.
`BENCH_THREADS` overrides the thread count (2).
"""

from __future__ import annotations

import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

THREADS = int(os.environ.get("BENCH_THREADS", "2"))
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


def interleaved_medians(fns: dict, *, warmup=2, rounds=15, min_seconds=3.0, max_rounds=200) -> dict:
    """{name: median ms} for each zero-argument fn, timed in alternating rounds."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    times = {name: [] for name in fns}
    start = time.perf_counter()
    done = 0
    while done < max_rounds and (done < rounds or time.perf_counter() - start < min_seconds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) * 1e3)
        done += 1
    return {name: statistics.median(ts) for name, ts in times.items()}


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
    medians = interleaved_medians({"eager": lambda: step(module, inputs), "torch.compile": lambda: step(reference, inputs),
                                   "ours": lambda: step(ours, inputs)})
    eager_ms, ref_ms, ours_ms = medians["eager"], medians["torch.compile"], medians["ours"]
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
