"""Where a compiled CPU model spends its time: each wrapper step (generated kernel or aten call)
timed separately, summed over calls, largest first; plus where compile time goes.

    HF_HUB_OFFLINE=1 python benchmarks/cpu_profile.py vit [--top 25] [--calls 5] [--source]

Every compiled graph's wrapper is re-executed with a timer around each statement of `call`
(the kernels are the same .so files), so the numbers include ctypes and allocation overhead
as the real run pays them. `--source` prints the C++ of the eight slowest generated kernels.
"""

from __future__ import annotations

import argparse
import ast
import collections
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from cpu_harness import THREADS  # noqa: E402  (sets threads and a fresh cache dir)
from cpu_models import MODELS  # noqa: E402  (also drops this folder from sys.path)

import inductor  # noqa: E402, F401  (imported for inductor.compile_fx below)

compile_fx = sys.modules["inductor.compile_fx"]  # the module; `inductor.compile_fx` is the function


class _Timed(ast.NodeTransformer):
    """Wrap each top-level statement of `call` in `_t = _clock(); stmt; _record(k, _t)`."""

    def __init__(self):
        self.labels: list[str] = []

    def visit_FunctionDef(self, node):
        if node.name != "call":
            return node
        body = []
        for stmt in node.body:
            if isinstance(stmt, ast.Return):
                body.append(stmt)
                continue
            k = len(self.labels)
            self.labels.append(ast.unparse(stmt).split("\n")[0])
            body += ast.parse("_t = _clock()").body + [stmt] + ast.parse(f"_record({k}, _t)").body
        node.body = body
        return node


class ProfiledGraph:
    """A CompiledGraph's wrapper re-executed with per-statement timers."""

    def __init__(self, compiled, totals):
        transformer = _Timed()
        tree = ast.fix_missing_locations(transformer.visit(ast.parse(compiled.source)))
        self.labels = transformer.labels
        self.kernel_sources = compiled.kernel_sources
        module = {"constants": compiled._call.__globals__["constants"], "_clock": time.perf_counter}

        def record(k, t0):
            totals[(id(self), k)] += time.perf_counter() - t0

        module["_record"] = record
        exec(compile(tree, "<profiled wrapper>", "exec"), module)
        self._call = module["call"]

    def __call__(self, *args):
        return self._call(list(args))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--source", action="store_true")
    args = parser.parse_args()

    import compiler

    totals: dict = collections.defaultdict(float)
    graphs: list[ProfiledGraph] = []
    phases: dict = collections.defaultdict(float)
    original = compile_fx.compile_aten_graph

    def profiled_compile(gm, example_inputs, **kwargs):
        t0 = time.perf_counter()
        compiled = original(gm, example_inputs, **kwargs)
        phases["inductor (lower+schedule+codegen+g++)"] += time.perf_counter() - t0
        graph = ProfiledGraph(compiled, totals)
        graphs.append(graph)
        return graph

    compile_fx.compile_aten_graph = profiled_compile
    name, build = MODELS[args.model]
    torch.manual_seed(0)
    model, inputs = build()
    compiled = compiler.compile(model, backend="inductor")
    t0 = time.perf_counter()
    with torch.no_grad():
        compiled(**inputs)
    first = time.perf_counter() - t0
    print(f"{name}: first call {first:.2f}s, of which inductor {phases['inductor (lower+schedule+codegen+g++)']:.2f}s; "
          f"{len(graphs)} graph(s), {THREADS} threads")
    totals.clear()
    t0 = time.perf_counter()
    with torch.no_grad():
        for _ in range(args.calls):
            compiled(**inputs)
    wall = (time.perf_counter() - t0) / args.calls * 1e3
    by_graph = {id(g): g for g in graphs}
    rows = sorted(totals.items(), key=lambda kv: -kv[1])
    steps_ms = sum(totals.values()) / args.calls * 1e3
    print(f"per call: {wall:.1f} ms wall, {steps_ms:.1f} ms in wrapper steps\n")
    kinds = collections.defaultdict(float)
    for (gid, k), seconds in rows:
        label = by_graph[gid].labels[k]
        kinds[_kind(label)] += seconds
    print("by kind: " + ", ".join(f"{kind} {s / args.calls * 1e3:.1f} ms" for kind, s in
                                  sorted(kinds.items(), key=lambda kv: -kv[1])))
    print()
    for (gid, k), seconds in rows[: args.top]:
        label = by_graph[gid].labels[k]
        print(f"{seconds / args.calls * 1e3:9.2f} ms  {label[:150]}")
    if args.source:
        shown = set()
        kernel_rows = [(gid, k) for (gid, k), _ in rows if by_graph[gid].labels[k].startswith("kernel")]
        for gid, k in kernel_rows[:8]:
            label = by_graph[gid].labels[k]
            kernel = label.split("(")[0].strip()
            source = by_graph[gid].kernel_sources.get(kernel)
            if source and source not in shown:
                shown.add(source)
                print(f"\n// ---- {kernel} ----\n{source}")


def _kind(label: str) -> str:
    if label.startswith("kernel"):
        return "generated kernels"
    if "torch.ops." in label:
        return label.split("torch.ops.")[1].split("(")[0]
    if "torch.empty_strided" in label:
        return "allocation"
    return "other"


if __name__ == "__main__":
    main()
