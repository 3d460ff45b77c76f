"""The `benchmark-dashboard` directive: tables and bar charts of benchmarks/results/*.json.

Each results file holds rows with a `workload` and times in milliseconds for eager,
torch.compile and ours (`eager_ms`, `torch_compile_ms`, `ours_ms`), and the first-call
compile times (`ours_cold_compile_s` or `ours_cold_s`, `torch_compile_cold_s`). CPU files
keep the rows under `results` and the machine at the top; GPU files under `rows` and `meta`.
The page is generated when the documentation is built, so it always shows the files as
committed; the charts are inline SVG (nothing fetched, no script).
"""

from __future__ import annotations

import html
import json
import math
import pathlib

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

RESULTS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "results"

# (file, title) in page order; a file missing from RESULTS is an error, so the page cannot
# silently lose a table.
FILES = (
    ("cpu_kernels.json", "CPU: memory-bound kernels"),
    ("cpu_mlp.json", "CPU: MLP inference and training step"),
    ("cpu_models.json", "CPU: models"),
    ("gpu_inductor.json", "GPU: kernels and models"),
    ("gpu_inductor_train.json", "GPU: training workloads"),
    ("gpu_models.json", "GPU: the wider model suite"),
)
COLORS = {"eager": "#9aa5b1", "torch.compile": "#e07b39", "ours": "#3b6fc4"}


def _rows(data: dict) -> list[dict]:
    return data.get("results") or data.get("rows") or []


def _machine(data: dict) -> str:
    meta = data.get("meta") or data
    parts = [f"{key}: {meta[key]}" for key in ("cpu", "gpu", "threads", "torch", "python", "commit", "machine") if key in meta]
    return "; ".join(str(p) for p in parts)


def _fmt(value, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


def _speedups(row: dict) -> dict[str, float | None]:
    eager = row.get("eager_ms")
    result = {}
    for name, key in (("eager", "eager_ms"), ("torch.compile", "torch_compile_ms"), ("ours", "ours_ms")):
        value = row.get(key)
        result[name] = eager / value if eager and value else None
    return result


def chart(rows: list[dict]) -> str:
    """Speedup over eager per workload: three horizontal bars each (eager is 1.0)."""
    bar, gap, label_width, width = 9, 10, 260, 620
    height = len(rows) * (3 * bar + gap) + 30
    top = max([s for row in rows for s in _speedups(row).values() if s] or [1.0])
    scale = (width - label_width - 60) / max(top, 1.0)
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' role='img' "
             "aria-label='speedup over eager per workload'>"]
    y = 10
    for row in rows:
        parts.append(f"<text x='0' y='{y + 2 * bar}' font-size='11'>{html.escape(str(row['workload']))[:40]}</text>")
        for i, (name, value) in enumerate(_speedups(row).items()):
            if value is None:
                continue
            w = max(value * scale, 1)
            parts.append(f"<rect x='{label_width}' y='{y + i * bar}' width='{w:.1f}' height='{bar - 1}' fill='{COLORS[name]}'/>")
            parts.append(f"<text x='{label_width + w + 4:.1f}' y='{y + i * bar + bar - 1}' font-size='9'>{value:.2f}x</text>")
        y += 3 * bar + gap
    x1 = label_width + scale
    parts.append(f"<line x1='{x1:.1f}' x2='{x1:.1f}' y1='0' y2='{y}' stroke='#333' stroke-dasharray='3,3'/>")
    legend = "".join(
        f"<rect x='{label_width + i * 110}' y='{y + 4}' width='10' height='10' fill='{c}'/>"
        f"<text x='{label_width + i * 110 + 14}' y='{y + 13}' font-size='11'>{n}</text>"
        for i, (n, c) in enumerate(COLORS.items())
    )
    parts.append(legend + "</svg>")
    return "".join(parts)


def table(rows: list[dict]) -> str:
    head = ("workload", "eager ms", "torch.compile ms", "ours ms", "ours vs eager", "ours vs torch.compile",
            "ours first compile s", "torch.compile first compile s")
    lines = ["<table class='docutils'><thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>"]
    for row in rows:
        speed = _speedups(row)
        ratio = row.get("ratio_to_torch_compile")
        cells = (
            html.escape(str(row["workload"])), _fmt(row.get("eager_ms")), _fmt(row.get("torch_compile_ms")),
            _fmt(row.get("ours_ms")), _fmt(speed["ours"]) + "x" if speed["ours"] else "—",
            _fmt(ratio) + "x" if ratio else "—",
            _fmt(row.get("ours_cold_compile_s", row.get("ours_cold_s")), 1),
            _fmt(row.get("torch_compile_cold_s"), 1),
        )
        lines.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    lines.append("</tbody></table>")
    return "".join(lines)


class BenchmarkDashboard(SphinxDirective):
    """`{benchmark-dashboard}`: one section per results file."""

    def run(self) -> list[nodes.Node]:
        out = []
        for name, title in FILES:
            path = RESULTS / name
            self.env.note_dependency(str(path))
            data = json.loads(path.read_text())
            rows = [r for r in _rows(data) if r.get("eager_ms") and r.get("ours_ms")]
            section = nodes.section(ids=[nodes.make_id(title)])
            section += nodes.title(text=title)
            section += nodes.paragraph(text=f"{_machine(data)} (benchmarks/results/{name})")
            section += nodes.raw("", chart(rows) + table(rows), format="html")
            failed = data.get("failed") or (data.get("summary") or {}).get("failed")
            if failed:
                section += nodes.paragraph(text=f"Failed: {failed}")
            out.append(section)
        return out


def setup(app):
    app.add_directive("benchmark-dashboard", BenchmarkDashboard)
    return {"parallel_read_safe": True, "version": "1"}
