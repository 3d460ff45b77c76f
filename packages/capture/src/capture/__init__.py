"""Capture: a symbolic CPython bytecode interpreter that turns Python functions and modules
into FX graphs with guards.

`optimize(fn_or_module, backend)` compiles a function or module (per-function cache of
guarded entries, recompiles, graph breaks with resume functions); `export(fn, args, kwargs)` captures
one graph for given inputs; `mark_dynamic(t, dim)` / `maybe_mark_dynamic` / `mark_static`
steer symbolic sizes; `disable` / `allow_in_graph` mark functions, `substitute_in_graph` /
`assume_constant_result` say how to trace one; `Unsupported` is what code capture cannot
trace raises (a graph break, or the error with `fullgraph=True`); `reset()` forgets every
compiled entry; `config` holds the settings, `stance` what compiled functions do on a call;
`logs` the log channels; `backends.eager` runs captured graphs as they are.
"""

__version__ = "0.1.0"

from . import backends, config, logs, stance
from .dynamic import mark_dynamic, mark_static, mark_unbacked, maybe_mark_dynamic
from .errors import CaptureError, Unsupported
from .export import ExportedProgram, ExportGuardError, export
from .markers import allow_in_graph, disable
from .numpy_wrapping import wrap_numpy
from .optimize import OptimizedModule, optimize
from .runtime import reset
from .stance import RecompileError
from .substitutes import assume_constant_result, nested_compile_region, substitute_in_graph

__all__ = [
    "CaptureError",
    "ExportGuardError",
    "ExportedProgram",
    "OptimizedModule",
    "RecompileError",
    "Unsupported",
    "allow_in_graph",
    "assume_constant_result",
    "backends",
    "config",
    "disable",
    "export",
    "logs",
    "mark_dynamic",
    "mark_unbacked",
    "mark_static",
    "maybe_mark_dynamic",
    "nested_compile_region",
    "optimize",
    "reset",
    "stance",
    "substitute_in_graph",
    "wrap_numpy",
]
