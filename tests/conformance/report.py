"""The conformance report: every corpus case through ours (compiler.compile) and the reference
(torch.compile), side by side per upstream source file, with our wrong results (and their
source, a ready repro) and our failures grouped by reason.

    python tests/conformance/report.py                      # eager backend, fullgraph False/True
    python tests/conformance/report.py --backends eager,aot_eager,inductor --workers 2
    python tests/conformance/report.py --impls ours --filter dict.

Writes benchmarks/results/conformance.md (`--out` to change; `--json FILE` keeps the raw results,
which `--from-json FILE` renders again without running anything).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import re
import sys
import time
import zlib
from dataclasses import asdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
RESULTS = os.path.join(HERE, "..", "..", "benchmarks", "results")

import torch
from corpus import all_cases
from runner import Column, Result, run_pairs


def normalized(reason: str) -> str:
    """A failure's reason with the parts that vary per case (addresses, tensor values, sizes
    in brackets, quoted names of the case's own locals) blanked, so that one bug is one group."""
    reason = re.sub(r"0x[0-9a-f]+", "0x…", reason)
    reason = re.sub(r"tensor\(\[.*", "tensor(…)", reason)
    reason = re.sub(r"f\.<locals>\.\w+", "f.<locals>.…", reason)
    # One mechanism, many names: group these by what is missing rather than by the name.
    reason = re.sub(r"constructing \w+, which has a custom __new__", "constructing <class>, which has a custom __new__", reason)
    reason = re.sub(r"call to _operator\.\w+,", "call to _operator.<function>,", reason)
    reason = re.sub(r"'SymNode' object has no attribute '\w+'", "'SymNode' object has no attribute <operator>", reason)
    return reason[:160]


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def render(cases, columns, results, elapsed: float, command: str = "", note: str = "") -> str:
    by_case = {(r.case, r.column): r for r in results}
    sources = sorted({c.source for c in cases})
    per_source = collections.defaultdict(list)
    for case in cases:
        per_source[case.source].append(case)
    lines = [
        "# Conformance corpus: ours vs torch.compile",
        "",
        (
            f"Generated {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC by `tests/conformance/report.py`"
            f" (torch {torch.__version__}, {len(cases)} cases{f', {elapsed:.0f} s' if elapsed else ''})."
        ),
        f"Command: `python tests/conformance/report.py {command}`" if command else "",
        note,
        (
            "Each case runs three calls (size n, size n with fresh values, another size) against eager;"
            " *pass* = same values, dtypes, input mutations, grads and exception types on all three."
        ),
        (
            "*wrong* = a silent wrong result (or a missing exception); *refused* = Unsupported"
            " (e.g. a graph break under fullgraph=True); *error* = another exception eager did not raise."
        ),
        "",
    ]
    pairs = sorted({(col.backend, col.fullgraph) for col in columns})
    impls = [impl for impl in ("ours", "torch") if any(col.impl == impl for col in columns)]
    for backend, fullgraph in pairs:
        cols = [Column(impl, backend, fullgraph) for impl in impls]
        # Results merged from runs over different subsets: each table covers the cases its columns ran.
        ran = [c for c in cases if all((c.name, col.label) in by_case for col in cols)]
        ran_names = {c.name for c in ran}
        lines += [f"## backend={backend}, fullgraph={fullgraph}", ""]
        if len(ran) != len(cases):
            lines += [f"{len(ran)} of the {len(cases)} cases (a deterministic subset).", ""]
        header = ["source", "cases"]
        for col in cols:
            header += [f"{col.impl} pass", f"{col.impl} wrong", f"{col.impl} graphs 1st call / all (ops)"]
        if len(cols) == 2:
            header.append("torch passes, ours not")
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        for source in sources + ["**all**"]:
            group = [c for c in (cases if source == "**all**" else per_source[source]) if c.name in ran_names]
            if not group:
                continue
            row = [source, str(len(group))]
            for col in cols:
                rs = [by_case[(c.name, col.label)] for c in group]
                passed = sum(r.outcome == "pass" for r in rs)
                wrong = sum(r.outcome == "wrong" for r in rs)
                first = sum(r.graphs_first_call for r in rs)
                graphs = sum(r.graphs for r in rs)
                ops = sum(r.ops for r in rs)
                row += [f"{passed} ({percent(passed, len(rs))})", str(wrong) if wrong else "", f"{first} / {graphs} ({ops})"]
            if len(cols) == 2:
                gap = sum(by_case[(c.name, cols[1].label)].outcome == "pass" and by_case[(c.name, cols[0].label)].outcome != "pass" for c in group)
                row.append(str(gap))
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")

    wrong = [r for r in results if r.outcome == "wrong" and r.column.startswith("ours/")]
    text = {c.name: c.text for c in cases}
    lines += ["## Wrong results under ours (top priority)", ""]
    if not wrong:
        lines += ["None.", ""]
    by_name = collections.defaultdict(list)
    for r in wrong:
        by_name[r.case].append(r)
    for name, rs in sorted(by_name.items()):
        cols = ", ".join(r.column.split("/", 1)[1] for r in rs)
        lines.append(f"- `{name}` ({rs[0].source}; {cols}): {rs[0].reason}")
        if text.get(name):
            lines += ["", "  ```python", *("  " + line for line in text[name].splitlines()), "  ```", ""]
    lines.append("")

    lines += ["## Our failures grouped by reason", "",
              "Refusals, errors and timeouts of ours, all columns, most frequent first (reason = first line of the exception).", ""]
    groups = collections.defaultdict(list)
    for r in results:
        if r.column.startswith("ours/") and r.outcome in ("refused", "error", "timeout"):
            groups[(r.outcome, normalized(r.reason))].append(r)
    lines.append("| count | outcome | reason | examples |")
    lines.append("|---|---|---|---|")
    for (outcome, reason), rs in sorted(groups.items(), key=lambda item: -len(item[1])):
        examples = ", ".join(sorted({f"`{r.case}`" for r in rs})[:4])
        reason_cell = reason.replace("|", "\\|")
        lines.append(f"| {len(rs)} | {outcome} | {reason_cell} | {examples} |")
    lines.append("")
    if any(col.impl == "torch" for col in columns):
        lines += ["## Where torch.compile itself fails", ""]
        ref = collections.Counter()
        for r in results:
            if r.column.startswith("torch/") and r.outcome != "pass":
                ref[(r.outcome, normalized(r.reason))] += 1
        lines.append("| count | outcome | reason |")
        lines.append("|---|---|---|")
        for (outcome, reason), count in ref.most_common(25):
            lines.append(f"| {count} | {outcome} | {reason.replace('|', chr(92) + '|')} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--impls", default="ours,torch")
    parser.add_argument("--backends", default="eager")
    parser.add_argument("--fullgraph", default="both", choices=["both", "true", "false"])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--timeout", type=int, default=20, help="seconds per case and column")
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    parser.add_argument("--subset", type=int, default=1, help="only the deterministic 1/N of the cases (by name hash)")
    parser.add_argument("--out", default=os.path.join(RESULTS, "conformance.md"))
    parser.add_argument("--json", help="also save every result to this file (one JSON object a line)")
    parser.add_argument("--from-json", help="re-render the report from results saved with --json, running nothing "
                        "(several files, comma-separated, are merged: e.g. runs of different backends and subsets)")
    parser.add_argument("--note", default="", help="a line for the report's header (how a merged report was run)")
    args = parser.parse_args()
    if args.from_json:
        results = []
        for path in args.from_json.split(","):
            with open(path) as f:
                results += [Result(**row) for row in json.load(f)]
        labels = list(dict.fromkeys(r.column for r in results))
        columns = [Column(impl, backend, mode == "fullgraph") for impl, backend, mode in (label.split("/") for label in labels)]
        names = {r.case for r in results}
        report = render([c for c in all_cases() if c.name in names], columns, results, 0.0, note=args.note)
        with open(args.out, "w") as f:
            f.write(report + "\n")
        print(report)
        return
    fullgraphs = {"both": (False, True), "true": (True,), "false": (False,)}[args.fullgraph]
    columns = [Column(impl, backend, fg) for backend in args.backends.split(",") for fg in fullgraphs for impl in args.impls.split(",")]
    cases = [c for c in all_cases() if args.filter in c.name and zlib.crc32(c.name.encode()) % args.subset == 0]
    pairs = [(case, column) for column in columns for case in cases]
    start = time.perf_counter()
    done = collections.Counter()

    def progress(result):
        done[result.column] += 1
        if done[result.column] % 250 == 0:
            print(f"{result.column}: {done[result.column]}/{len(cases)}", file=sys.stderr, flush=True)

    results = run_pairs(pairs, workers=args.workers, timeout_s=args.timeout, progress=progress)
    elapsed = time.perf_counter() - start
    report = render(cases, columns, results, elapsed, " ".join(sys.argv[1:]), note=args.note)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(report + "\n")
    if args.json:
        with open(args.json, "w") as f:
            # One result a line, without the per-case timings.
            rows = [{k: v for k, v in asdict(r).items() if k not in ("seconds", "details")} for r in results]
            f.write("[\n" + ",\n".join(json.dumps(row) for row in rows) + "\n]\n")
    print(report)


if __name__ == "__main__":
    main()
