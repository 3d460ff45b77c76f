"""MAKE_FUNCTION: functions, lambdas and (on 3.11) comprehensions defined in traced code."""

from __future__ import annotations

from ..interpreter.registry import handles
from ..values.containers import DictEntries, DictValue, key_of
from ..values.functions import NestedFunctionValue


@handles("MAKE_FUNCTION")
def _make_function(frame, inst):
    # 3.11 and 3.12: the code object is on top (the qualified name comes from it); below it,
    # in this order from the top, the closure cells (flag 8), annotations (4), keyword-only
    # defaults (2) and positional defaults (1).
    code = frame.pop().as_python_constant()
    flags = inst.arg
    cells = frame.pop().unpack(frame) if flags & 8 else []
    annotations = _annotations(frame, frame.pop()) if flags & 4 else None
    kwdefaults = {}
    if flags & 2:
        kwdefaults = frame.pop().str_items()
    defaults = frame.pop().unpack(frame) if flags & 1 else []
    frame.push(NestedFunctionValue(code, frame.f_globals, code.co_qualname, defaults, kwdefaults, cells, annotations))


def _annotations(frame, names_and_values) -> DictValue:
    """The function's __annotations__ from MAKE_FUNCTION's operand: on 3.11 and 3.12 a flat
    tuple (name, annotation, name, annotation, ...), the parameters in order, then 'return'."""
    items = names_and_values.unpack(frame)
    entries = DictEntries()
    for name, value in zip(items[::2], items[1::2]):
        entries[key_of(frame, name)] = (name, value)
    return DictValue(entries)
