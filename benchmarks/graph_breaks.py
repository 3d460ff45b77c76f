"""Graph breaks side by side: for each kind of break (tests/graph_breaks/break_kinds.py), the
graphs and breaks of one call through compiler.compile and through torch.compile (both with a
counting eager backend), the graphs after 8 calls on fresh inputs (values read from tensors,
such as .item()'s, change every call: a count that grows with the calls is a recompile per
value), and the per-call time of the compiled function once warm, beside
eager. `--gpt2` adds HF GPT-2 (2 layers, train mode) with a print and an .item() in each
block.

    python benchmarks/graph_breaks.py [--gpt2]

Writes benchmarks/results/graph_breaks.json.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Run as a script, this folder comes first on sys.path, and benchmarks/guards.py would shadow
# the `guards` package that capture imports.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
sys.path.insert(0, os.path.join(HERE, "..", "tests", "graph_breaks"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
import torch._dynamo  # noqa: E402  (the reference we compare against)
from torch._dynamo.utils import counters  # noqa: E402

import compiler  # noqa: E402
from break_kinds import KINDS  # noqa: E402


def quiet(fn, *args, **kwargs):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            return exc


def counting(graphs):
    return lambda gm, example_inputs: graphs.append(gm) or gm.forward


def per_call_us(fn, args, number=200) -> float:
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(number):
            quiet(fn, *args)
        samples.append((time.perf_counter() - start) / number * 1e6)
    return statistics.median(samples)


def measure(name, fn, make_args, *, time_calls=True, calls=8):
    args = make_args()
    ours: list = []
    compiled = compiler.compile(fn, backend=counting(ours))
    quiet(compiled, *args)
    ours_graphs = len(ours)
    explained = quiet(compiler.explain(fn), *args)
    ours_breaks = None if isinstance(explained, Exception) else explained.graph_break_count
    torch._dynamo.reset()
    counters.clear()
    theirs: list = []
    reference = torch.compile(fn, backend=counting(theirs))
    quiet(reference, *args)
    row = {
        "kind": name,
        "ours_graphs": ours_graphs,
        "ours_breaks": ours_breaks,
        "torch_compile_graphs": len(theirs),
        "torch_compile_breaks": sum(counters["graph_break"].values()),
    }
    for _ in range(calls - 1):
        fresh = make_args()
        quiet(compiled, *fresh)
        quiet(reference, *fresh)
    row[f"ours_graphs_after_{calls}_calls"] = len(ours)
    row[f"torch_compile_graphs_after_{calls}_calls"] = len(theirs)
    if time_calls:
        row["eager_us"] = per_call_us(fn, args)
        row["ours_us"] = per_call_us(compiled, args)
        row["torch_compile_us"] = per_call_us(reference, args)
    return row


def gpt2_row():
    import transformers
    from transformers.models.gpt2 import modeling_gpt2

    original = modeling_gpt2.GPT2Block.forward

    def forward(self, hidden_states, *args, **kwargs):
        print("block input", tuple(hidden_states.shape))
        scale = hidden_states.detach().abs().mean().item()
        return original(self, hidden_states * (1.0 + 0.0 * scale), *args, **kwargs)

    modeling_gpt2.GPT2Block.forward = forward
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=128, n_positions=64)
    model = transformers.GPT2LMHeadModel(config).train()
    input_ids = torch.randint(0, 128, (2, 16))

    def call(ids):
        return model(input_ids=ids, use_cache=False).logits

    return measure("GPT-2 (print + .item() per block)", call, lambda: (input_ids,), time_calls=False, calls=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpt2", action="store_true", help="add the GPT-2 row (about 30 s)")
    options = parser.parse_args()
    rows = [measure(kind.name, kind.fn, kind.make_args) for kind in KINDS]
    if options.gpt2:
        rows.append(gpt2_row())
    header = (
        f"{'break kind':40} {'ours':>12} {'torch.compile':>14} {'n calls: ours/t.c':>18} "
        f"{'eager us':>9} {'ours us':>9} {'t.c us':>9}"
    )
    print(header)
    for row in rows:
        ours = f"{row['ours_graphs']}g/{'-' if row['ours_breaks'] is None else row['ours_breaks']}b"
        theirs = f"{row['torch_compile_graphs']}g/{row['torch_compile_breaks']}b"
        after = [v for k, v in row.items() if "_after_" in k]
        calls = next(k for k in row if k.startswith("ours_graphs_after_")).split("_")[-2]
        repeated = f"{calls}: {after[0]}g/{after[1]}g"
        times = "".join(f" {row[k]:9.1f}" if k in row else f" {'-':>9}" for k in ("eager_us", "ours_us", "torch_compile_us"))
        print(f"{row['kind']:40} {ours:>12} {theirs:>14} {repeated:>18}{times}")
    path = os.path.join(HERE, "results", "graph_breaks.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(rows, f, indent=2)
    print(f"(g = graphs, b = graph breaks, n calls = graphs after n calls on fresh inputs, us = microseconds per warm call; written to {path})")


if __name__ == "__main__":
    main()
