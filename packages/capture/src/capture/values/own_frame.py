"""Which Python function a call that breaks the graph compiles as a frame of its own."""

from __future__ import annotations

import types

from ..markers import is_disabled, runs_natively
from ..module_call import hooked_call, hooked_call_of
from .base import Value
from .callables import MethodValue
from .functions import CO_GENERATOR, CO_UNSUPPORTED_KINDS, FunctionValue
from .lazy import LazyInput
from .modules import ModuleValue


def own_frame_function(value: Value) -> tuple[types.FunctionType, Value | None, bool] | None:
    """For a call capture could not inline because the callee breaks its graph: the Python
    function to compile as a frame of its own, the value bound as its first argument (None
    for a plain function) and whether it is a module's forward (then called through
    `module(...)` semantics). None when the callable is nothing of that kind."""
    if isinstance(value, LazyInput):
        return _own_frame_function_of_input(value)
    if isinstance(value, FunctionValue):
        fn, bound, module = value.fn, None, False
    elif isinstance(value, MethodValue) and isinstance(value.func, FunctionValue):
        fn, bound, module = value.func.fn, value.obj, False
    elif isinstance(value, ModuleValue) and hooked_call(value.obj):
        fn, bound, module = hooked_call_of(type(value.obj)), value, False
    elif isinstance(value, ModuleValue) and "forward" not in value.obj.__dict__:
        fn, bound, module = type(value.obj).forward, value, True
    else:
        return None
    return (fn, bound, module) if _compilable(fn) else None


def _own_frame_function_of_input(value) -> tuple[types.FunctionType, Value | None, bool] | None:
    """`own_frame_function` of a frame input not looked at yet (a callable passed in)."""
    import torch
    from guards.sources import AttrSource

    obj = value.obj
    if isinstance(obj, types.FunctionType):
        target = (obj, None, False)
    elif isinstance(obj, types.MethodType) and isinstance(obj.__func__, types.FunctionType):
        target = (obj.__func__, LazyInput(obj.__self__, AttrSource(value.source, "__self__")), False)
    elif isinstance(obj, torch.nn.Module) and hooked_call(obj):
        target = (hooked_call_of(type(obj)), value, False)
    elif isinstance(obj, torch.nn.Module) and "forward" not in obj.__dict__:
        target = (type(obj).forward, value, True)
    else:
        return None
    return target if _compilable(target[0]) else None


# Modules whose functions, when a call into them breaks the graph, run natively rather than
# as frames compiled on their own. copy.py's deepcopy frames are handed the memo, keyed by the
# id()s of that call's objects: compiled on their own they guard on those ids and capture
# again on every call (deepcopy of a module, whose Parameter.__deepcopy__ breaks the graph,
# hit the recompile limit within one call, with a warning eager never gives).
_NATIVE_WHEN_BROKEN = frozenset({"copy"})


def _compilable(fn) -> bool:
    if not isinstance(fn, types.FunctionType) or is_disabled(fn) or runs_natively(fn):
        return False
    if fn.__globals__.get("__name__") in _NATIVE_WHEN_BROKEN:
        return False
    return not fn.__code__.co_flags & (CO_GENERATOR | CO_UNSUPPORTED_KINDS)
