"""`warnings.warn` as a deferred call (capture.values.deferred): made by the compiled entry after
the graph runs, with the same arguments, on every call, and attributed to the user's line.

`warnings.warn` names the frame `stacklevel` levels up as the warning's location, and the
default filter shows a warning once per location (module, line, text, category). Made from the
compiled entry, it would name the entry's code instead: every warning of a compiled function
would share one location, and all but the first of them be dropped. The replay therefore calls
`warnings.warn_explicit` with the location the traced frame had, as `warnings.warn` computes it
(the frame's file and line, its globals' `__name__` and `__warningregistry__`)."""

from __future__ import annotations

import functools
import inspect
import warnings

from ..errors import Unsupported
from ..values.deferred import DeferredCall
from .registry import rule
from ..values.exceptions import raise_user_error


def warn_at(message, category=None, stacklevel=1, source=None, *, location):
    """warnings.warn(message, category, ...) from `location` (filename, lineno, module globals)."""
    filename, lineno, module_globals = location
    if isinstance(message, Warning):
        category = message.__class__
    if category is None:
        category = UserWarning
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise TypeError(f"category must be a Warning subclass, not '{type(category).__name__}'")
    registry = module_globals.setdefault("__warningregistry__", {})
    module = module_globals.get("__name__", "<string>")
    warnings.warn_explicit(message, category, filename, lineno, module, registry, module_globals, source)


_WARN_SIGNATURE = inspect.Signature(list(inspect.signature(warn_at).parameters.values())[:-1])


@rule(warnings.warn)
def _warn(frame, args, kwargs):
    try:
        bound = _WARN_SIGNATURE.bind(*args, **kwargs).arguments
    except TypeError as exc:
        raise_user_error(frame, TypeError, str(exc))
    level = bound.get("stacklevel")
    if level is None:
        level = 1
    elif level.is_python_constant() and isinstance(level.as_python_constant(), int):
        level = level.as_python_constant()
    else:
        raise Unsupported("warnings.warn with a stacklevel not known while tracing")
    caller = frame
    for _ in range(level - 1):
        caller = caller.parent
        if caller is None:
            raise Unsupported(f"warnings.warn with stacklevel={level}, which names a frame outside the compiled function")
    where = caller.location()
    location = (where.filename, where.lineno, caller.f_globals)
    replay = DeferredCall(functools.partial(warn_at, location=location), None, "warnings.warn")
    return replay.call(frame, args, kwargs)
