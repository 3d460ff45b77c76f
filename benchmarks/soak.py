"""Soak: one process compiles and runs many distinct small functions and a few small models,
through recompiles (two shapes each: static, then a symbolic dimension) and `compiler.reset()`,
round after round, and reports what it holds after each round:

    RSS (MiB), open file descriptors, threads, cache entries and bytes on disk,
    leftover staging/trash folders, compiled results that differed from eager.

After the first (cold) round every compile is a disk-cache hit, so later rounds must hold
steady: RSS on a plateau, no new fds or threads, no new cache entries.

    python benchmarks/soak.py                        # 200 functions, 5 models, 4 rounds, inductor (C++)
    python benchmarks/soak.py --functions 40 --rounds 3 --backend aot_eager
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pathlib
import shutil
import sys
import tempfile
import threading
import time

# Run as a script, this folder comes first on sys.path, and benchmarks/guards.py would shadow
# the `guards` package that capture imports.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import torch  # noqa: E402
from torch import nn  # noqa: E402

UNARY = ["torch.sigmoid", "torch.tanh", "torch.relu", "torch.exp", "torch.sin", "torch.abs"]
REDUCE = ["sum", "amax", "mean"]


def distinct_functions(count: int) -> list:
    """`count` small functions with different code and constants (so different graphs and kernels)."""
    functions = []
    for k in range(count):
        unary, reduce = UNARY[k % len(UNARY)], REDUCE[(k // len(UNARY)) % len(REDUCE)]
        source = (
            f"def f{k}(x, y):\n"
            f"    h = {unary}(x * {1 + k / 100!r} + y)\n"
            f"    return h.{reduce}(-1) + {k}, (x @ y.T if {k % 4 == 0} else h * y)\n"
        )
        namespace = {"torch": torch}
        exec(compile(source, f"<soak function {k}>", "exec"), namespace)
        functions.append(namespace[f"f{k}"])
    return functions


def small_models() -> list[nn.Module]:
    torch.manual_seed(0)
    encoder = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
    return [
        nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16)),
        nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten()),
        nn.Sequential(nn.Linear(32, 32), encoder),
        nn.Sequential(nn.LayerNorm(16), nn.Linear(16, 16), nn.SiLU(), nn.Linear(16, 4)),
        nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16), nn.Softmax(-1)),
    ]


def model_input(index: int, batch: int) -> torch.Tensor:
    shapes = {0: (batch, 16), 1: (batch, 3, 8, 8), 2: (batch, 6, 32), 3: (batch, 16), 4: (batch, 16)}
    return torch.randn(*shapes[index])


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cache_usage(folder: pathlib.Path) -> dict:
    kinds = ("cpp", "triton", "graphs")
    entries = [p for kind in kinds for p in (folder / kind).glob("*") if not p.name.startswith(".")]
    leftovers = [p for p in folder.rglob(".*") if p.name.startswith((".staging-", ".trash-")) or p.suffix == ".tmp"]
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return {"entries": len(entries), "bytes": size, "leftovers": len(leftovers)}


def one_round(compiler, backend: str, functions: list, models: list) -> int:
    """Compile and run everything at two shapes against eager; returns the mismatches."""
    mismatches = 0
    for fn in functions:
        compiled = compiler.compile(fn, backend=backend)
        for n in (5, 9):
            x, y = torch.randn(n, 7), torch.randn(n, 7)
            for got, expected in zip(compiled(x, y), fn(x, y)):
                mismatches += not torch.allclose(got, expected, rtol=1e-4, atol=1e-4)
    with torch.no_grad():
        for index, model in enumerate(models):
            model.eval()
            compiled = compiler.compile(model, backend=backend)
            for batch in (2, 3):
                x = model_input(index, batch)
                mismatches += not torch.allclose(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    compiler.reset()
    return mismatches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--functions", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--backend", default="inductor")
    args = parser.parse_args()

    folder = pathlib.Path(tempfile.mkdtemp(prefix="ptc_soak_cache_"))
    os.environ["PTC_INDUCTOR_CACHE_DIR"] = str(folder)
    import compiler

    functions, models = distinct_functions(args.functions), small_models()
    rows = []
    for round_number in range(1, args.rounds + 1):
        start = time.perf_counter()
        mismatches = one_round(compiler, args.backend, functions, models)
        gc.collect()
        rows.append({
            "round": round_number,
            "seconds": round(time.perf_counter() - start, 1),
            "rss_mib": round(rss_mib(), 1),
            "fds": len(os.listdir("/proc/self/fd")),
            "threads": threading.active_count(),
            "os_threads": len(os.listdir("/proc/self/task")),
            **{f"cache_{k}": v for k, v in cache_usage(folder).items()},
            "mismatches": mismatches,
        })
        print(json.dumps(rows[-1]), flush=True)

    later = rows[1:]
    verdict = {
        "backend": args.backend, "functions": args.functions, "models": len(models), "rounds": args.rounds,
        "mismatches": sum(r["mismatches"] for r in rows),
        # Round 1 compiles from scratch; later rounds are warm and should hold everything steady.
        "rss_growth_after_round_2_mib": round(rows[-1]["rss_mib"] - rows[1]["rss_mib"], 1) if len(rows) > 2 else None,
        "fd_growth_after_round_1": max(r["fds"] for r in later) - rows[0]["fds"] if later else None,
        "thread_growth_after_round_1": max(r["os_threads"] for r in later) - rows[0]["os_threads"] if later else None,
        "cache_entry_growth_after_round_1": rows[-1]["cache_entries"] - rows[0]["cache_entries"] if later else None,
        "cache_leftovers": rows[-1]["cache_leftovers"],
    }
    print(json.dumps(verdict, indent=1))
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
