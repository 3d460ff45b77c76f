"""Calls whose only effect is output (log records, warnings): recorded while tracing and made
by the compiled entry after the graph runs, with the same arguments, on every call (so
`warning_once` still warns once, and log handlers see each record as in eager).

Deferring is sound only while nothing in the compiled function can see the call's effect. A
logger whose handlers (or filters) include the user's own classes may write where the traced
code reads back (a handler collecting records in a list): such a logger's methods are not
deferred but called natively (the graph breaks there). And a record made after the graph would
name capture's entry as the line that logged it: the level methods of a Logger are replayed
with the traced frame's file, line and function, as `Logger.findCaller` would have found them."""

from __future__ import annotations

import functools
import logging

from .base import Value
from .constant import ConstantValue

# Logger methods that only emit records (transformers adds warning_once and friends).
LOGGER_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log",
     "warning_once", "info_once", "warning_advice"}
)  # fmt: skip

# The methods Logger itself defines with a fixed level, replayed at the traced line (log_at).
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR,
           "critical": logging.CRITICAL, "fatal": logging.CRITICAL, "log": None}


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


class LocatedLoggerCall(DeferredCall):
    """`logger.info(...)` and its siblings, replayed as a record made at the traced line."""

    def __init__(self, logger: logging.Logger, owner: Value, name: str):
        super().__init__(getattr(logger, name), owner, f"Logger.{name}")
        self.logger = logger
        self.method = name

    def call(self, frame, args, kwargs):
        if set(kwargs) - {"extra"}:  # exc_info, stack_info, stacklevel: the Logger's own code decides
            return super().call(frame, args, kwargs)
        where = frame.location()
        location = (where.filename, where.lineno, where.function)
        replay = DeferredCall(functools.partial(log_at, self.logger, self.method, location), self.owner, self.name)
        return replay.call(frame, args, kwargs)


def log_at(logger: logging.Logger, method: str, location: tuple, *args, extra=None):
    """What `logger.<method>(*args, extra=extra)` does, with the record's caller `location`
    (filename, lineno, function) given rather than found on the stack (Logger._log)."""
    level = _LEVELS[method]
    if level is None:
        level, *args = args
        if not isinstance(level, int):
            if logging.raiseExceptions:
                raise TypeError("level must be an integer")
            return
    msg, *args = args
    if not logger.isEnabledFor(level):
        return
    filename, lineno, function = location
    logger.handle(logger.makeRecord(logger.name, level, filename, lineno, msg, tuple(args), None, function, extra, None))


# Modules whose handlers only write records out: the logging package's own, and pytest's
# logging plugin (its handlers, on every logger a test run touches, keep records for the
# report and `caplog`, read after the compiled call returns).
_OUTPUT_ONLY_HANDLERS = ("logging", "logging.handlers", "_pytest.logging")


def _only_stdlib_output(logger: logging.Logger) -> bool:
    """Whether a record logged on `logger` reaches only output-only handlers and no filters
    (output the compiled function cannot read back)."""
    if logger.filters:
        return False
    current = logger
    while current is not None:
        for handler in current.handlers:
            if type(handler).__module__ not in _OUTPUT_ONLY_HANDLERS or handler.filters:
                return False
        if not current.propagate:
            break
        current = current.parent
    return True


def logger_method(frame, logger_value: Value, name: str) -> Value | None:
    """`logger.<name>` as a deferred call, for the methods that only emit records."""
    if name not in LOGGER_METHODS:
        return None
    obj = logger_value.obj
    if not isinstance(obj, (logging.Logger, logging.LoggerAdapter)):
        return None
    logger = obj.logger if isinstance(obj, logging.LoggerAdapter) else obj
    if not isinstance(logger, logging.Logger) or not _only_stdlib_output(logger):
        return None
    if isinstance(obj, logging.Logger) and name in _LEVELS and getattr(type(obj), name) is getattr(logging.Logger, name):
        return LocatedLoggerCall(obj, logger_value, name)
    return DeferredCall(getattr(obj, name), logger_value, f"{type(obj).__name__}.{name}")
