"""How a call of a non-inlined callable is decided: a registered rule first, then a torch
operation (recorded in the graph), then a pure function on constants (evaluated now); anything
else is unsupported, named in the error."""

from __future__ import annotations

import types
from typing import Any

from ..errors import Unsupported
from ..type_keys import get_by_type
from ..markers import (
    is_allowed_in_graph, is_compiled, is_disabled, is_disabled_by_torch, runs_natively, undo_dynamo_optimizer_patch,
)
from ..values.base import Value
from ..values.exceptions import ExceptionValue, raise_user_error
from ..values.factory import constant_args, evaluate_constant_operation
from ..values.new_objects import ModelOutputValue, NewObjectValue, is_model_output
from ..values.class_lookup import abstract_instantiation_message, lookup_static, python_dunder
from ..values.base import NotConstant
from ..values.symbolic import specialized_constant
from .registry import CONSTRUCT_RULES, rule, rule_for
from .signatures import check_arguments
from .torch_ops import is_torch_operation, record_torch_call

_PURE_BUILTINS = frozenset(
    {
        abs, all, any, ascii, bin, bool, bytes, callable, chr, complex, divmod, float, format,
        frozenset, hash, hex, int, len, max, min, oct, ord, pow, repr, round, sorted, str, sum,
        tuple, isinstance, issubclass,
    }
)  # fmt: skip
_PURE_MODULES = frozenset({"math", "cmath", "operator", "_operator"})
_IMMUTABLE_TYPES = (str, bytes, int, float, complex, bool, tuple, frozenset, range, slice)


def _is_pure(fn: Any) -> bool:
    """Functions whose result depends only on their (constant) arguments."""
    try:
        if fn in _PURE_BUILTINS:
            return True
    except TypeError:  # unhashable callables
        return False
    if getattr(fn, "__module__", None) in _PURE_MODULES:
        return True
    owner = getattr(fn, "__self__", None)
    if isinstance(fn, types.BuiltinMethodType) and isinstance(owner, _IMMUTABLE_TYPES):
        return True
    if isinstance(fn, types.BuiltinMethodType) and isinstance(owner, type) and owner in _IMMUTABLE_TYPES:
        return True  # a class method of one: `float.fromhex`, `int.from_bytes`
    objclass = getattr(fn, "__objclass__", None)
    return objclass in _IMMUTABLE_TYPES


def call_builtin(frame, fn: Any, args: list[Value], kwargs: dict[str, Value]) -> Value:
    original = undo_dynamo_optimizer_patch(fn)
    if original is not fn:
        return frame.session.wrap(original, None).call(frame, args, kwargs)
    # Marks come first: a disabled function may wrap one that has a rule.
    if is_compiled(fn):
        raise Unsupported(
            f"call to {_name(fn)}, which runs as a compiled frame of its own",
            hint="the graph breaks around the call (the function itself breaks its graph)",
        )
    if is_disabled_by_torch(fn):
        raise Unsupported(
            f"{_name(fn)} is marked by torch not to be compiled (torch._disable_dynamo)",
            hint="it runs natively between two graphs, as under torch.compile",
        )
    if is_disabled(fn):
        raise Unsupported(
            f"{_name(fn)} is marked with compiler.disable",
            hint="it runs natively between two graphs; remove the mark to trace it",
        )
    if runs_natively(fn):
        raise Unsupported(
            f"call to {_name(fn)}, which runs natively (torch.distributed, torch.func's transforms, torch.cond and the other control-flow operators, flex_attention)",
            hint="collectives, the DDP/FSDP hooks, vmap/grad/jacrev, torch.cond/while_loop/scan and flex_attention run between two graphs",
        )
    handler = rule_for(fn)
    if handler is not None:
        check_arguments(frame, fn, args, kwargs)
        return handler(frame, args, kwargs)
    if is_torch_operation(fn) or is_allowed_in_graph(fn):
        return record_torch_call(frame, fn, args, kwargs)
    if _is_pure(fn):
        return evaluated_on_values(frame, fn, args, kwargs)
    raise Unsupported(
        f"call to {_name(fn)}, which capture cannot trace into",
        hint="call it outside the compiled function, or make its arguments Python constants",
    )


def evaluated_on_values(frame, fn: Any, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """A pure function called now on its arguments' values, symbolic numbers specialized
    (guarded); Unsupported where an argument is neither a constant nor a symbolic number."""
    constants = constant_args(args, kwargs) or _specialized_args(args, kwargs)
    if constants is None:
        raise Unsupported(
            f"call to {_name(fn)}, which capture cannot trace into with these arguments",
            hint="call it outside the compiled function, or make its arguments Python constants",
        )
    positional, keywords = constants
    return evaluate_constant_operation(frame, lambda: fn(*positional, **keywords), ())


def _specialized_args(args: list[Value], kwargs: dict[str, Value]) -> tuple[list, dict] | None:
    """The arguments as constants, symbolic numbers (also inside tuples: a torch.Size)
    specialized to their value (guarded), when every argument is one or the other: a pure
    function of them (`math.sqrt(n)`, `round(s)`, `"{}".format(x.shape)`) is then a constant.
    (math.floor, ceil, trunc and round have rules that keep them symbolic.)"""
    try:
        return [specialized_constant(a) for a in args], {k: specialized_constant(v) for k, v in kwargs.items()}
    except NotConstant:
        return None


def construct(frame, class_value, args: list[Value], kwargs: dict[str, Value], *, metaclass: bool = True) -> Value:
    """`cls(*args, **kwargs)`: the metaclass's own `__call__` where it has one in Python (a
    singleton's cache, a registry), else what `type.__call__` does (`metaclass=False`: the
    metaclass's `super().__call__`)."""
    cls = class_value.cls
    metaclass_call = lookup_static(type(cls), "__call__")[0] if metaclass else type.__call__
    if isinstance(metaclass_call, types.FunctionType):
        return frame.session.wrap(metaclass_call, None).call(frame, [class_value, *args], kwargs)
    if metaclass_call is not type.__call__:
        if not hasattr(type(metaclass_call), "__get__"):
            # A plain callable stored as the metaclass's __call__ is called without the class:
            # typing's TypedDict classes have `__call__ = dict`, so `Config(k=v)` is a dict.
            return frame.session.wrap(metaclass_call, None).call(frame, list(args), kwargs)
        raise Unsupported(f"constructing {cls.__qualname__}, whose metaclass {type(cls).__qualname__} has its own __call__")
    for klass in cls.__mro__:
        handler, subclasses = get_by_type(CONSTRUCT_RULES, klass, (None, False))
        if handler is not None and (klass is cls or subclasses):
            check_arguments(frame, cls, args, kwargs, rule_key=klass)
            return handler(frame, cls, args, kwargs)
    if issubclass(cls, BaseException):
        return ExceptionValue(cls, list(args))
    if is_model_output(cls):
        return ModelOutputValue.construct(frame, cls, args, kwargs)
    if is_torch_operation(cls):
        return record_torch_call(frame, cls, args, kwargs)
    constants = constant_args(args, kwargs)
    if _written_in_c(cls) or (getattr(cls, "__module__", None) or "").startswith("torch"):
        if constants is not None and _is_constant_class(cls):
            positional, keywords = constants
            return evaluate_constant_operation(frame, lambda: cls(*positional, **keywords), ())
        raise Unsupported(f"constructing {cls.__qualname__} inside the compiled function")
    if python_dunder(cls, "__new__") is not None or (cls.__new__ is not object.__new__ and not _plain_new(cls)):
        raise Unsupported(f"constructing {cls.__qualname__}, which has a custom __new__")
    abstract = sorted(getattr(cls, "__abstractmethods__", ()))
    if abstract:
        raise_user_error(frame, TypeError, abstract_instantiation_message(cls, abstract))
    if getattr(cls, "__del__", None) is not None:
        # Its finalizer runs when the object is freed: a real object (capture.values.lifetime).
        raise Unsupported(f"constructing {cls.__qualname__}, whose __del__ runs when it is freed")
    instance = NewObjectValue(cls)
    init = python_dunder(cls, "__init__")
    if init is not None:
        # Read (and guarded) through the class: `cls.__init__` patched after capture.
        source = frame.session.class_attribute_source(None, cls, "__init__")
        returned = frame.session.wrap(init, source).call(frame, [instance, *args], kwargs)
        if not (returned.is_python_constant() and returned.as_python_constant() is None):
            raise_user_error(frame, TypeError, f"__init__() should return None, not '{returned.python_type().__name__}'")
    elif cls.__init__ is not object.__init__:
        raise Unsupported(f"constructing {cls.__qualname__}, whose __init__ is not Python code")
    elif args or kwargs:
        raise_user_error(frame, TypeError, f"{cls.__name__}() takes no arguments")
    return instance


@rule(type.__call__)
def _type_call(frame, args, kwargs):
    """`type.__call__(cls, ...)`, which a metaclass's `__call__` reaches through `super()`:
    constructing as if the metaclass had no `__call__` of its own."""
    from ..values.classes import ClassValue

    if not args or not isinstance(args[0], ClassValue):
        raise Unsupported("type.__call__ of something other than a class")
    return construct(frame, args[0], args[1:], kwargs, metaclass=False)


def _written_in_c(cls: type) -> bool:
    """A builtin type, not a class statement's class (which claims the module "builtins" too
    when its code was exec'd without a `__name__` global)."""
    return not cls.__flags__ & _HEAP_TYPE and cls.__module__ == "builtins"


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: set on every class made by a class statement or type()


def _plain_new(cls: type) -> bool:
    # Generic and Protocol classes inherit a __new__ that only does bookkeeping.
    return all(k.__new__ is object.__new__ or k.__module__ == "typing" for k in cls.__mro__[:-1])


_CONSTANT_CLASSES = (int, float, bool, str, bytes, complex, tuple, frozenset, range, slice)


def _is_constant_class(cls: type) -> bool:
    import torch

    return cls in _CONSTANT_CLASSES or cls in (torch.device, torch.Size, torch.finfo, torch.iinfo)


def _name(fn: Any) -> str:
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}.{name}" if module and module != "builtins" else name
