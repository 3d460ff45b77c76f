"""Calls: CALL with its KW_NAMES, CALL_FUNCTION_EX, and the 3.12 intrinsics."""

from __future__ import annotations

from ..errors import Unsupported
from ..interpreter.registry import handles
from ..operators import unary
from .containers import not_iterable
from ..values.containers import DictValue, TupleValue
from ..values.exceptions import raise_user_error
from ..values.functions import FunctionValue, InlinableFunction
from ..values.objects import NullValue


@handles("KW_NAMES")
def _kw_names(frame, inst):
    # 3.11 and 3.12: names of the keyword arguments of the next CALL, as a constant tuple.
    frame.kw_names = frame.code.co_consts[inst.arg]


@handles("CALL")
def _call(frame, inst):
    # Stack: [NULL, callable, *args] or [callable, self, *args]; `arg` counts the arguments
    # after the first two slots, keyword arguments (named by KW_NAMES) last.
    args = frame.popn(inst.arg)
    first, second = frame.popn(2)
    if isinstance(first, NullValue):
        fn = second
    else:
        fn = first
        args = [second, *args]
    kwargs = {}
    if frame.kw_names:
        names = frame.kw_names
        kwargs = dict(zip(names, args[len(args) - len(names) :]))
        args = args[: len(args) - len(names)]
        frame.kw_names = None
    frame.push(fn.call(frame, args, kwargs))


@handles("CALL_FUNCTION_EX")
def _call_function_ex(frame, inst):
    # f(*args, **kwargs): stack [NULL, callable, args tuple, kwargs dict if arg & 1] in both
    # 3.11 and 3.12.
    kwargs = frame.pop() if inst.arg & 1 else DictValue({})
    args = frame.pop()
    fn = frame.pop()
    frame.pop()  # NULL
    if not isinstance(kwargs, DictValue):
        raise Unsupported(f"** of {kwargs.describe()}")
    kind = not_iterable(args)
    if kind is not None:
        raise_user_error(frame, TypeError, f"{_function_str(fn)} argument after * must be an iterable, not {kind.__name__}")
    frame.push(fn.call(frame, args.unpack(frame), kwargs.str_items()))


def _function_str(fn) -> str:
    """How CPython names a callable in call errors (_PyObject_FunctionStr): `module.qualname()`,
    without the module for builtins; anything else runs natively to get its own message."""
    if isinstance(fn, InlinableFunction):
        qualname, module = fn.name, fn.f_globals.get("__name__")
        if isinstance(fn, FunctionValue):
            module = fn.fn.__module__
    elif fn.is_python_constant() and isinstance(getattr(fn.as_python_constant(), "__qualname__", None), str):
        obj = fn.as_python_constant()
        qualname, module = obj.__qualname__, getattr(obj, "__module__", None)
    else:
        raise Unsupported(f"calling {fn.describe()} with * of a value that is not iterable")
    if module is None or module == "builtins":
        return f"{qualname}()"
    return f"{module}.{qualname}()"


@handles("CALL_INTRINSIC_1")
def _call_intrinsic_1(frame, inst):
    # 3.12 moved a few rare operations behind one opcode, named by argrepr.
    kind = inst.argrepr
    if kind == "INTRINSIC_LIST_TO_TUPLE":
        frame.push(TupleValue(frame.pop().unpack(frame)))
    elif kind == "INTRINSIC_UNARY_POSITIVE":
        frame.push(unary(frame, "+", frame.pop()))
    elif kind == "INTRINSIC_STOPITERATION_ERROR":
        # Only reached when an exception leaves a generator; pass it on unchanged.
        pass
    else:
        raise Unsupported(f"CALL_INTRINSIC_1 {kind}")
