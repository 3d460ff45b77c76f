"""Rules for the functional helpers of the standard library: `functools.reduce`,
`functools.update_wrapper` (what `functools.wraps` calls), the `operator` functions that
stand for operators and the callables it builds (`itemgetter`, `attrgetter`,
`methodcaller`), and `sys.intern`. Each does to symbolic values what the helper does to real
ones, so tensors flowing through them stay in the graph."""

from __future__ import annotations

import functools
import operator
import sys

from ..errors import Unsupported, UserException
from ..operators import binary, compare, contains, inplace, is_, unary
from ..values.base import Value
from ..values.class_lookup import python_dunder
from ..values.tensor import TensorValue
from ..values.constant import ConstantValue
from ..values.containers import TupleValue
from ..values.exceptions import raise_user_error
from ..values.factory import constant_args, evaluate_constant_operation
from ..values.callables import NativeFunctionValue
from ..values.functions import FunctionValue, NestedFunctionValue, bind_arguments
from ..values.symbolic import SymValue
from .number_of_tensor import number_of_tensor
from .registry import construct_rule, rule


@rule(functools.reduce)
def _reduce(frame, args, kwargs):
    fn, iterable, *initial = args
    items = iterable.unpack(frame)
    if initial:
        total = initial[0]
    elif items:
        total, items = items[0], items[1:]
    else:
        raise_user_error(frame, TypeError, "reduce() of empty iterable with no initial value")
    for item in items:
        total = fn.call(frame, [total, item], {})
    return total


@rule(functools.update_wrapper)
def _update_wrapper(frame, args, kwargs):
    """`functools.wraps(wrapped)(wrapper)`: the wrapper made in the traced code takes the
    wrapped function's name, docstring and attributes, as a plain attribute store on it."""
    code = functools.update_wrapper.__code__
    defaults = tuple(frame.session.wrap(d, None) for d in functools.update_wrapper.__defaults__)
    bound = bind_arguments(frame, code, "update_wrapper", args, kwargs, defaults, {})
    wrapper, wrapped = bound["wrapper"], bound["wrapped"]
    if not isinstance(wrapper, NestedFunctionValue):
        raise Unsupported(f"functools.update_wrapper on {wrapper.describe()}, which exists outside the compiled function")
    for name in bound["assigned"].as_python_constant():
        try:
            wrapper.set_attr(frame, name, wrapped.get_attr(frame, name))
        except UserException as exc:
            if not issubclass(exc.value.python_type(), AttributeError):
                raise
    for name in bound["updated"].as_python_constant():
        if name != "__dict__":
            raise Unsupported(f"functools.update_wrapper updating {name}")
        if isinstance(wrapped, FunctionValue):
            for key, value in wrapped.fn.__dict__.items():
                wrapper.set_attr(frame, key, frame.session.wrap(value, None))
        elif isinstance(wrapped, NestedFunctionValue):
            for key, value in wrapped.attrs.items():
                if key != "__wrapped__":
                    wrapper.set_attr(frame, key, value)
    wrapper.set_attr(frame, "__wrapped__", wrapped)
    return wrapper


# --- operator ---------------------------------------------------------------------------------
# (the arithmetic ones, getitem, neg and not_ are in python_builtins)


def _compare_rule(symbol):
    return lambda frame, args, kwargs: compare(frame, symbol, *args)


def _inplace_rule(symbol):
    return lambda frame, args, kwargs: inplace(frame, symbol, *args)


def _unary_rule(symbol):
    return lambda frame, args, kwargs: unary(frame, symbol, *args)


for _symbol, _fn in {
    "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt, ">=": operator.ge,
}.items():  # fmt: skip
    rule(_fn)(_compare_rule(_symbol))
for _symbol, _fn in {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "@=": operator.imatmul,
    "&=": operator.iand, "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift,
    ">>=": operator.irshift,
}.items():  # fmt: skip
    rule(_fn)(_inplace_rule(_symbol))
rule(operator.iconcat)(_inplace_rule("+="))
for _symbol, _fn in {"+": operator.pos, "~": operator.invert, "abs": operator.abs}.items():
    rule(_fn)(_unary_rule(_symbol))
rule(operator.inv)(_unary_rule("~"))


@rule(operator.concat)
def _concat(frame, args, kwargs):
    first = args[0].python_type()
    if not hasattr(first, "__getitem__"):  # operator.concat accepts sequences only
        raise_user_error(frame, TypeError, f"'{first.__name__}' object can't be concatenated")
    return binary(frame, "+", *args)


@rule(operator.truth)
def _truth(frame, args, kwargs):
    (value,) = args
    return ConstantValue(value.truth(frame))


@rule(operator.is_)
def _is(frame, args, kwargs):
    return is_(frame, *args)


@rule(operator.is_not)
def _is_not(frame, args, kwargs):
    return ConstantValue(not is_(frame, *args).value)


@rule(operator.contains)
def _contains(frame, args, kwargs):
    container, item = args
    return contains(frame, item, container)


@rule(operator.setitem)
def _setitem(frame, args, kwargs):
    obj, key, value = args
    obj.set_item(frame, key, value)
    return ConstantValue(None)


@rule(operator.delitem)
def _delitem(frame, args, kwargs):
    obj, key = args
    obj.del_item(frame, key)
    return ConstantValue(None)


@rule(operator.index)
def _index(frame, args, kwargs):
    (value,) = args
    if isinstance(value, SymValue) and value.python_type() is int:
        return value
    if isinstance(value, TensorValue):
        return _index_of_tensor(frame, value)
    if not value.is_python_constant():
        return _index_of_object(frame, value)
    return evaluate_constant_operation(frame, operator.index, (value.as_python_constant(),))


def _index_of_object(frame, value: Value) -> Value:
    """`operator.index(obj)`: a class's own Python `__index__`, whose answer must be an int."""
    cls = value.python_type()
    method = python_dunder(cls, "__index__")
    if method is None:
        if not hasattr(cls, "__index__"):
            raise_user_error(frame, TypeError, f"'{cls.__name__}' object cannot be interpreted as an integer")
        raise Unsupported(f"operator.index() of {value.describe()}")
    result = frame.session.wrap(method, None).call(frame, [value], {})
    kind = result.python_type()
    if not issubclass(kind, int):
        raise_user_error(frame, TypeError, f"__index__ returned non-int (type {kind.__name__})")
    return result


def _index_of_tensor(frame, value: TensorValue) -> Value:
    """`Tensor.__index__`: the item of a one-element integer (or bool) tensor, as an unbacked
    int; any other tensor is the program's TypeError."""
    fake = value.fake
    numel = fake.numel()
    if fake.is_floating_point() or fake.is_complex() or (isinstance(numel, int) and numel != 1):
        raise_user_error(frame, TypeError, "only integer tensors of a single element can be converted to an index")
    number = number_of_tensor(frame, int, value)
    if number is None:
        raise Unsupported(f"operator.index() of {value.describe()}, whose value is its data")
    return number


@rule(operator.countOf)
def _count_of(frame, args, kwargs):
    container, item = args
    return ConstantValue(sum(1 for x in container.unpack(frame) if x is item or compare(frame, "==", x, item).truth(frame)))


@rule(operator.indexOf)
def _index_of(frame, args, kwargs):
    container, item = args
    for i, x in enumerate(container.unpack(frame)):
        if x is item or compare(frame, "==", x, item).truth(frame):
            return ConstantValue(i)
    raise_user_error(frame, ValueError, "sequence.index(x): x not in sequence")


@rule(operator.length_hint)
def _length_hint(frame, args, kwargs):
    return ConstantValue(len(args[0].unpack(frame)))


@rule(operator.call)
def _call(frame, args, kwargs):
    fn, *rest = args
    return fn.call(frame, rest, kwargs)


def _real_callable(cls, args, kwargs):
    """The callable built for real when its arguments are constants (for rebuilding it)."""
    constants = constant_args(args, kwargs)
    return cls(*constants[0], **constants[1]) if constants is not None else None


def _itemgetter(cls, args, kwargs):
    keys = list(args)

    def get(frame, call_args, call_kwargs):
        (obj,) = call_args
        items = [obj.get_item(frame, key) for key in keys]
        return items[0] if len(items) == 1 else TupleValue(items)

    return NativeFunctionValue(get, "operator.itemgetter", _real_callable(cls, args, kwargs))


def _attrgetter(cls, args, kwargs):
    paths = [a.as_python_constant().split(".") for a in args]

    def get(frame, call_args, call_kwargs):
        (obj,) = call_args
        found = []
        for path in paths:
            value = obj
            for name in path:
                value = value.get_attr(frame, name)
            found.append(value)
        return found[0] if len(found) == 1 else TupleValue(found)

    return NativeFunctionValue(get, "operator.attrgetter", _real_callable(cls, args, kwargs))


def _methodcaller(cls, args, kwargs):
    name, *bound = args
    name = name.as_python_constant()

    def call(frame, call_args, call_kwargs):
        (obj,) = call_args
        return obj.get_attr(frame, name).call(frame, list(bound), dict(kwargs))

    return NativeFunctionValue(call, f"operator.methodcaller({name!r})", _real_callable(cls, args, kwargs))


_OPERATOR_CALLABLES = {operator.itemgetter: _itemgetter, operator.attrgetter: _attrgetter, operator.methodcaller: _methodcaller}


def operator_callable(cls: type, args: list[Value], kwargs: dict[str, Value]) -> NativeFunctionValue:
    """`cls(*args, **kwargs)` for cls itemgetter, attrgetter or methodcaller."""
    return _OPERATOR_CALLABLES[cls](cls, args, kwargs)


@construct_rule(*_OPERATOR_CALLABLES)
def _operator_callable(frame, cls, args, kwargs):
    return operator_callable(cls, args, kwargs)


@rule(sys.intern)
def _intern(frame, args, kwargs):
    (value,) = args
    return ConstantValue(sys.intern(value.as_python_constant()))

