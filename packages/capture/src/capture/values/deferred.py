"""Calls whose only effect is output (log records, warnings): recorded while tracing and made
by the compiled entry after the graph runs, with the same arguments, on every call (so
`warning_once` still warns once, and log handlers see each record as in eager)."""

from __future__ import annotations

import logging

from .base import Value
from .constant import ConstantValue

# Logger methods that only emit records (transformers adds warning_once and friends).
LOGGER_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log",
     "warning_once", "info_once", "warning_advice"}
)  # fmt: skip


class DeferredCall(Value):
    """A callable whose calls are replayed by the compiled entry instead of traced."""

    def __init__(self, fn, owner: Value | None, name: str):
        super().__init__(None)
        self.fn = fn
        self.owner = owner
        self.name = name

    def describe(self):
        return f"{self.name} (called after the graph runs)"

    def call(self, frame, args, kwargs):
        frame.session.side_effects.defer_call(self, list(args), dict(kwargs))
        return ConstantValue(None)


def logger_method(frame, logger_value: Value, name: str) -> Value | None:
    """`logger.<name>` as a deferred call, for the methods that only emit records."""
    if name not in LOGGER_METHODS:
        return None
    obj = logger_value.obj
    if not isinstance(obj, (logging.Logger, logging.LoggerAdapter)):
        return None
    return DeferredCall(getattr(obj, name), logger_value, f"{type(obj).__name__}.{name}")
