"""MAKE_FUNCTION: functions, lambdas and (on 3.11) comprehensions defined in traced code."""

from __future__ import annotations

from ..interpreter.registry import handles
from ..values.functions import NestedFunctionValue


@handles("MAKE_FUNCTION")
def _make_function(frame, inst):
    # 3.11 and 3.12: the code object is on top (the qualified name comes from it); below it,
    # in this order from the top, the closure cells (flag 8), annotations (4), keyword-only
    # defaults (2) and positional defaults (1).
    code = frame.pop().as_python_constant()
    flags = inst.arg
    cells = frame.pop().unpack(frame) if flags & 8 else []
    if flags & 4:
        frame.pop()
    kwdefaults = {}
    if flags & 2:
        kwdefaults = frame.pop().str_items()
    defaults = frame.pop().unpack(frame) if flags & 1 else []
    frame.push(NestedFunctionValue(code, frame.f_globals, code.co_qualname, defaults, kwdefaults, cells, bool(flags & 4)))
