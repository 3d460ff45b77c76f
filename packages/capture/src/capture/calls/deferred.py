"""`warnings.warn` as a deferred call (capture.values.deferred): made by the compiled entry after
the graph runs, with the same arguments, on every call, and attributed to the user's line.

`warnings.warn` names the frame `stacklevel` levels up as the warning's location, and the
default filter shows a warning once per location (module, line, text, category). Made from the
compiled entry, it would name the entry's code instead: every warning of a compiled function
would share one location, and all but the first of them be dropped. The replay therefore calls
`warnings.warn_explicit` with the location the traced frame had, as `warnings.warn` computes it
(the frame's file and line, its globals' `__name__` and `__warningregistry__`). A stacklevel
reaching past the compiled function names a frame found when the call is made, counting from
the entry and skipping capture's own frames (`warn_outside`): a compiled callee's caller, not
the dispatcher between them."""

from __future__ import annotations

import functools
import inspect
import os
import sys
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
    for climbed in range(level - 1):
        if caller.parent is None:
            # A frame outside the compiled function: found when the call is made, counting
            # from the compiled entry, which stands for the outermost traced frame.
            outside = functools.partial(warn_outside, levels=level - 1 - climbed)
            return DeferredCall(outside, None, "warnings.warn").call(frame, args, kwargs)
        caller = caller.parent
    where = caller.location()
    location = (where.filename, where.lineno, caller.f_globals)
    replay = DeferredCall(functools.partial(warn_at, location=location), None, "warnings.warn")
    return replay.call(frame, args, kwargs)


_CAPTURE_DIRECTORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _is_capture_frame(code) -> bool:
    """Generated entries and dispatchers, and capture's own runtime (tail calls, misses)."""
    return code.co_filename.startswith("<capture ") or code.co_filename.startswith(_CAPTURE_DIRECTORY)


def warn_outside(message, category=None, stacklevel=1, source=None, *, levels):
    """warnings.warn(...) attributed to the frame `levels` frames above the calling entry, not
    counting capture's own frames (a dispatcher between a compiled callee and its caller)."""
    caller = sys._getframe(1)
    while levels and caller.f_back is not None:
        caller = caller.f_back
        if not _is_capture_frame(caller.f_code):
            levels -= 1
    warn_at(message, category, stacklevel, source, location=(caller.f_code.co_filename, caller.f_lineno, caller.f_globals))
