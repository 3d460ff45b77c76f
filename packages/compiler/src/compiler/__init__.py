"""The public compiler namespace: torch.compile and torch.compiler, built from our packages.

`compile(model, backend=...)` is torch.compile; `register_backend`, `list_backends`,
`set_default_backend` manage backends; `reset` forgets compiled code; `set_stance` says what
compiled functions do on a call (force eager, fail on recompile, ...); `config` holds the
settings a user may change;
`mark_dynamic` / `maybe_mark_dynamic` / `mark_static` steer symbolic sizes; `disable`,
`allow_in_graph`, `substitute_in_graph`, `assume_constant_result` say how to treat a function
(`wrap_numpy` makes a NumPy function one of tensors; `nested_compile_region` is accepted and
inlined);
`is_compiling` / `is_dynamo_compiling` / `is_exporting` tell code whether it is being traced;
`explain(fn)(*args)` reports graphs and graph breaks; `report(fn, "r.html")(*args)` (or
`COMPILER_REPORT=dir`) writes a one-file HTML compile report; `set_logs` (or `COMPILER_LOGS=...`)
turns on log channels; `save_cache_artifacts` / `load_cache_artifacts` move the compiled-code cache.
"""

__version__ = "0.1.0"

from capture import (
    RecompileError,
    allow_in_graph,
    assume_constant_result,
    disable,
    mark_dynamic,
    mark_static,
    maybe_mark_dynamic,
    nested_compile_region,
    substitute_in_graph,
    wrap_numpy,
)

from . import logs, progress, report as _report_module
from .api import (
    compile,
    cudagraph_mark_step_begin,
    is_compiling,
    is_dynamo_compiling,
    is_exporting,
    mark_unbacked,
    reset,
)
from .backends import get_default_backend, list_backends, lookup_backend, register_backend, set_default_backend
from .cache_artifacts import CacheInfo, load_cache_artifacts, save_cache_artifacts
from .errors import CompilerError, InvalidBackend
from .explain import ExplainOutput, explain
from .logs import set_logs
from .report import report
from .settings import config
from .stance import set_stance

logs.configure_from_environment()
_report_module.start_from_environment()
progress.configure_from_environment()

__all__ = [
    "CacheInfo",
    "CompilerError",
    "ExplainOutput",
    "InvalidBackend",
    "RecompileError",
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "config",
    "cudagraph_mark_step_begin",
    "disable",
    "explain",
    "get_default_backend",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "list_backends",
    "load_cache_artifacts",
    "lookup_backend",
    "mark_dynamic",
    "mark_static",
    "mark_unbacked",
    "maybe_mark_dynamic",
    "nested_compile_region",
    "register_backend",
    "report",
    "reset",
    "save_cache_artifacts",
    "set_default_backend",
    "set_logs",
    "set_stance",
    "substitute_in_graph",
    "wrap_numpy",
]
