"""DDP on one GPU (issue 21): does splitting the compiled graph at DDP's gradient buckets cost
anything? A training step (forward, backward, AdamW step) of a ~570 MB GPT-2 (4 layers of
width 1280, random weights, bf16 autocast) under DistributedDataParallel with world size 1
(NCCL), eager vs torch.compile vs ours split at the buckets vs ours whole
(`capture.config.optimize_ddp = False`), beside the same three without DDP as the baseline.

    PYTHONPATH=$(ls -d packages/*/src | tr '\\n' :) python benchmarks/gpu_ddp.py --out $OUT/ddp.json
    ... --device cpu --tiny --backend aot_eager --out /tmp/ddp.json   (smoke test: gloo, a tiny model)

Options: --model mlp (a deep MLP of 537 MB instead), --only ours (skip the eager and
torch.compile child), --iters/--warmup, --bucket-cap-mb (DDP's, default 25), --backend.

Each compiler runs in a child process of its own (gpu_harness.py's reason: neither is timed in
a process the other compiled in), with fresh cache folders; each child initializes its own
process group of one rank (file:// rendezvous). Every variant starts from the same weights and
trains on the same tokens: "correct" compares its first 3 losses and its parameters after
them with eager's (relative to their size, bf16 tolerance). Times: median of --iters steps after
--warmup (CUDA events on the GPU, the wall clock on the CPU). "graphs": how many graphs the
backend compiled (the pieces of a split graph each count); "buckets": the pieces of ours.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

# Python puts this script's folder first on sys.path, where benchmarks/guards.py would shadow
# our `guards` package (compiler imports it): look our packages up in site-packages instead,
# and the harness up by its path.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.append(_HERE)

from gpu_harness import _fmt, _max_error, _write  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
CHECKED_STEPS = 3
# Which child times which variant: (name, compiler, wrapped in DDP).
CHILDREN = {
    "reference": [("eager", "eager", False), ("eager_ddp", "eager", True),
                  ("torch_compile", "torch", False), ("torch_compile_ddp", "torch", True)],
    "ours": [("ours", "ours", False), ("ours_ddp_split", "ours", True), ("ours_ddp_whole", "ours_whole", True)],
}  # fmt: skip


# ----------------------------------------------------------------------------------- the model


def build(torch, options):
    """(model, tokens, loss_of(model, tokens)): GPT-2 (or a deep MLP with --model mlp)."""
    torch.manual_seed(0)
    device = options.device
    if options.model == "mlp":
        width, depth, rows = (512, 4, 16) if options.tiny else (4096, 8, 4096)  # 8 x 16M params: 537 MB
        model = DeepMLP(torch, width, depth).to(device)
        x = torch.randn(rows, width, device=device)
        return model, x, lambda target, x: target(x).float().square().mean()
    from transformers import GPT2Config, GPT2LMHeadModel

    if options.tiny:
        config = GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=256, n_positions=64)  # 6.8 MB
        shape = (2, 16)
    else:  # 4 x 19.7M in the blocks + 64.3M tied embedding: 143M parameters, 573 MB
        config = GPT2Config(n_layer=4, n_embd=1280, n_head=20, n_positions=1024)
        shape = (8, 512)
    config.resid_pdrop = config.embd_pdrop = config.attn_pdrop = 0.0
    model = GPT2LMHeadModel(config).to(device)
    ids = torch.randint(0, config.vocab_size, shape, device=device)
    return model, ids, lambda target, ids: target(input_ids=ids, labels=ids, use_cache=False).loss


def DeepMLP(torch, width: int, depth: int):
    """Linear-GELU layers. Not an nn.Sequential: torch.compile leaves a DDP-wrapped Sequential
    uncompiled (after DDP's forward breaks its graph, Sequential.forward is a frame of a torch
    file, which Dynamo skips): 0 graphs."""

    class DeepMLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(depth))

        def forward(self, x):
            for layer in self.layers:
                x = torch.nn.functional.gelu(layer(x))
            return x

    return DeepMLP()


def train_steps(torch, options, target, model, tokens, loss_of):
    """A function running one training step of `target` (a wrapper of `model`), returning the loss."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    autocast = torch.autocast(options.device, dtype=torch.bfloat16, enabled=options.device == "cuda")

    def step():
        with autocast:
            loss = loss_of(target, tokens)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    return step


# ----------------------------------------------------------------------------------- a child


class Counting:
    """A backend that counts the graphs it is handed (each piece of a split graph is one)."""

    def __init__(self, backend):
        self.backend, self.graphs = backend, 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return self.backend(gm, example_inputs)


def _torch_backend(name):
    if name == "inductor":
        from torch._inductor.compile_fx import compile_fx

        return compile_fx
    from torch._dynamo.backends.registry import lookup_backend

    return lookup_backend(name)


def _compiled(torch, compiler_name, target, options):
    """(compiled target, its counting backend, where ours records its bucket splits)."""
    if compiler_name == "eager":
        return target, None, None
    if compiler_name == "torch":
        torch._dynamo.reset()
        counting = Counting(_torch_backend(options.backend))
        return torch.compile(target, backend=counting), counting, None
    import capture
    import compiler
    from compiler.backends import lookup_backend

    capture.config.optimize_ddp = compiler_name == "ours"
    counting = Counting(lookup_backend(options.backend))
    compiled = compiler.compile(target, backend=counting)
    return compiled, counting, compiled._cache.compilation.graph_splits


def _median_ms(torch, options, step) -> float:
    for _ in range(options.warmup):
        step()
    times = []
    for _ in range(options.iters):
        if options.device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            begin = time.perf_counter()
            step()
            times.append((time.perf_counter() - begin) * 1e3)
    return statistics.median(times)


def _sync(torch, options):
    if options.device == "cuda":
        torch.cuda.synchronize()


def _variant(torch, options, name, compiler_name, ddp, base, tokens, loss_of, expected) -> dict:
    from torch.nn.parallel import DistributedDataParallel as DDP

    model = copy.deepcopy(base)
    target = model
    if ddp:
        device_ids = [0] if options.device == "cuda" else None
        target = DDP(model, device_ids=device_ids, bucket_cap_mb=options.bucket_cap_mb)
    compiled, counting, splits = _compiled(torch, compiler_name, target, options)
    step = train_steps(torch, options, compiled, model, tokens, loss_of)
    row = {"workload": name, "compiler": compiler_name, "ddp": ddp}
    _sync(torch, options)
    begin = time.perf_counter()
    losses = [step()]
    _sync(torch, options)
    row["first_step_s"] = time.perf_counter() - begin
    losses += [step() for _ in range(CHECKED_STEPS - 1)]
    state = (losses, [p.detach().clone() for p in model.parameters()])
    if expected is not None:
        row["max_rel_error"] = _max_error(torch, state, expected)
        row["correct"] = row["max_rel_error"] <= options.tolerance
    row["ms"] = _median_ms(torch, options, step)
    if counting is not None:
        row["graphs"] = counting.graphs
    if splits:
        row["buckets"] = [len(split.buckets) for split in splits]
    if options.device == "cuda":
        row["peak_GiB"] = torch.cuda.max_memory_allocated() / 2**30
        torch.cuda.reset_peak_memory_stats()
    return row, state


def child(options) -> list[dict]:
    import torch
    import torch.distributed as dist

    if options.device == "cuda":
        torch.cuda.set_device(0)
    else:
        torch.set_num_threads(1)  # a smoke run on a shared CPU: 2 threads' spinning made a step 15x slower
    folder = tempfile.mkdtemp(prefix="gpu_ddp_rendezvous_")
    dist.init_process_group("nccl" if options.device == "cuda" else "gloo", init_method=f"file://{folder}/rendezvous",
                            rank=0, world_size=1)
    try:
        base, tokens, loss_of = build(torch, options)
        rows = []
        # Eager without DDP is the reference of every variant, in each child.
        _, expected = _variant(torch, options, "eager", "eager", False, base, tokens, loss_of, None)
        for name, compiler_name, ddp in CHILDREN[options.child]:
            try:
                row, _ = _variant(torch, options, name, compiler_name, ddp, base, tokens, loss_of, expected)
            except Exception as error:  # noqa: BLE001  (the row says why; the others still run)
                traceback.print_exc()
                row = {"workload": name, "error": f"{type(error).__name__}: {error}"[:1500]}
            rows.append(row)
            print("RESULT " + json.dumps(row), flush=True)
        return rows
    finally:
        dist.destroy_process_group()


# ----------------------------------------------------------------------------------- the parent


def _run_child(options, which: str, caches: dict, timeout_s: float) -> list[dict]:
    env = dict(os.environ, PTC_INDUCTOR_CACHE_DIR=caches["ours"], TORCHINDUCTOR_CACHE_DIR=caches["torch"],
               TRITON_CACHE_DIR=caches["triton"])
    if options.device == "cuda":
        env.pop("TRITON_INTERPRET", None)
    command = [sys.executable, os.path.abspath(__file__), "--child", which, *_forwarded(options)]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as stopped:
        done = subprocess.CompletedProcess(command, -1, stopped.stdout or "", "")
        done.stderr = f"stopped at the time budget ({timeout_s:.0f}s left for it)"
    if isinstance(done.stdout, bytes):
        done.stdout = done.stdout.decode(errors="replace")
    rows = [json.loads(line[len("RESULT "):]) for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    finished = {row["workload"] for row in rows}
    tail = " | ".join((done.stderr or done.stdout or "").strip().splitlines()[-12:])[-1500:]
    for name, _, _ in CHILDREN[which]:
        if name not in finished:
            rows.append({"workload": name, "error": f"{which} child failed: {tail}"})
    return rows


def _forwarded(options) -> list[str]:
    forwarded = ["--device", options.device, "--model", options.model, "--backend", options.backend,
                 "--warmup", str(options.warmup), "--iters", str(options.iters), "--bucket-cap-mb",
                 str(options.bucket_cap_mb), "--tolerance", str(options.tolerance)]
    return forwarded + (["--tiny"] if options.tiny else [])


def add_ratios(rows: list[dict]) -> dict:
    """ratio_to_eager / ratio_to_torch_compile (their ms over this row's: above 1 is faster)
    against the row of the same wrapping (DDP or not); a summary of what the split costs."""
    by_name = {row["workload"]: row for row in rows}
    for row in rows:
        if "ms" not in row:
            continue
        suffix = "_ddp" if row.get("ddp") else ""
        for key, reference in (("ratio_to_eager", f"eager{suffix}"), ("ratio_to_torch_compile", f"torch_compile{suffix}")):
            if "ms" in by_name.get(reference, {}):
                row[key] = by_name[reference]["ms"] / row["ms"]

    def ratio(a, b):
        return by_name[a]["ms"] / by_name[b]["ms"] if "ms" in by_name.get(a, {}) and "ms" in by_name.get(b, {}) else None

    return {
        "split_over_whole": ratio("ours_ddp_split", "ours_ddp_whole"),
        "ours_ddp_split_over_ours": ratio("ours_ddp_split", "ours"),
        "torch_compile_ddp_over_torch_compile": ratio("torch_compile_ddp", "torch_compile"),
        "incorrect": [r["workload"] for r in rows if r.get("correct") is False],
        "failed": [r["workload"] for r in rows if "ms" not in r],
    }


def table(rows) -> str:
    head = ["workload", "ms", "vs eager", "vs t.c.", "graphs", "buckets", "first step s", "ok"]
    lines = [" | ".join(head), " | ".join("-" * len(h) for h in head)]
    for row in rows:
        if "ms" not in row:
            lines.append(f"{row['workload']} | FAILED: {row.get('error', '')[:300]}")
            continue
        ok = "-" if "correct" not in row else "yes" if row["correct"] else f"NO ({row['max_rel_error']:.2g})"
        lines.append(" | ".join([row["workload"], _fmt(row["ms"]), _fmt(row.get("ratio_to_eager"), "x"),
                                 _fmt(row.get("ratio_to_torch_compile"), "x"), str(row.get("graphs", "-")),
                                 str(row.get("buckets", "-")), _fmt(row.get("first_step_s"), "", 1), ok]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="gpu_ddp.json", help="JSON results path (e.g. $OUT/ddp.json)")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: gloo, for a smoke test")
    parser.add_argument("--tiny", action="store_true", help="a tiny model (smoke test)")
    parser.add_argument("--model", default="gpt2", choices=["gpt2", "mlp"])
    parser.add_argument("--backend", default="inductor", help="both compilers' backend (aot_eager for a quick CPU run)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, default=20)
    # torch.compile's DDP optimizer asserts that no bucket is smaller than DDP's first (1 MB).
    parser.add_argument("--bucket-cap-mb", type=float, default=None, help="DDP's bucket_cap_mb (default: 25; --tiny: 1)")
    parser.add_argument("--tolerance", type=float, default=None, help="largest relative error counted correct")
    parser.add_argument("--budget", type=float, default=420, help="seconds for the whole run")
    parser.add_argument("--only", default=",".join(CHILDREN), help="which children run: reference (eager, "
                        "torch.compile), ours")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.bucket_cap_mb is None:
        options.bucket_cap_mb = 1.0 if options.tiny else 25.0
    if options.tolerance is None:
        options.tolerance = 5e-2 if options.device == "cuda" else 1e-4  # bf16 autocast on the GPU only
    if options.child:
        child(options)
        return
    deadline = time.monotonic() + options.budget
    rows = []
    for which in options.only.split(","):
        caches = {k: tempfile.mkdtemp(prefix=f"gpu_ddp_{which}_{k}_") for k in ("ours", "torch", "triton")}
        rows += _run_child(options, which, caches, max(deadline - time.monotonic(), 10))
        _write(options.out, rows)
    summary = add_ratios(rows)
    summary["setup"] = {k: v for k, v in vars(options).items() if k not in ("out", "child", "budget")}
    _write(options.out, rows, summary)
    print(table(rows))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
