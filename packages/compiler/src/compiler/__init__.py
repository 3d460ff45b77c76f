"""The public compiler namespace: compile, backends, explain, mark_dynamic, config and logging.

`compile(model, backend=...)` is torch.compile built from our packages; `register_backend`,
`list_backends` manage backends; `reset` forgets compiled code; `is_compiling` tells code
whether it is being captured; `mark_dynamic(t, dim)` makes a size symbolic.
"""

__version__ = "0.1.0"

from capture import mark_dynamic

from .api import compile, is_compiling, reset
from .backends import list_backends, lookup_backend, register_backend
from .errors import CompilerError, InvalidBackend

__all__ = [
    "CompilerError",
    "InvalidBackend",
    "compile",
    "is_compiling",
    "list_backends",
    "lookup_backend",
    "mark_dynamic",
    "register_backend",
    "reset",
]
