"""Python functions capture inlines: user functions, closures made while tracing, and the
generators they return. Bound methods and the callables capture does not inline are in
`callables`.
"""

from __future__ import annotations

import inspect
import types

from guards import HasAttr
from guards.sources import AttrSource, ItemSource

from ..errors import Unsupported, UserException
from .base import Value
from .callables import BuiltinValue, MethodValue, NativeMethodValue
from .cells import ExistingCellValue
from .constant import ConstantValue
from .containers import DictValue, TupleValue
from .iterators import IteratorValue
from .exceptions import ExceptionValue, raise_user_error

CO_VARARGS = inspect.CO_VARARGS
CO_VARKEYWORDS = inspect.CO_VARKEYWORDS
CO_GENERATOR = inspect.CO_GENERATOR
CO_UNSUPPORTED_KINDS = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def bind_arguments(
    frame,
    code: types.CodeType,
    name: str,
    args: list[Value],
    kwargs: dict[str, Value],
    defaults: tuple[Value, ...],
    kwdefaults: dict[str, Value],
) -> dict[str, Value]:
    """The locals a call of `code` starts with, following CPython's argument binding; a
    binding error is the TypeError the traced program would raise."""
    nargs, nposonly, nkwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    names = code.co_varnames
    positional = names[:nargs]
    kwonly = names[nargs : nargs + nkwonly]
    index = nargs + nkwonly
    varargs = varkw = None
    if code.co_flags & CO_VARARGS:
        varargs = names[index]
        index += 1
    if code.co_flags & CO_VARKEYWORDS:
        varkw = names[index]

    # CPython's order (_PyEval_MakeFrameVector) and messages: keywords first, then too many
    # positional arguments, then missing ones.
    bound: dict[str, Value] = dict(zip(positional, args))
    if varargs is not None:
        bound[varargs] = TupleValue(list(args[nargs:]))
    extra: dict[str, Value] = {}
    for key, value in kwargs.items():
        if key in kwonly or key in positional[nposonly:]:
            if key in bound:
                raise_user_error(frame, TypeError, f"{name}() got multiple values for argument {key!r}")
            bound[key] = value
        elif varkw is not None:
            extra[key] = value
        else:
            passed = [k for k in kwargs if k in positional[:nposonly]]
            if passed:
                raise_user_error(frame, TypeError, f"{name}() got some positional-only arguments passed as keyword arguments: '{', '.join(passed)}'")
            raise_user_error(frame, TypeError, f"{name}() got an unexpected keyword argument {key!r}")
    if varkw is not None:
        bound[varkw] = DictValue.from_str_keys(extra)
    if len(args) > nargs and varargs is None:
        raise_user_error(frame, TypeError, _too_many_positional(name, nargs, len(defaults), len(args), sum(k in bound for k in kwonly)))
    first_default = nargs - len(defaults)
    missing = [param for i, param in enumerate(positional) if param not in bound and i < first_default]
    if missing:
        raise_user_error(frame, TypeError, _missing(name, missing, "positional"))
    for i, param in enumerate(positional):
        if param not in bound:
            bound[param] = defaults[i - first_default]
    missing = [param for param in kwonly if param not in bound and param not in kwdefaults]
    if missing:
        raise_user_error(frame, TypeError, _missing(name, missing, "keyword-only"))
    for param in kwonly:
        if param not in bound:
            bound[param] = kwdefaults[param]
    return bound


def _too_many_positional(name: str, nargs: int, ndefaults: int, given: int, kwonly_given: int) -> str:
    """CPython's too_many_positional message."""
    plural = nargs != 1 or ndefaults > 0
    signature = f"from {nargs - ndefaults} to {nargs}" if ndefaults else f"{nargs}"
    kwonly = ""
    if kwonly_given:
        kwonly = f" positional argument{'s' if given != 1 else ''} (and {kwonly_given} keyword-only argument{'s' if kwonly_given != 1 else ''})"
    verb = "was" if given == 1 and not kwonly_given else "were"
    return f"{name}() takes {signature} positional argument{'s' if plural else ''} but {given}{kwonly} {verb} given"


def _missing(name: str, params: list[str], kind: str) -> str:
    """CPython's missing_arguments message: 'a', 'a' and 'b', or 'a', 'b', and 'c'."""
    quoted = [repr(p) for p in params]
    if len(quoted) == 1:
        listed = quoted[0]
    elif len(quoted) == 2:
        listed = f"{quoted[0]} and {quoted[1]}"
    else:
        listed = ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
    return f"{name}() missing {len(params)} required {kind} argument{'s' if len(params) != 1 else ''}: {listed}"


class InlinableFunction(Value):
    """A Python function whose bytecode capture interprets in a child frame."""

    code: types.CodeType
    f_globals: dict
    name: str

    def defaults(self, frame) -> tuple[Value, ...]:
        raise NotImplementedError

    def kwdefaults(self, frame) -> dict[str, Value]:
        raise NotImplementedError

    def closure_cells(self, frame) -> dict[str, Value]:
        raise NotImplementedError

    def python_type(self):
        return types.FunctionType

    def truth(self, frame):
        return True  # a function object is always true (`if validator := table.get(kind):`)

    def call(self, frame, args, kwargs):
        code = self.code
        if code.co_flags & CO_UNSUPPORTED_KINDS:
            raise Unsupported(f"calling the coroutine or async generator {self.name}")
        locals_ = bind_arguments(frame, code, self.name, args, kwargs, self.defaults(frame), self.kwdefaults(frame))
        frame.session.entered_function(self)
        generator = bool(code.co_flags & CO_GENERATOR)
        child = frame.inline(code, self.f_globals, locals_, self.closure_cells(frame), function=self, generator=generator)
        if generator:
            return GeneratorValue(child, self, args, kwargs)
        return child.run()

    def get_attr(self, frame, name):
        if name in ("__name__", "__qualname__"):
            return ConstantValue(self.name)
        if name == "__code__":
            return ConstantValue(self.code)
        if name == "__get__":
            # Binding it by hand (`func.__get__(obj, cls)`, as an lr scheduler's wrapper of
            # `optimizer.step` does): capture.calls.python_builtins has the rule.
            return MethodValue(BuiltinValue(types.FunctionType.__get__), self)
        raise Unsupported(f"attribute {name!r} of function {self.name}")


class GeneratorValue(IteratorValue):
    """A generator made by calling a generator function while tracing. As in Python, its body
    runs only as it is iterated, up to one yield per `next()`: the consumer's loop body and
    the generator's steps interleave (side effects on shared state, a list the generator
    reads that the consumer appends to), which running it to completion up front got wrong.

    Until its first step it is just the call that made it (`function(*args, **kwargs)`), which
    is how a graph break before that step hands it on."""

    def __init__(self, frame, function: Value, args: list[Value], kwargs: dict[str, Value]):
        super().__init__([])
        self.frame = frame
        self.call = (function, list(args), dict(kwargs))
        self.started = False
        self.finished = False
        self.running = False  # CPython's gi_running: its body is being run

    def describe(self):
        return f"generator {self.frame.code.co_name}"

    def python_type(self):
        return types.GeneratorType

    def next(self) -> Value | None:
        if self.finished:
            return None
        if self.running:  # its own body asked it for the next item (`yield next(gen)`)
            raise_user_error(None, ValueError, "generator already executing")
        self.started = self.running = True
        try:
            result = self.frame.run()  # to the next yield, or the return
        except UserException as exc:
            self.finished = True
            raise _escaped_generator(exc) from None
        except BaseException:
            self.finished = True
            raise
        finally:
            self.running = False
        if self.frame.yielded:
            return self.frame.yielded.pop()
        self.finished = True
        self.returned = result  # what `yield from` over this generator evaluates to
        return None

    def unpack(self, frame):
        items = []
        while (item := self.next()) is not None:
            items.append(item)
        return items

    # --- send, throw, close: the generator protocol beyond iteration --------------------------
    def get_attr(self, frame, name):
        methods = {"send": self.send, "throw": self.throw, "close": self.close, "__next__": self._next_or_stop}
        if name not in methods:
            return super().get_attr(frame, name)
        method = methods[name]
        return NativeMethodValue(lambda frame, generator, *args: method(frame, *args), self, f"generator.{name}")

    def _next_or_stop(self, frame) -> Value:
        item = self.next()
        if item is None:
            raise UserException(self.stop_iteration())
        return item

    def send(self, frame, value: Value) -> Value:
        if not self.started and not (value.is_python_constant() and value.as_python_constant() is None):
            raise_user_error(frame, TypeError, "can't send non-None value to a just-started generator")
        if self.started and not self.finished:
            self.frame.stack[-1] = value  # where YIELD_VALUE left None for the value sent in
        return self._next_or_stop(frame)

    def throw(self, frame, exc: Value, *rest: Value) -> Value:
        if not isinstance(exc, ExceptionValue):  # `throw(ValueError)` or `throw(ValueError, value)`
            exc = _thrown_exception(frame, exc, rest[0] if rest else None)
            if not isinstance(exc, ExceptionValue):
                raise Unsupported(f"generator.throw() of {exc.describe()}")
        if not self.started or self.finished:
            self.finished = True
            raise UserException(exc)
        inner = self._delegate()
        if isinstance(inner, GeneratorValue):
            # Suspended in `yield from inner`: as CPython's gen_throw, the exception goes to
            # `inner` first (GeneratorExit closes it, then is raised here). What `inner` yields
            # is the answer; its return resumes this generator after the `yield from`; an
            # exception it lets out is raised here.
            if issubclass(exc.python_type(), GeneratorExit):
                inner.close(frame)
            else:
                try:
                    return inner.throw(frame, exc)
                except UserException as raised:
                    if not issubclass(raised.value.python_type(), StopIteration):
                        exc = raised.value
                    else:
                        args = raised.value.args if isinstance(raised.value, ExceptionValue) else []
                        inner.returned = args[0] if args else None  # what SEND hands on
                        return self._next_or_stop(frame)
        try:
            # Raised where the generator is suspended (its yield), routed through its handlers.
            self.frame.throw(UserException(exc))
        except UserException as escaped:
            self.finished = True
            raise _escaped_generator(escaped) from None
        return self._next_or_stop(frame)

    def _delegate(self) -> Value | None:
        """The iterator of the `yield from` this generator is suspended in (CPython's
        gi_yieldfrom): its YIELD_VALUE follows a SEND, which left the iterator below."""
        inst = self.frame.current
        listing = self.frame.listing
        index = listing.index_of_offset.get(inst.offset) if inst is not None else None
        if index and inst.opname == "YIELD_VALUE" and listing.instructions[index - 1].opname == "SEND":
            return self.frame.stack[-2]
        return None

    def close(self, frame) -> Value:
        if not self.started or self.finished:
            self.finished = True
            return ConstantValue(None)
        try:
            self.throw(frame, ExceptionValue(GeneratorExit, []))
        except UserException as exc:
            if issubclass(exc.value.python_type(), (GeneratorExit, StopIteration)):
                return ConstantValue(None)
            raise
        raise_user_error(frame, RuntimeError, "generator ignored GeneratorExit")

    def reconstruct(self, writer):
        if self.started:
            raise Unsupported(f"handing on {self.describe()}, which is suspended in the middle of the traced code")
        function, args, kwargs = self.call
        arguments = [writer.value(a) for a in args] + [f"{k}={writer.value(v)}" for k, v in kwargs.items()]
        return writer.bind(self, f"{writer.value(function)}({', '.join(arguments)})")

    def inner_values(self):
        function, args, kwargs = self.call
        return [] if self.started else [function, *args, *kwargs.values()]


def _escaped_generator(exc: UserException) -> UserException:
    """What leaves a generator's body: PEP 479 turns a StopIteration raised inside it (an
    inner `next()` running dry, an explicit raise) into RuntimeError, caused by it, so that it
    cannot pass for the generator's own end. (3.12 compiles this into the body as
    CALL_INTRINSIC_1 STOPITERATION_ERROR; 3.11's interpreter does it at the frame's edge.)"""
    stop = exc.value
    if not issubclass(stop.python_type(), StopIteration) or not isinstance(stop, ExceptionValue):
        return exc
    error = ExceptionValue(RuntimeError, [ConstantValue("generator raised StopIteration")])
    error.cause, error.suppress_context, error.context = stop, True, stop
    return UserException(error)


def _thrown_exception(frame, kind: Value, value: Value | None) -> Value:
    """The exception `generator.throw(kind, value)` raises, normalized as CPython does: a value
    that is already an instance of `kind` is raised itself (contextlib's __exit__ passes
    (type, exc, tb) and then checks `exc is value`: a copy would escape as a new exception);
    None gives kind(), a tuple kind(*value), anything else kind(value)."""
    if value is None or (value.is_python_constant() and value.as_python_constant() is None):
        args = []
    elif isinstance(value, ExceptionValue) and kind.is_python_constant() and issubclass(value.python_type(), kind.as_python_constant()):
        return value
    elif isinstance(value, TupleValue):
        args = list(value.items)
    else:
        args = [value]
    return kind.call(frame, args, {})


class FunctionValue(InlinableFunction):
    """A function that exists before tracing (from the user's modules or libraries)."""

    def __init__(self, fn: types.FunctionType, source=None):
        super().__init__(source)
        self.fn = fn
        self.code = fn.__code__
        self.f_globals = fn.__globals__
        self.name = fn.__qualname__

    def describe(self):
        return f"function {self.name}"

    def as_python_constant(self):
        return self.fn

    def identity(self):
        return self.fn

    def _part_source(self, attribute: str, key):
        # Defaults are guarded one by one: nested functions are guarded by code, not
        # identity (see wrap), and any function's defaults can be reassigned or, when
        # mutable (`cache={}`), changed in place between calls.
        if self.source is None:
            return None
        return ItemSource(AttrSource(self.source, attribute), key)

    def defaults(self, frame):
        wrap = frame.session.wrap
        return tuple(wrap(d, self._part_source("__defaults__", i)) for i, d in enumerate(self.fn.__defaults__ or ()))

    def kwdefaults(self, frame):
        real = self.fn.__kwdefaults__
        if not real:
            return {}
        # Through the dict as one value: the same dict reached another way in this trace
        # (`d = g.__kwdefaults__; d['k'] = 7` before a break hands it on) has its recorded
        # changes, which the call must see.
        table = frame.session.wrap(real, AttrSource(self.source, "__kwdefaults__") if self.source is not None else None)
        return {key.as_python_constant(): value for key, value in table.entries.values()}

    def closure_cells(self, frame):
        cells = self.fn.__closure__ or ()
        return {
            name: ExistingCellValue(cell, frame.session.closure_source(self, i))
            for i, (name, cell) in enumerate(zip(self.code.co_freevars, cells))
        }

    def get_attr(self, frame, name):
        # What functools.wraps copies (`__name__` may differ from the code's name then).
        if name in ("__wrapped__", "__self__", "__func__", "__dict__", "__module__", "__doc__", "__name__",
                    "__qualname__", "__annotations__", "__type_params__"):  # fmt: skip
            if not hasattr(self.fn, name):
                if self.source is not None:
                    frame.session.add_guard(HasAttr(self.source, name, False))
                raise_user_error(frame, AttributeError, f"'function' object has no attribute {name!r}")
            # Read through the function: all of these can be reassigned between calls.
            return frame.session.wrap(getattr(self.fn, name), AttrSource(self.source, name) if self.source is not None else None)
        return super().get_attr(frame, name)

    def has_attr(self, frame, name):
        present = hasattr(self.fn, name)
        if self.source is not None:
            frame.session.add_guard(HasAttr(self.source, name, present))
        return present

    def reconstruct(self, writer):
        return writer.existing(self, self.as_python_constant())


class NestedFunctionValue(InlinableFunction):
    """A function made by MAKE_FUNCTION while tracing (closures, lambdas, comprehensions on
    3.11): its defaults and cells are symbolic values. Attributes the traced code sets on it
    (`functools.wraps` sets `__name__`, `__doc__`, `__wrapped__`...) are kept in `attrs`:
    the function is new, so they are part of it, not side effects."""

    def __init__(self, code, f_globals, name, defaults, kwdefaults, cells, annotations: Value | None = None):
        super().__init__(None)
        self.code = code
        self.f_globals = f_globals
        self.name = name
        self._defaults = tuple(defaults)
        self._kwdefaults = dict(kwdefaults)
        self._cells = cells
        self.attrs: dict[str, Value] = {}
        if annotations is not None:
            # Kept as the function's own dict: the program may read, change or hand it on.
            self.attrs["__annotations__"] = annotations

    def describe(self):
        return f"function {self.name} (defined in the traced code)"

    def get_attr(self, frame, name):
        if name in self.attrs:
            return self.attrs[name]
        if name == "__name__":
            return ConstantValue(self.code.co_name)
        if name == "__module__":
            return frame.session.wrap(self.f_globals.get("__name__"), None)
        if name == "__doc__":
            # The docstring, where CPython finds it (the first constant, for some versions only
            # when the code says it has one): ask a real function made from the same code.
            cells = tuple(types.CellType() for _ in self.code.co_freevars)
            return ConstantValue(types.FunctionType(self.code, {}, None, None, cells).__doc__)
        if name == "__annotations__":
            # An unannotated function makes its empty dict on the first read and keeps it.
            self.attrs[name] = DictValue({})
            return self.attrs[name]
        if name == "__type_params__":
            return TupleValue([])
        if name == "__dict__":
            raise Unsupported(f"reading __dict__ of {self.describe()}")
        return super().get_attr(frame, name)

    def set_attr(self, frame, name, value):
        if name in ("__code__", "__defaults__", "__kwdefaults__", "__closure__", "__globals__", "__dict__"):
            raise Unsupported(f"setting {name} of {self.describe()}")
        self.attrs[name] = value

    def has_attr(self, frame, name):
        if name in self.attrs:
            return True
        cells = tuple(types.CellType() for _ in self.code.co_freevars)
        return hasattr(types.FunctionType(self.code, {}, None, None, cells), name)

    def defaults(self, frame):
        return self._defaults

    def kwdefaults(self, frame):
        return self._kwdefaults

    def closure_cells(self, frame):
        return dict(zip(self.code.co_freevars, self._cells))

    def reconstruct(self, writer):
        defaults = "".join(writer.value(d) + ", " for d in self._defaults)
        kwdefaults = ", ".join(f"{k!r}: {writer.value(v)}" for k, v in self._kwdefaults.items())
        cells = "".join(writer.value(c) + ", " for c in self._cells)
        attrs = ", ".join(f"{k!r}: {writer.value(v)}" for k, v in self.attrs.items())
        if writer.is_bound(self):
            return writer.value(self)  # made while making its own cells (it calls itself)
        builder = writer.name_for(_new_function, "new_function")
        code = writer.name_for(self.code, f"code_{self.code.co_name}")
        f_globals = writer.name_for(self.f_globals, "globals")
        return writer.bind(
            self,
            f"{builder}({code}, {f_globals}, {self.name!r}, ({defaults}), {{{kwdefaults}}}, ({cells}), {{{attrs}}})",
        )

    def inner_values(self):
        return [*self._defaults, *self._kwdefaults.values(), *self._cells, *self.attrs.values()]


def _new_function(
    code: types.CodeType, f_globals: dict, qualname: str, defaults: tuple, kwdefaults: dict, closure: tuple, attrs: dict
):
    """A function made by the traced code (a closure, a lambda), rebuilt over real cells,
    with the attributes the traced code set on it."""
    fn = types.FunctionType(code, f_globals, code.co_name, defaults or None, closure or None)
    fn.__kwdefaults__ = kwdefaults or None
    fn.__qualname__ = qualname
    for name, value in attrs.items():
        setattr(fn, name, value)
    return fn
