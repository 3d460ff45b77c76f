"""The method of the GPU benchmarks (gpu_inductor.py, gpu_models.py): eager vs torch.compile vs
ours, each compiler timed in child processes of its own.

A benchmark script is a table of workload builders; `main(BUILDERS, WORKLOADS, __file__)` runs it.
Each workload runs in child processes, so one that crashes or hangs costs only its own row
(reported as failed, with the reason), a warm start really is a new process, and neither
compiler is timed in a process the other has compiled in (on the H200, our GPT-2 training
step took 17.8 ms timed before torch.compile ran in its process, 19.5-22.6 ms after):

    child "reference"  fresh cache directories: times eager and torch.compile (compile = the
                       first call, from nothing), then steady state
    child "ours"       same workload (same seed) in a new process: times our first call from
                       nothing, checks it against eager, then steady state, then eager's
                       steady state again ("vs eager, same process": the GPU's clock differs
                       between processes by a few percent, so rows where both run the same
                       kernels are compared within one process)
    child "warm"       same cache directories, new process: times our first call again (graph
                       and kernel caches hit; Triton's own cache too)

The first two children of every row run first; warm runs follow, in workload order, while
the time budget (--budget, seconds for the whole run) lasts: a row without "warm s" ran out of
it (or --phases left warm runs out: they are what a full run spends most on after compiles). A child is stopped when the budget ends. Steady-state times are medians of CUDA-event timings
(triton.testing.do_bench, which flushes L2 between runs); peak memory is
`torch.cuda.max_memory_allocated` over the first call and the timed calls ("call peak": over one
later call alone). Results: a JSON file
(--out), rewritten after every child, and a table on stdout. Options: --only NAME[,NAME],
--mode (our compile mode where a workload names none; torch.compile then runs in its default),
--options JSON (our compile options, e.g. '{"layout_optimization": true}', for A/B runs:
with --phases ours, only our side runs, each row with eager beside it in its process).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback

DEFAULT_BUDGET_S = 480


class Workload:
    """`step(target, *args)` runs one step calling `target`: `model` itself (eager) or a compiled
    version of it. Inference steps return the output; training steps run forward and backward and
    return the loss and a gradient, so the comparison with eager covers the backward graph too.

    mode:       the compile mode of both compilers for this row (None: default / --mode)
    new_sizes:  argument tuples at other sizes, called once each after the first call: their
                first-call seconds are reported, the steady state is timed at the last of them
    reset:      puts the model back in its first state (a stateful step, e.g. an optimizer's),
                called before eager's reference call and before the compiled first call
    """

    def __init__(self, step, model, args, bytes_moved=None, tolerance=5e-2, mode=None, new_sizes=(), reset=None):
        self.step, self.model, self.args = step, model, args
        self.bytes_moved, self.tolerance, self.mode = bytes_moved, tolerance, mode
        self.new_sizes, self.reset = list(new_sizes), reset


def call(target, *args):
    return target(*args)


def training_step(torch, model, loss_of):
    first = next(model.parameters())

    def step(target, *args):
        for p in model.parameters():
            p.grad = None
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_of(target, *args)
        loss.backward()
        return loss.detach(), first.grad

    return step


def inference(torch, output, autocast=False):
    def step(target, *args):
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            return output(target(*args))

    return step


# ----------------------------------------------------------------------------------- children


def _ours(model, mode, options=None):
    """Our compiled `model`, through compiler.compile (capture, then the inductor backend)."""
    import compiler

    # As torch.compile, ours takes a mode or options, not both ("default" included).
    return compiler.compile(model, backend="inductor", **({"options": options} if options else {"mode": mode}))


def _first_call_seconds(torch, fn, args):
    torch.cuda.synchronize()
    start = time.perf_counter()
    out = fn(*args)
    torch.cuda.synchronize()
    return time.perf_counter() - start, out


def _steady_ms(fn, args):
    from triton.testing import do_bench

    return do_bench(lambda: fn(*args), warmup=25, rep=100, return_mode="median")


def _max_error(torch, actual, expected) -> float:
    import torch.utils._pytree as pytree

    worst = 0.0
    for a, e in zip(pytree.tree_leaves(actual), pytree.tree_leaves(expected)):
        if isinstance(e, torch.Tensor):
            scale = e.float().abs().max().clamp_min(1.0)
            worst = max(worst, float(((a.float() - e.float()).abs().max() / scale).item()))
    return worst


def _detached(torch, value):
    import torch.utils._pytree as pytree

    return pytree.tree_map(lambda t: t.detach().clone() if isinstance(t, torch.Tensor) else t, value)


def _compile_and_time(torch, who, target, work, row):
    """First call, each new size's first call, then the steady state at the last size."""
    if work.reset:
        work.reset()
    torch.cuda.reset_peak_memory_stats()
    row[f"{who}_cold_s"], out = _first_call_seconds(torch, target, work.args)
    out = _detached(torch, out)
    args = work.args
    if work.new_sizes:
        row[f"{who}_new_size_first_call_s"] = []
        for args in work.new_sizes:
            seconds, _ = _first_call_seconds(torch, target, args)
            row[f"{who}_new_size_first_call_s"].append(round(seconds, 4))
    if who == "ours":
        _wait_for_native_guards(row)
    row[f"{who}_ms"] = _steady_ms(target, args)
    row[f"{who}_peak_GiB"] = torch.cuda.max_memory_allocated() / 2**30
    # One more call alone: its peak leaves out what the first call's compile and tuning held.
    torch.cuda.reset_peak_memory_stats()
    target(*args)
    torch.cuda.synchronize()
    row[f"{who}_call_peak_GiB"] = torch.cuda.max_memory_allocated() / 2**30
    return out


def _wait_for_native_guards(row) -> None:
    """Time the steady state with the guards' C++ helper loaded, as a long job runs: it is
    built in the background on a machine's first compile (~15 s), so without the wait a row
    early in a fresh machine's run would time the Python fallback."""
    import guards.native

    row["guards_native"] = "loaded" if guards.native.wait(120) is not None else guards.native.failure()


def child(builders, name: str, phase: str, mode: str, options: dict | None) -> dict:
    import torch

    torch.manual_seed(0)
    work = builders[name](torch)
    mode = work.mode or mode

    def runner(target):
        return lambda *a: work.step(target, *a)

    row: dict = {"workload": name}
    if phase == "warm":
        row["ours_warm_s"], _ = _first_call_seconds(torch, runner(_ours(work.model, mode, options)), work.args)
        return row
    eager = runner(work.model)
    if phase == "reference":
        expected = _compile_and_time(torch, "eager", eager, work, row)
        del row["eager_cold_s"]
        try:
            reference_mode = work.mode  # torch.compile in its default mode unless the row names one
            reference = runner(torch.compile(work.model, mode=reference_mode))
            actual = _compile_and_time(torch, "torch_compile", reference, work, row)
            # How far torch.compile itself is from eager: the scale of rounding differences.
            row["torch_compile_max_rel_error"] = _max_error(torch, actual, expected)
        except Exception as error:  # noqa: BLE001  (reported in the row)
            row["torch_compile_error"] = f"{type(error).__name__}: {error}"[:400]
    else:
        if work.reset:
            work.reset()
        expected = _detached(torch, eager(*work.args))
        try:
            actual = _compile_and_time(torch, "ours", runner(_ours(work.model, mode, options)), work, row)
            row["max_rel_error"] = _max_error(torch, actual, expected)
            # Eager again, in this process: the GPU's clock differs between processes by a few
            # percent, which decides rows where both run the same kernels.
            row["eager_ms_beside_ours"] = _steady_ms(eager, work.new_sizes[-1] if work.new_sizes else work.args)
            row["correct"] = row["max_rel_error"] <= work.tolerance
        except Exception as error:  # noqa: BLE001  (the row says why; eager and torch.compile numbers stay)
            traceback.print_exc()
            row["error"] = f"{type(error).__name__}: {error}"[:1500]
    if work.bytes_moved:
        for who in ("ours", "eager", "torch_compile"):
            if f"{who}_ms" in row:
                row[f"{who}_GBps"] = work.bytes_moved / row[f"{who}_ms"] / 1e6
    return row


# ----------------------------------------------------------------------------------- parent


def _run_child(script, name, phase, options, caches, timeout_s: float) -> dict:
    env = dict(os.environ, PTC_INDUCTOR_CACHE_DIR=caches["ours"], TORCHINDUCTOR_CACHE_DIR=caches["torch"],
               TRITON_CACHE_DIR=caches["triton"])
    env.pop("TRITON_INTERPRET", None)
    command = [sys.executable, script, "--child", name, "--phase", phase, "--mode", options.mode,
               "--options", options.options]
    started = time.monotonic()
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"workload": name, "error": f"{phase} run stopped at the time budget ({timeout_s:.0f}s left for it)"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-12:]
        return {"workload": name, "error": f"{phase} run failed: " + " | ".join(tail)[-1500:]}
    row = json.loads(lines[-1][len("RESULT "):])
    # The child's whole wall time (imports, model build, compiles, timings): what a row costs
    # the run's budget.
    row[f"{phase}_child_s"] = round(time.monotonic() - started, 1)
    return row


def table(rows) -> str:
    head = ["workload", "eager ms", "t.c. ms", "ours ms", "vs eager", "vs eager, same process", "vs t.c.", "GB/s", "peak GiB ours/t.c.",
            "call peak ours/t.c.", "cold s", "warm s", "ok"]
    lines = [" | ".join(head), " | ".join("-" * len(h) for h in head)]
    for row in rows:
        if "error" in row and "ours_ms" not in row:
            lines.append(f"{row['workload']} | FAILED: {row['error'][:300]}")
            continue
        lines.append(" | ".join([
            row["workload"], _fmt(row.get("eager_ms")), _fmt(row.get("torch_compile_ms")), _fmt(row.get("ours_ms")),
            _fmt(row.get("speedup_vs_eager"), "x"), _fmt(row.get("speedup_vs_eager_same_process"), "x"),
            _fmt(row.get("ratio_to_torch_compile"), "x"),
            _fmt(row.get("ours_GBps"), "", 0),
            f"{_fmt(row.get('ours_peak_GiB'), '', 2)}/{_fmt(row.get('torch_compile_peak_GiB'), '', 2)}",
            f"{_fmt(row.get('ours_call_peak_GiB'), '', 2)}/{_fmt(row.get('torch_compile_call_peak_GiB'), '', 2)}",
            _fmt(row.get("ours_cold_s")), _fmt(row.get("ours_warm_s")),
            "yes" if row.get("correct") else f"NO ({row.get('max_rel_error', float('nan')):.2g})",
        ]))
    return "\n".join(lines)


def _fmt(value, suffix="", digits=3) -> str:
    return "-" if value is None else f"{value:.{digits}f}{suffix}"


def main(builders: dict, workloads: list[str], script: str, description: str, default_out: str):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default=default_out, help="JSON results path (e.g. $OUT/NAME.json)")
    parser.add_argument("--only", default="", help="comma-separated workloads (default: all)")
    parser.add_argument("--mode", default="default", help="our compile mode where a workload names none")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S, help="seconds for the whole run")
    parser.add_argument("--options", default="{}", help="our compile options, as JSON")
    parser.add_argument("--phases", default="reference,ours,warm", help="which children run: reference (eager and "
                        "torch.compile), ours, warm (our first call again in a new process, caches hit)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--phase", default="reference", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        try:
            row = child(builders, options.child, options.phase, options.mode, json.loads(options.options) or None)
        except Exception as error:  # noqa: BLE001  (the parent reports it)
            traceback.print_exc()
            row = {"workload": options.child, "error": f"{type(error).__name__}: {error}"[:1500]}
        print("RESULT " + json.dumps(row), flush=True)
        return
    names = [n for n in options.only.split(",") if n] or workloads
    phases = set(options.phases.split(","))
    deadline = time.monotonic() + options.budget
    rows, caches = [], {}
    for name in names:
        left = deadline - time.monotonic()
        if left < 10:
            rows.append({"workload": name, "error": f"skipped: the time budget ({options.budget:.0f}s) ran out"})
            continue
        caches[name] = {k: tempfile.mkdtemp(prefix=f"gpu_bench_{name}_{k}_") for k in ("ours", "torch", "triton")}
        row = {"workload": name}
        if "reference" in phases:
            row = _run_child(script, name, "reference", options, caches[name], left)
        if "ours" in phases:
            ours = _run_child(script, name, "ours", options, caches[name], max(deadline - time.monotonic(), 1))
            if "error" in ours and "error" in row:
                ours["error"] = f"{row['error']} | {ours['error']}"
            row.update({k: v for k, v in ours.items() if k != "workload"})
        if "ours_ms" in row and "eager_ms_beside_ours" in row:
            row["speedup_vs_eager_same_process"] = row["eager_ms_beside_ours"] / row["ours_ms"]
        if "ours_ms" in row and "eager_ms" in row:
            row["speedup_vs_eager"] = row["eager_ms"] / row["ours_ms"]
            if "torch_compile_ms" in row:
                row["ratio_to_torch_compile"] = row["torch_compile_ms"] / row["ours_ms"]
        row["mode"], row["options"] = options.mode, json.loads(options.options)
        rows.append(row)
        print(json.dumps(row), flush=True)
        _write(options.out, rows)
    for row in rows:
        left = deadline - time.monotonic()
        if "warm" not in phases or "ours_ms" not in row or left < 10:
            continue
        warm = _run_child(script, row["workload"], "warm", options, caches[row["workload"]], left)
        if "error" in warm:
            warm["warm_error"] = warm.pop("error")
        row.update({k: v for k, v in warm.items() if k != "workload"})
        _write(options.out, rows)
    ratios = [r["ratio_to_torch_compile"] for r in rows if "ratio_to_torch_compile" in r]
    summary = {
        "geomean_ratio_to_torch_compile": math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None,
        "slower_than_eager": [r["workload"] for r in rows if r.get("speedup_vs_eager", 1) < 1],
        "slower_than_eager_same_process": [r["workload"] for r in rows
                                           if r.get("speedup_vs_eager_same_process", 1) < 1],
        "failed": [r["workload"] for r in rows if "ours_ms" not in r],
    }
    _write(options.out, rows, summary)
    print()
    print(table(rows))
    print(json.dumps(summary, indent=1))


def _write(path, rows, summary=None):
    import torch

    meta = {"gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None, "torch": torch.__version__,
            "commit": _commit()}
    with open(path, "w") as handle:
        json.dump({"meta": meta, "rows": rows, "summary": summary}, handle, indent=1)


def _commit() -> str | None:
    try:
        # "-dirty" where the tree differs from the commit (the GPU machine gets the working tree
        # over the session's first commit: the bare hash named the wrong code there).
        return subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or None
    except OSError:
        return None
