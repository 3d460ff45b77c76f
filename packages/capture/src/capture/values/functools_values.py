"""functools' callables in compiled code: an lru_cache/cache wrapper (its call inlined) and a
partial object with symbolic bound arguments."""

from __future__ import annotations

import functools

from ..errors import Unsupported
from .base import Value
from .containers import DictValue, TupleValue
from .objects import ObjectValue


class CachedFunctionValue(ObjectValue):
    """A functools.lru_cache / functools.cache wrapper. A call inlines the wrapped function, as
    TorchDynamo does: the cache would hold values of one trace (fake tensors, symbols), and a
    compiled entry runs the graph, not the function, on later calls. Its other attributes
    (`cache_info`, `cache_clear`) are the real object's.

    Within one trace the cache still answers a repeated call with the same constant arguments:
    the wrapped function runs once, and its side effects (a list it appends to) happen once,
    as in Python. (Across calls of the compiled function a long-lived cache would skip the
    body where the compiled code replays it; a cached function with side effects is the
    user's to avoid, as with torch.compile.)"""

    def call(self, frame, args, kwargs):
        pending = frame.session.side_effects.pending_attr(self.obj, "__wrapped__")
        if pending is None and not hasattr(self.obj, "__wrapped__"):
            raise Unsupported(f"calling {self.describe()} before functools.update_wrapper has set its __wrapped__")
        key = _cache_key(args, kwargs)
        results = frame.session.cached_call_results
        if key is not None and (id(self.obj), key) in results:
            return results[(id(self.obj), key)]
        result = self.get_attr(frame, "__wrapped__").call(frame, args, kwargs)
        if key is not None:
            results[(id(self.obj), key)] = result
        return result

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
