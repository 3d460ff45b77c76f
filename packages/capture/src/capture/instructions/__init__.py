"""Opcode handlers, one file per family. Importing this package fills the registry of
`capture.interpreter.registry`; each opcode's differences between CPython 3.11 and 3.12 are
handled in its own handler."""

from . import (  # noqa: F401  (each module registers its handlers)
    calls,
    containers,
    context_managers,
    control_flow,
    exceptions,
    functions,
    loads_stores,
    operators,
    pattern_matching,
    stack,
)
