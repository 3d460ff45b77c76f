"""Loads and stores: locals, globals, cells, attributes, subscripts, slices, imports."""

from __future__ import annotations

import builtins
import sys
import types

from ..calls.imports import import_statement
from ..calls.python_builtins import _slice
from ..errors import Unsupported
from ..interpreter.registry import handles
from ..values.cells import CellValue
from ..values.constant import ConstantValue
from ..values.exceptions import raise_user_error
from ..values.lifetime import drop_may_end_watched, rebinding_cell_may_end_watched
from ..values.classes import SuperValue
from ..values.objects import NULL, NullValue


@handles("LOAD_CONST")
def _load_const(frame, inst):
    frame.push(frame.session.wrap(inst.argval, None))


@handles("LOAD_FAST", "LOAD_FAST_CHECK")
def _load_fast(frame, inst):
    # LOAD_FAST_CHECK (3.12) is LOAD_FAST where the compiler could not prove the local bound.
    value = frame.locals.get(inst.argval)
    if value is None:
        raise_user_error(frame, UnboundLocalError, f"cannot access local variable {inst.argval!r} where it is not associated with a value")
    frame.push(value)


@handles("LOAD_FAST_AND_CLEAR")
def _load_fast_and_clear(frame, inst):
    # 3.12 inlined comprehensions save the outer binding of their loop variable (or NULL) and
    # restore it with STORE_FAST afterwards.
    frame.push(frame.locals.pop(inst.argval, NULL))


@handles("STORE_FAST")
def _store_fast(frame, inst):
    _refuse_watched_drop(frame, inst.argval)
    value = frame.pop_raw()
    if isinstance(value, NullValue):
        frame.locals.pop(inst.argval, None)
    else:
        frame.locals[inst.argval] = value


def _refuse_watched_drop(frame, name: str) -> None:
    """A drop that may free an object whose end shows runs natively (capture.values.lifetime)."""
    if drop_may_end_watched(frame, name):
        raise Unsupported(
            f"dropping the local {name!r} may end an object that weak references or a finalizer watch",
            hint="the graph breaks here and the drop runs natively, so the object dies when it does eagerly",
        )


@handles("DELETE_FAST")
def _delete_fast(frame, inst):
    _refuse_watched_drop(frame, inst.argval)
    if frame.locals.pop(inst.argval, None) is None:
        raise_user_error(frame, UnboundLocalError, f"cannot access local variable {inst.argval!r} where it is not associated with a value")


@handles("LOAD_GLOBAL")
def _load_global(frame, inst):
    # 3.11 and 3.12: the low bit of the argument asks for a NULL below the value (for CALL).
    name = inst.argval
    if inst.arg & 1:
        frame.push(NULL)
    pending = frame.session.side_effects.pending_global(frame.f_globals, name)
    if pending is not None:
        frame.push(pending)
    elif name in frame.f_globals:
        frame.push(frame.session.wrap(frame.f_globals[name], frame.session.global_source(frame.f_globals, name)))
    else:
        # Found in builtins, or nowhere: guarded, since a global defined later (or a patched
        # builtin) changes what the name means.
        source = frame.session.guard_name_lookup(frame.f_globals, frame.f_builtins, name)
        # A builtin replaced earlier in this trace (`builtins.isinstance = f`) is that value.
        patched = frame.session.side_effects.pending_global(frame.f_builtins, name)
        if patched is not None:
            frame.push(patched)
            return
        if name not in frame.f_builtins:
            raise_user_error(frame, NameError, f"name {name!r} is not defined")
        frame.push(frame.session.wrap(frame.f_builtins[name], source))


@handles("STORE_GLOBAL")
def _store_global(frame, inst):
    frame.session.side_effects.store_global(frame.f_globals, inst.argval, frame.pop())


@handles("MAKE_CELL")
def _make_cell(frame, inst):
    # 3.11+: a local captured by an inner function becomes a cell at the top of the function.
    frame.cells[inst.argval] = CellValue(frame.locals.pop(inst.argval, None))


@handles("LOAD_CLOSURE")
def _load_closure(frame, inst):
    frame.push(frame.cells[inst.argval])


@handles("LOAD_DEREF")
def _load_deref(frame, inst):
    frame.push(frame.cells[inst.argval].load(frame, inst.argval))


@handles("STORE_DEREF")
def _store_deref(frame, inst):
    if rebinding_cell_may_end_watched(frame, inst.argval):
        raise Unsupported(
            f"rebinding the closure variable {inst.argval!r} may end an object that weak references or a finalizer watch",
            hint="the graph breaks here and the store runs natively, so the object dies when it does eagerly",
        )
    frame.cells[inst.argval].store(frame, frame.pop())


@handles("LOAD_ATTR", "LOAD_METHOD")
def _load_attr(frame, inst):
    # 3.11 loads methods with LOAD_METHOD; 3.12 with LOAD_ATTR whose low bit is set. Either
    # pushes [NULL, bound method], which CALL treats like [method, self].
    is_method = inst.opname == "LOAD_METHOD" or (inst.opname == "LOAD_ATTR" and _attr_is_method(inst))
    obj = frame.pop()
    value = obj.get_attr(frame, inst.argval)
    if is_method:
        frame.push(NULL)
    frame.push(value)


# 3.12 folded LOAD_METHOD into LOAD_ATTR: the low bit of its argument marks a method load.
_LOAD_ATTR_HAS_METHOD_BIT = sys.version_info >= (3, 12)


def _attr_is_method(inst) -> bool:
    return _LOAD_ATTR_HAS_METHOD_BIT and bool(inst.arg & 1)


@handles("LOAD_SUPER_ATTR")
def _load_super_attr(frame, inst):
    # 3.12: `super().name` / `super(C, self).name` in one instruction; stack holds
    # [global super, class, self]; bit 0 of the argument asks for a method load.
    obj = frame.pop()
    cls = frame.pop()
    frame.pop()  # the builtin `super` itself
    value = SuperValue(cls.as_python_constant(), obj).get_attr(frame, inst.argval)
    if inst.arg & 1:
        frame.push(NULL)
    frame.push(value)


@handles("STORE_ATTR")
def _store_attr(frame, inst):
    obj = frame.pop()
    value = frame.pop()
    obj.set_attr(frame, inst.argval, value)


@handles("DELETE_ATTR")
def _delete_attr(frame, inst):
    frame.pop().del_attr(frame, inst.argval)


@handles("BINARY_SUBSCR")
def _binary_subscr(frame, inst):
    key = frame.pop()
    obj = frame.pop()
    frame.push(obj.get_item(frame, key))


@handles("STORE_SUBSCR")
def _store_subscr(frame, inst):
    key = frame.pop()
    obj = frame.pop()
    value = frame.pop()
    obj.set_item(frame, key, value)


@handles("DELETE_SUBSCR")
def _delete_subscr(frame, inst):
    key = frame.pop()
    frame.pop().del_item(frame, key)


def _slice_of(frame, start, stop):
    return _slice(frame, slice, [start, stop, ConstantValue(None)], {})


@handles("BINARY_SLICE")
def _binary_slice(frame, inst):
    # 3.12: container[start:stop] without building a slice object first.
    stop = frame.pop()
    start = frame.pop()
    obj = frame.pop()
    frame.push(obj.get_item(frame, _slice_of(frame, start, stop)))


@handles("STORE_SLICE")
def _store_slice(frame, inst):
    # 3.12: container[start:stop] = value.
    stop = frame.pop()
    start = frame.pop()
    obj = frame.pop()
    value = frame.pop()
    obj.set_item(frame, _slice_of(frame, start, stop), value)


@handles("LOAD_ASSERTION_ERROR")
def _load_assertion_error(frame, inst):
    frame.push(frame.session.wrap(AssertionError, None))


# A class statement: `__build_class__(body, name, *bases)`. Calling it is refused (capture
# does not run class bodies), which breaks the graph at that call: the class is made natively
# between two graphs and what follows it is traced with the class as an input.
@handles("LOAD_BUILD_CLASS")
def _load_build_class(frame, inst):
    frame.push(frame.session.wrap(builtins.__build_class__, None))


@handles("IMPORT_NAME")
def _import_name(frame, inst):
    fromlist = frame.pop().as_python_constant()
    level = frame.pop().as_python_constant()
    frame.push(import_statement(frame, inst.argval, frame.f_globals, fromlist, level))


@handles("IMPORT_FROM")
def _import_from(frame, inst):
    module_value = frame.peek()
    module = module_value.as_python_constant()
    try:
        value = getattr(module, inst.argval)
    except AttributeError:
        raise Unsupported(f"from {module.__name__} import {inst.argval}: the name is not loaded yet") from None
    source = frame.session.module_attribute_source(module_value, inst.argval, value) if isinstance(module, types.ModuleType) else None
    frame.push(frame.session.wrap(value, source))
