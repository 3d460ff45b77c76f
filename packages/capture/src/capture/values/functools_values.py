"""functools' callables in compiled code: an lru_cache/cache wrapper (its call inlined) and a
partial object with symbolic bound arguments."""

from __future__ import annotations

import functools

from guards import CallSource, LocalSource, SourceError

from ..errors import Unsupported
from ..sources import HeldSource
from .base import Value
from .containers import DictValue, TupleValue
from .objects import ObjectValue


class CachedFunctionValue(ObjectValue):
    """A functools.lru_cache / functools.cache wrapper.

    One the program made before the call, called with constant arguments (the usual use: a
    setting, a table, a mask for a length) before the trace has changed anything, is called
    for real, as the program calls it: its cache answers where the program's would (a value
    computed before a global it reads changed stays the answer, as in Python), else its body
    runs now, once, and the cache keeps the result. The result is read through that call (`CallSource`): guarded, and a
    tensor in it is a graph input read by calling the cache again on each call.

    Otherwise (symbolic arguments, or writes the trace made that the body might read) the call
    inlines the wrapped function, as TorchDynamo does; within one trace the cache still
    answers a repeated call with the same constant arguments: the wrapped function runs once,
    and its side effects (a list it appends to) happen once, as in Python. Its other
    attributes (`cache_info`, `cache_clear`) are the real object's."""

    def call(self, frame, args, kwargs):
        pending = frame.session.side_effects.pending_attr(self.obj, "__wrapped__")
        if pending is None and not hasattr(self.obj, "__wrapped__"):
            raise Unsupported(f"calling {self.describe()} before functools.update_wrapper has set its __wrapped__")
        key = _cache_key(args, kwargs)
        results = frame.session.cached_call_results
        if key is not None and (id(self.obj), key) in results:
            return results[(id(self.obj), key)]
        source = self._call_source(key) if pending is None and not frame.session.side_effects else None
        if source is not None:
            try:
                real = self.obj(*key[0], **dict(key[1]))
            except Exception as err:  # the program's own error, raised by its body
                frame.raise_real(err)
            result = frame.session.wrap(real, source)
        else:
            result = self.get_attr(frame, "__wrapped__").call(frame, args, kwargs)
        if key is not None:
            results[(id(self.obj), key)] = result
        return result

    def _call_source(self, key):
        """The source of this call's result, for arguments Python can spell and a cache the
        program keeps across calls: one reached from a module's globals or a closure cell.
        (None otherwise: one made in the call, handed to a resume function as a local, wraps
        a function whose cells the call holds; and the guard function calls the cache, which
        must then be a hit or a miss the program's own call would make.)"""
        root = self.source
        while getattr(root, "base", None) is not None:
            root = root.base
        if key is None or root is None or isinstance(root, (LocalSource, HeldSource)):
            return None
        try:
            return CallSource(self.source, key[0], key[1])
        except SourceError:
            return None

    def get_attr(self, frame, name):
        if name == "cache_clear":
            raise Unsupported(f"{self.describe()}.cache_clear() inside the compiled function")
        return super().get_attr(frame, name)


def _cache_key(args: list[Value], kwargs: dict[str, Value]):
    """The key lru_cache files a call under, when every argument is a hashable constant."""
    if not all(v.is_python_constant() for v in (*args, *kwargs.values())):
        return None
    key = (tuple(a.as_python_constant() for a in args), tuple((k, v.as_python_constant()) for k, v in kwargs.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


class PartialValue(Value):
    """functools.partial(func, *args, **kwargs) with symbolic bound arguments."""

    def __init__(self, func: Value, args: list[Value], kwargs: dict[str, Value], source=None):
        super().__init__(source)
        self.func = func
        self.args = list(args)
        self.kwargs = dict(kwargs)

    def describe(self):
        return f"functools.partial({self.func.describe()})"

    def python_type(self):
        return functools.partial

    def has_attr(self, frame, name):
        return name in ("func", "args", "keywords") or hasattr(functools.partial, name)

    def call(self, frame, args, kwargs):
        return self.func.call(frame, [*self.args, *args], {**self.kwargs, **kwargs})

    def get_attr(self, frame, name):
        if name == "func":
            return self.func
        if name == "args":
            return TupleValue(self.args)
        if name == "keywords":
            return DictValue.from_str_keys(self.kwargs)
        return super().get_attr(frame, name)

    def inner_values(self):
        return [self.func, *self.args, *self.kwargs.values()]
