"""A one-file HTML compile report: everything compiling did, readable without any tool.

Turned on three ways:

* `compiler.report(fn, "report.html")(*args)`: compile `fn` afresh, call it, write the report
  (every further call of the returned function adds to it and writes it again);
* `compiler.compile(fn, report="report.html")`: the same for an ordinary compiled function;
* `COMPILER_REPORT=dir`: one file per process, `dir/compile-report-<pid>.html`, written at exit.

The report listens to the log channels (compiler.logs.tap, so nothing is printed) and to the
graphs handed to the backend, and shows: a summary; the compile time per phase (capture,
backend / aot_autograd, lowering, scheduling, codegen, kernel builds); every captured graph
with its input shapes, each operation's output shape and the user's source line; graph breaks
with the user's stack; guards of each cache entry; recompiles and why; the transformed
bytecode (compiled entries) and resume functions; the ATen graphs before and after
partitioning; the generated wrapper and kernel sources; then the whole log in order. The
page is static HTML with inline CSS: no script, nothing fetched from the network.

With `profile_kernels=True` (or `COMPILER_REPORT_PROFILE=1`), each call that compiled something
is followed by a few more calls of the compiled function with the same arguments under
torch.profiler (kernel_profile.py), and the report shows each generated kernel's time, bytes and
bandwidth next to its source. Those calls repeat what the function does: profile functions without
side effects (inference, a loss), not a training step.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import html
import logging
import os
import pathlib
import re
import threading
import time
from typing import Any, Callable

import torch

from . import logs
from .kernel_profile import RUNS, KernelTime, profile_kernels

ENV_VAR = "COMPILER_REPORT"
PROFILE_ENV_VAR = "COMPILER_REPORT_PROFILE"


@dataclasses.dataclass
class Event:
    channel: str
    message: str
    seconds_since_start: float
    phase: str | None = None
    subject: str = ""
    kind: str | None = None  # "start", "end" or "step" for compile_time records
    seconds: float | None = None
    thread: int = 0


@dataclasses.dataclass
class GraphRecord:
    function: str
    backend: str
    listing: str  # the graph as readable lines with shapes and source lines


class Collector(logging.Handler):
    """Receives the channels' records and the backend's graphs while a report is on."""

    def __init__(self, profile: bool | None = None):
        super().__init__(level=logging.DEBUG)
        self.events: list[Event] = []
        self.graphs: list[GraphRecord] = []
        # Per-kernel time (kernel_profile.py): asked for here, else by COMPILER_REPORT_PROFILE.
        self.profile = os.environ.get(PROFILE_ENV_VAR, "") not in ("", "0") if profile is None else profile
        self.captures = 0  # functions captured so far: a call that captured also compiled
        self.kernel_times: dict[tuple, KernelTime] = {}
        self.profile_notes: list[str] = []
        self.started = time.perf_counter()
        self._events_lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        channel = record.name.removeprefix("compiler.")
        if channel not in logs.CHANNELS:
            return
        event = Event(
            channel, record.getMessage(), record.created - self._wall_start, getattr(record, "phase", None),
            getattr(record, "subject", ""), getattr(record, "event", None), getattr(record, "seconds", None), record.thread,
        )
        with self._events_lock:
            self.events.append(event)
            self.captures += channel == "compile_time" and event.phase == "capture" and event.kind == "end"

    @functools.cached_property
    def _wall_start(self) -> float:
        return time.time() - (time.perf_counter() - self.started)

    def start(self) -> None:
        self._wall_start  # noqa: B018 -- fixed before the first record arrives
        _ACTIVE.append(self)
        logs.tap(self)

    def stop(self) -> None:
        logs.untap(self)
        if self in _ACTIVE:
            _ACTIVE.remove(self)

    def add_kernel_times(self, fn: Callable, args: tuple, kwargs: dict) -> None:
        try:
            measured = profile_kernels(fn, args, kwargs)
        except Exception as error:  # the user's call succeeded; the report says why it has no times
            measured = f"not measured: calling the function again raised {type(error).__name__}: {error}"
        if isinstance(measured, str):
            self.profile_notes.append(measured)
            return
        for time_ in measured:
            key = (time_.graph, time_.kernel, time_.nbytes)
            total = self.kernel_times.setdefault(key, KernelTime(*key, on_gpu=time_.on_gpu))
            total.calls += time_.calls
            total.seconds += time_.seconds

    def write(self, path: str | os.PathLike) -> pathlib.Path:
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(self), encoding="utf-8")
        return path


_ACTIVE: list[Collector] = []


# --- the backend side: graphs with shapes and source lines ---------------------------------------

def reporting_backend(backend: Callable, name: str) -> Callable:
    """`backend` timed as the "backend" phase, its graphs recorded for active reports."""
    from capture import logs as capture_logs

    def compile_graph(gm: torch.fx.GraphModule, example_inputs):
        with capture_logs.phase("backend", name):
            compiled = backend(gm, example_inputs)
        if not _ACTIVE:
            return compiled
        record = GraphRecord(_graph_function(gm), name, graph_listing(gm))
        for collector in list(_ACTIVE):
            collector.graphs.append(record)
        return compiled

    for attribute in ("parse_options",):
        if hasattr(backend, attribute):
            setattr(compile_graph, attribute, getattr(backend, attribute))
    return compile_graph


def _graph_function(gm) -> str:
    for node in gm.graph.nodes:
        stack = node.meta.get("stack")
        if stack:
            return stack[-1].function
    return "?"


def _describe_value(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        return f"{dtype}[{', '.join(str(s) for s in value.shape)}]"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_describe_value(v) for v in value) + ")"
    if isinstance(value, (torch.SymInt, torch.SymFloat, int, float, bool)):
        return f"{type(value).__name__} {value}"
    return type(value).__name__ if value is not None else ""


def _target_name(node: torch.fx.Node) -> str:
    target = node.target
    if isinstance(target, str):
        return target if node.op != "call_method" else f".{target}"
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", str(target))
    return f"{module}.{name}" if module.startswith("torch") and module != "torch._ops.aten" else name


def graph_listing(gm: torch.fx.GraphModule) -> str:
    """One line per node: `name = op(args)  # shape   <- file:line: source`."""
    lines = []
    for node in gm.graph.nodes:
        value = node.meta.get("example_value", node.meta.get("val"))
        shape = _describe_value(value)
        if node.op == "placeholder":
            text = f"input {node.name}"
        elif node.op == "output":
            text = f"return {node.args[0]}"
        elif node.op == "get_attr":
            text = f"{node.name} = self.{node.target}"
        else:
            arguments = [repr(a) if not isinstance(a, torch.fx.Node) else a.name for a in node.args]
            arguments += [f"{k}={v.name if isinstance(v, torch.fx.Node) else repr(v)}" for k, v in node.kwargs.items()]
            text = f"{node.name} = {_target_name(node)}({', '.join(arguments)})"
        stack = node.meta.get("stack")
        where = ""
        if stack:
            loc = stack[-1]
            where = f"   <- {os.path.basename(loc.filename)}:{loc.lineno}: {loc.source_line}"
        comment = f"  # {shape}" if shape else ""
        lines.append(f"{text}{comment}{where}")
    return "\n".join(lines)


# --- phases --------------------------------------------------------------------------------------

PHASE_ORDER = ("capture", "backend", "lowering", "scheduling", "codegen", "kernel builds")
PHASE_LABELS = {
    "capture": "capture (bytecode interpretation, guards)",
    "backend": "backend outside inductor's phases (aot_autograd: tracing, partitioning)",
    "lowering": "inductor lowering",
    "scheduling": "inductor scheduling and fusion",
    "codegen": "inductor code generation",
    "kernel builds": "kernel builds (C++ compiler)",
}


def phase_times(events: list[Event]) -> dict[str, float]:
    """Seconds spent in each phase itself (a phase nested in another is subtracted from it)."""
    own: dict[str, float] = {}
    open_phases: dict[int, list[list]] = {}  # per thread: [phase, child seconds]
    for event in events:
        if event.channel != "compile_time" or event.kind not in ("start", "end"):
            continue
        stack = open_phases.setdefault(event.thread, [])
        if event.kind == "start":
            stack.append([event.phase, 0.0])
            continue
        while stack and stack[-1][0] != event.phase:
            stack.pop()  # a phase left by an exception has no end record
        if not stack:
            continue
        _, children = stack.pop()
        own[event.phase] = own.get(event.phase, 0.0) + max(event.seconds - children, 0.0)
        if stack:
            stack[-1][1] += event.seconds
    return own


# --- rendering -----------------------------------------------------------------------------------

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 75em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
pre { background: #f6f8fa; padding: .8em; overflow-x: auto; font-size: .85em; line-height: 1.35; }
details { margin: .4em 0; } summary { cursor: pointer; font-weight: 600; }
table { border-collapse: collapse; } td, th { padding: .25em .8em; border-bottom: 1px solid #eee; text-align: left; }
.bar { background: #4a7bd0; height: .8em; display: inline-block; }
.channel { color: #777; font-size: .8em; } nav a { margin-right: 1em; }
"""

# (section id, title, channels, what the section is) in page order.
SECTIONS = (
    ("graph-breaks", "Graph breaks", ("graph_breaks",), "Each graph break: the reason, the user's stack, a hint."),
    ("recompiles", "Recompiles", ("recompiles", "dynamic"), "Why a function was captured again: the guard of each entry that failed."),
    ("guards", "Guards", ("guards",), "The guard function of each cache entry, as Python."),
    ("bytecode", "Transformed bytecode and resume functions", ("bytecode",),
     "Each compiled entry as the Python that replaces the function, and each resume function's listing."),
    ("aot-graphs", "ATen graphs (aot_autograd)", ("aot_graphs",), "The joint graph before partitioning, forward and backward after."),
    ("output-code", "Generated code and kernels", ("output_code",), "The wrapper and the kernel sources inductor generated."),
    ("notes", "Notes", ("perf_hints", "inductor", "capture"), "Inductor's and capture's notes."),
)


def _pre(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


def _details(summary: str, body: str, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{html.escape(summary)}</summary>{body}</details>"


def _first_line(text: str, limit: int = 140) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def render(collector: Collector) -> str:
    events = list(collector.events)
    phases = phase_times(events)
    count = lambda channel: sum(1 for e in events if e.channel == channel)  # noqa: E731
    captures = [e for e in events if e.channel == "compile_time" and e.phase == "capture" and e.kind == "end"]
    kernels = sum(int(e.subject.split()[0]) for e in events if e.phase == "codegen" and e.kind == "end" and e.subject[:1].isdigit())
    summary_rows = [
        ("functions captured (frames, resume functions included)", len(captures)),
        ("graphs compiled", len(collector.graphs)),
        ("graph breaks", count("graph_breaks")),
        ("recompiles", sum(1 for e in events if e.channel == "recompiles" and e.message.startswith("recompiling"))),
        ("kernels generated", kernels),
        ("compile time (s)", f"{sum(phases.values()):.3f}"),
    ]
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Compile report</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Compile report</h1><p>process {os.getpid()}, written {time.strftime('%Y-%m-%d %H:%M:%S')}</p>",
        "<nav><a href='#summary'>Summary</a><a href='#phases'>Compile time</a><a href='#graphs'>Graphs</a>"
        + "".join(f"<a href='#{sid}'>{html.escape(title)}</a>" + ("<a href='#kernel-time'>Kernel time</a>" if sid == "output-code" else "")
                  for sid, title, *_ in SECTIONS)
        + "<a href='#log'>Log</a></nav>",
        "<h2 id='summary'>Summary</h2><table>"
        + "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(str(v))}</td></tr>" for k, v in summary_rows)
        + "</table>",
        _phases_section(phases),
        _graphs_section(collector.graphs),
    ]
    for sid, title, channels, what in SECTIONS:
        chosen = [e for e in events if e.channel in channels]
        body = "".join(
            _details(_first_line(e.message), _pre(e.message), open_=sid == "graph-breaks")
            + (_kernel_table(collector, e.message) if sid == "output-code" else "")
            for e in chosen
        ) or "<p>None.</p>"
        parts.append(f"<h2 id='{sid}'>{html.escape(title)} ({len(chosen)})</h2><p>{html.escape(what)}</p>{body}")
        if sid == "output-code":
            parts.append(_kernel_time_section(collector))
    log_lines = "\n".join(f"{e.seconds_since_start:9.3f}s [{e.channel}] {_first_line(e.message, 200)}" for e in events)
    parts.append(f"<h2 id='log'>Log</h2><p>Every record, in order (first lines).</p>{_pre(log_lines)}")
    parts.append("</body></html>")
    return "\n".join(parts)


def _phases_section(phases: dict[str, float]) -> str:
    total = sum(phases.values()) or 1.0
    rows = []
    for phase in PHASE_ORDER:
        seconds = phases.get(phase, 0.0)
        width = int(300 * seconds / total)
        rows.append(
            f"<tr><td>{html.escape(PHASE_LABELS[phase])}</td><td>{seconds:.3f} s</td>"
            f"<td><span class='bar' style='width:{width}px'></span></td></tr>"
        )
    return (
        "<h2 id='phases'>Compile time per phase</h2><p>Seconds spent in each phase itself, summed over"
        " every compile (a nested phase is not counted in its parent).</p>"
        f"<table><tr><th>phase</th><th>time</th><th></th></tr>{''.join(rows)}</table>"
    )


# The output_code channel names each graph's cache folder, .../graphs/<key>/wrapper.py; kernel
# ranges name the graph by the key's first digits (inductor/runtime/profiling.py).
_GRAPH_FOLDER = re.compile(r"graphs/([0-9a-f]+)/wrapper\.py")
_KERNEL_COLUMNS = "<tr><th>graph</th><th>kernel</th><th>calls</th><th>time per call</th><th>bytes per call</th><th>bandwidth</th><th>share</th></tr>"


def _kernel_rows(times: list[KernelTime], total: float) -> str:
    rows = []
    for k in sorted(times, key=lambda k: -k.seconds):
        clock = "GPU" if k.on_gpu else "wall"
        rows.append(
            f"<tr><td>{k.graph}</td><td>{html.escape(k.kernel)}</td><td>{k.calls}</td>"
            f"<td>{k.seconds_per_call * 1e6:.1f} us ({clock})</td><td>{k.nbytes:,}</td>"
            f"<td>{k.bandwidth / 1e9:.3g} GB/s</td><td>{100 * k.seconds / total:.0f}%</td></tr>"
        )
    return f"<table class='kernels'>{_KERNEL_COLUMNS}{''.join(rows)}</table>"


def _kernel_table(collector: Collector, message: str) -> str:
    """The measured times of the kernels of the graph an output_code record shows."""
    found = _GRAPH_FOLDER.search(message)
    if not collector.kernel_times or found is None:
        return ""
    graph = found.group(1)
    times = [k for k in collector.kernel_times.values() if graph.startswith(k.graph)]
    if not times:
        return "<p class='channel'>No kernel of this graph ran while profiled.</p>"
    return _kernel_rows(times, sum(k.seconds for k in collector.kernel_times.values()) or 1.0)


def _kernel_time_section(collector: Collector) -> str:
    times = list(collector.kernel_times.values())
    heading = f"<h2 id='kernel-time'>Kernel time ({len(times)})</h2>"
    if not collector.profile:
        return heading + (
            f"<p>Not measured: pass <code>profile_kernels=True</code> to <code>compiler.report</code> or set"
            f" <code>{PROFILE_ENV_VAR}=1</code>.</p>"
        )
    what = (
        f"<p>Each generated kernel, from {RUNS} calls under torch.profiler after each call that compiled:"
        " time per call (GPU time where the profiler saw the kernel run on a GPU, else the call's wall time),"
        " the bytes of the distinct buffers it takes, and those bytes per second (a lower bound on the"
        " bandwidth it reached). Extern ops (matmuls run by ATen) are not listed.</p>"
    )
    notes = "".join(f"<p>{html.escape(n)}</p>" for n in dict.fromkeys(collector.profile_notes))
    if not times:
        return heading + what + notes + (
            "<p>No generated kernel ran while profiled (a graph run by ATen without compiling, or CUDA"
            " graphs, whose replays run kernels outside these ranges).</p>"
        )
    return heading + what + notes + _kernel_rows(times, sum(k.seconds for k in times) or 1.0)


def _graphs_section(graphs: list[GraphRecord]) -> str:
    body = "".join(
        _details(f"graph {i} of {g.function} (backend {g.backend})", _pre(g.listing), open_=True)
        for i, g in enumerate(graphs, 1)
    ) or "<p>None.</p>"
    return (
        f"<h2 id='graphs'>Graphs ({len(graphs)})</h2><p>Each graph handed to the backend: its inputs,"
        f" each operation with its output's dtype and shape and the user's source line.</p>{body}"
    )


# --- the ways to turn it on ----------------------------------------------------------------------

def report(fn: Any, path: str | os.PathLike = "compile-report.html", *, profile_kernels: bool | None = None,
           **compile_options) -> Callable:
    """Returns a function that calls `fn` compiled (afresh, with `compile_options` as for
    `compiler.compile`) and writes the compile report to `path` after each call; its calls
    add to one report, so calling it with a new shape shows the recompile.

    `profile_kernels=True` (default: `COMPILER_REPORT_PROFILE=1`): after each call that compiled,
    call the compiled function a few more times with the same arguments under torch.profiler and
    show each generated kernel's time, bytes and bandwidth (only for functions without side effects)."""
    from .api import compile as compile_

    return reported(compile_(fn, **compile_options), path, profile_kernels)


def reported(compiled: Callable, path: str | os.PathLike, profile_kernels: bool | None = None) -> Callable:
    """`compiled` (a function or compiled module) collecting into one report at `path`."""
    collector = Collector(profile_kernels)

    def around(inner, args, kwargs):
        collector.start()
        try:
            captured = collector.captures
            result = inner(*args, **kwargs)
        finally:
            collector.stop()
            collector.write(path)
        if collector.profile and collector.captures > captured:
            collector.add_kernel_times(inner, args, kwargs)
            collector.write(path)
        return result

    return _calls_through(compiled, around)


def _calls_through(compiled: Callable, around: Callable) -> Callable:
    """`compiled` whose calls run as `around(the compiled call, args, kwargs)`."""
    inner = compiled.forward if isinstance(compiled, torch.nn.Module) else compiled

    def call(*args, **kwargs):
        return around(inner, args, kwargs)

    if isinstance(compiled, torch.nn.Module):
        compiled.forward = call  # the compiled module's calls go through the report
        return compiled
    functools.update_wrapper(call, compiled)
    return call


_PROCESS_REPORT: list[Collector] = []  # COMPILER_REPORT's collector, once started


def start_from_environment() -> None:
    """COMPILER_REPORT=dir: collect for the whole process, write at exit (called on import)."""
    folder = os.environ.get(ENV_VAR)
    if not folder:
        return
    collector = Collector()
    collector.start()
    _PROCESS_REPORT.append(collector)
    atexit.register(lambda: collector.write(pathlib.Path(folder) / f"compile-report-{os.getpid()}.html"))


def profiled_for_process_report(compiled: Callable) -> Callable:
    """With COMPILER_REPORT and COMPILER_REPORT_PROFILE set: `compiled`, each call that compiled
    followed by profiled calls whose kernel times go to the process's report."""
    if not _PROCESS_REPORT or not _PROCESS_REPORT[0].profile:
        return compiled
    collector = _PROCESS_REPORT[0]

    def around(inner, args, kwargs):
        captured = collector.captures
        result = inner(*args, **kwargs)
        if collector.captures > captured:
            collector.add_kernel_times(inner, args, kwargs)
        return result

    return _calls_through(compiled, around)
