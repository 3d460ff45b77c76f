"""The public compiler namespace: compile, backends, explain, mark_dynamic, config and logging.

`compile(model, backend=...)` is torch.compile built from our packages; `register_backend`,
`list_backends` manage backends; `reset` forgets compiled code; `is_compiling` tells code
whether it is being captured; `mark_dynamic(t, dim)` / `mark_static(t, dim)` steer symbolic
sizes; `disable` / `allow_in_graph` mark functions; `explain(fn)(*args)` reports graphs and
graph breaks; `set_logs` (or `COMPILER_LOGS=...`) turns on log channels.
"""

__version__ = "0.1.0"

from capture import allow_in_graph, disable, mark_dynamic, mark_static

from . import logs
from .api import compile, is_compiling, reset
from .backends import list_backends, lookup_backend, register_backend
from .errors import CompilerError, InvalidBackend
from .explain import ExplainOutput, explain
from .logs import set_logs

logs.configure_from_environment()

__all__ = [
    "CompilerError",
    "ExplainOutput",
    "InvalidBackend",
    "allow_in_graph",
    "compile",
    "disable",
    "explain",
    "is_compiling",
    "list_backends",
    "lookup_backend",
    "mark_dynamic",
    "mark_static",
    "register_backend",
    "reset",
    "set_logs",
]
