"""Capture: a symbolic CPython bytecode interpreter that turns Python functions and modules
into FX graphs with guards.

`optimize(fn_or_module, backend)` compiles a function or module (per-function cache of
guarded entries, recompiles); `export(fn, *args)` captures one graph for given inputs;
`mark_dynamic(t, dim)` makes a size symbolic; `Unsupported` is raised for code capture
cannot trace; `reset()` forgets every compiled
entry; `config` holds the settings;
`backends.eager` runs captured graphs as they are.
"""

__version__ = "0.1.0"

from . import backends, config
from .dynamic import mark_dynamic
from .errors import CaptureError, Unsupported
from .export import ExportedProgram, ExportGuardError, export
from .optimize import OptimizedModule, optimize
from .runtime import reset

__all__ = [
    "CaptureError",
    "ExportGuardError",
    "ExportedProgram",
    "OptimizedModule",
    "Unsupported",
    "backends",
    "config",
    "export",
    "mark_dynamic",
    "optimize",
    "reset",
]
