"""`warnings.warn` as a deferred call (capture.values.deferred): made by the compiled entry after
the graph runs, with the same arguments, on every call."""

from __future__ import annotations

import warnings

from ..errors import Unsupported
from ..values.deferred import DeferredCall
from .registry import rule


@rule(warnings.warn)
def _warn(frame, args, kwargs):
    if "stacklevel" in kwargs or len(args) > 2:
        # The stack level would point into capture's entry, not the user's frame.
        raise Unsupported("warnings.warn with a stacklevel inside a compiled function")
    return DeferredCall(warnings.warn, None, "warnings.warn").call(frame, args, kwargs)
