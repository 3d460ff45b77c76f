"""Calling callables capture does not inline: rules registered per callable (builtins,
container methods, torch state functions, context managers), torch operations recorded in the
graph, and pure functions evaluated on constants.

Exports `call_builtin(frame, fn, args, kwargs)` and `construct(frame, class_value, args, kwargs)`.
"""

from . import (  # noqa: F401  (fill the registry)
    autograd_calls,
    collection_methods,
    container_builtins,
    container_methods,
    copy_protocol,
    deferred,
    frame_reads,
    functional,
    imports,
    iteration,
    iteration_builtins,
    numpy_calls,
    python_builtins,
    reprs,
    stdlib,
    tensor_scalars,
    torch_modules,
    torch_rules,
)
from .dispatch import call_builtin, construct

__all__ = ["call_builtin", "construct"]
