"""Capture: a symbolic CPython bytecode interpreter that turns Python functions and modules
into FX graphs with guards.

`optimize(fn_or_module, backend)` compiles a function or module (per-function cache of
guarded entries, recompiles, graph breaks with resume functions); `export(fn, args, kwargs)` captures
one graph for given inputs; `mark_dynamic(t, dim)` / `mark_static(t, dim)` steer symbolic
sizes; `disable` / `allow_in_graph` mark functions; `Unsupported` is what code capture cannot
trace raises (a graph break, or the error with `fullgraph=True`); `reset()` forgets every
compiled entry; `config` holds the settings; `backends.eager` runs captured graphs as they are.
"""

__version__ = "0.1.0"

from . import backends, config
from .dynamic import mark_dynamic, mark_static
from .errors import CaptureError, Unsupported
from .export import ExportedProgram, ExportGuardError, export
from .markers import allow_in_graph, disable
from .optimize import OptimizedModule, optimize
from .runtime import reset

__all__ = [
    "CaptureError",
    "ExportGuardError",
    "ExportedProgram",
    "OptimizedModule",
    "Unsupported",
    "allow_in_graph",
    "backends",
    "config",
    "disable",
    "export",
    "mark_dynamic",
    "mark_static",
    "optimize",
    "reset",
]
