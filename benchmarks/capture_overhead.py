"""Capture overhead, side by side in one process:

1. per-call time of a compiled `x + 1` on a small CPU tensor (guard check + compiled graph
   call), against eager and against torch.compile(backend="eager");
2. first-call (capture) time of HF GPT-2 against torch.compile(backend="eager").

    python benchmarks/capture_overhead.py            # GPT-2 with its default config (12 layers)
    python benchmarks/capture_overhead.py --layers 2 # a quicker GPT-2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

# Run as a script, this folder comes first on sys.path, and benchmarks/guards.py would shadow
# the `guards` package that capture imports.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import torch  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def per_call_us(fn, x, *, repeat=7, number=20000) -> float:
    for _ in range(100):
        fn(x)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn(x)
        samples.append((time.perf_counter() - start) / number * 1e6)
    return statistics.median(samples)


def add_one(x):
    return x + 1


def overhead_table() -> dict:
    import compiler

    x = torch.randn(8)
    ours = compiler.compile(add_one, backend="eager")
    theirs = torch.compile(add_one, backend="eager")
    ours(x), theirs(x)
    results = {
        "eager": per_call_us(add_one, x),
        "ours (compiler.compile, eager backend)": per_call_us(ours, x),
        "torch.compile(backend='eager')": per_call_us(theirs, x),
    }
    cache = ours._capture_cache
    guard = cache.entries[0].guard
    results["ours: guard function alone"] = per_call_us(guard, x)
    return results


def gpt2_first_call(layers: int | None) -> dict:
    import transformers

    import compiler

    config = transformers.GPT2Config() if layers is None else transformers.GPT2Config(n_layer=layers)
    ids = torch.randint(0, config.vocab_size, (1, 128))
    results = {}
    for name, make in [
        ("ours (compiler.compile, eager backend)", lambda m: compiler.compile(m, backend="eager", fullgraph=True)),
        ("torch.compile(backend='eager')", lambda m: torch.compile(m, backend="eager", fullgraph=True)),
    ]:
        torch.manual_seed(0)
        model = transformers.GPT2LMHeadModel(config).eval()
        compiled = make(model)
        with torch.no_grad():
            start = time.perf_counter()
            compiled(ids, use_cache=False)
            first = time.perf_counter() - start
            warm = _median_call_s(lambda: compiled(ids, use_cache=False))
        results[name] = {"first call s": first, "warm call s": warm, "capture + compile s": first - warm}
    with torch.no_grad():
        warm = _median_call_s(lambda: model(ids, use_cache=False))
    results["eager"] = {"first call s": None, "warm call s": warm, "capture + compile s": None}
    return results


def _median_call_s(call, repeat: int = 3) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=None, help="GPT-2 layers (default: GPT2Config's 12)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    args = parser.parse_args()
    torch.set_num_threads(2)
    overhead = overhead_table()
    gpt2 = gpt2_first_call(args.layers)
    if args.json:
        print(json.dumps({"x + 1 per call (us)": overhead, "GPT-2 1x128": gpt2}, indent=2))
        return
    print("compiled `x + 1`, torch.randn(8), CPU: microseconds per call")
    for name, us in overhead.items():
        print(f"  {name:45s} {us:8.2f}")
    print(f"\nGPT-2 ({args.layers or 12} layers) forward 1x128, no_grad: seconds")
    print(f"  {'':45s} {'first call':>11s} {'warm call':>10s} {'first - warm':>13s}")
    for name, times in gpt2.items():
        cells = [times["first call s"], times["warm call s"], times["capture + compile s"]]
        print(f"  {name:45s} " + " ".join(f"{'-' if v is None else f'{v:.3f}':>{w}s}" for v, w in zip(cells, (11, 10, 13))))


if __name__ == "__main__":
    main()
