"""functools' callables in compiled code: an lru_cache/cache wrapper (its call inlined) and a
partial object with symbolic bound arguments."""

from __future__ import annotations

import functools
import gc

from guards import CachedResultSource, HeldObjectSource, LocalSource, NotNone
from guards.sources import AttrSource, DictItemSource, has_literal_spelling

from ..errors import Unsupported
from ..sources import HeldSource
from .base import Value
from .constant import ConstantValue
from .containers import DictValue, TupleValue
from .objects import ObjectValue


class CachedFunctionValue(ObjectValue):
    """A functools.lru_cache / functools.cache wrapper.

    One the program made before the call, called with constant arguments (the usual use: a
    setting, a table, a mask for a length) before the trace has changed anything, is called
    for real, as the program calls it: its cache answers where the program's would (a value
    computed before a global it reads changed stays the answer, as in Python), else its body
    runs now, once, and the cache keeps the result. The result is read from the cache itself
    (`CachedResultSource`): guarded, and a tensor in it is a graph input read from the cache on
    each call; a guard never runs the body.

    Otherwise (symbolic arguments, or writes the trace made that the body might read, or a
    cache that cannot be read) the call inlines the wrapped function, as TorchDynamo does;
    within one trace the cache still answers a repeated call with the same constant arguments:
    the wrapped function runs once, and its side effects (a list it appends to) happen once, as
    in Python. Its other attributes (`cache_info`, `cache_clear`) are the real object's."""

    def call(self, frame, args, kwargs):
        pending = frame.session.side_effects.pending_attr(self.obj, "__wrapped__")
        if pending is None and not hasattr(self.obj, "__wrapped__"):
            raise Unsupported(f"calling {self.describe()} before functools.update_wrapper has set its __wrapped__")
        key = _call_arguments(args, kwargs)
        results = frame.session.cached_call_results
        if key is not None and (id(self.obj), key) in results:
            return results[(id(self.obj), key)]
        cache = self._readable_cache(key) if pending is None and not frame.session.side_effects else None
        if cache is not None:
            positional, keywords = key
            try:
                real = self.obj(*positional, **dict(keywords))
            except Exception as err:  # the program's own error, raised by its body
                frame.raise_real(err)
            source = cache.source_of(self.source, real)
            if source.bounded:
                # Found in the cache before any bounded cache is called: the calls come last
                # (their hits and recency are the program's), and an entry whose second cache
                # lost its key must fail before the first one's call marks it used.
                frame.session.add_guard(NotNone(DictItemSource(source.cache, source.key)))
            result = frame.session.wrap(real, source)
        else:
            result = self.get_attr(frame, "__wrapped__").call(frame, args, kwargs)
        if key is not None:
            results[(id(self.obj), key)] = result
        return result

    def _readable_cache(self, key) -> LruCache | None:
        """The wrapper's cache, for arguments Python can spell and a cache the program keeps
        across calls: one reached from a module's globals or a closure cell. (None otherwise:
        one made in the call, handed to a resume function as a local, wraps a function whose
        cells the call holds.)"""
        root = self.source
        while getattr(root, "base", None) is not None:
            root = root.base
        if key is None or root is None or isinstance(root, (LocalSource, HeldSource)):
            return None
        return LruCache.of(self.obj, key)

    def get_attr(self, frame, name):
        if name == "cache_clear":
            raise Unsupported(f"{self.describe()}.cache_clear() inside the compiled function")
        return super().get_attr(frame, name)


def _call_arguments(args: list[Value], kwargs: dict[str, Value]):
    """(positional, keyword items) of a call whose every argument is a hashable constant."""
    if not all(v.is_python_constant() for v in (*args, *kwargs.values())):
        return None
    key = (tuple(a.as_python_constant() for a in args), tuple((k, v.as_python_constant()) for k, v in kwargs.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


class LruCache:
    """The dict a C functools.lru_cache wrapper keeps its entries in, and the key it files one
    call's arguments under (CPython's lru_cache_make_key), so that guards read the entry rather
    than call the wrapper.

    The wrapper exposes neither; `gc.get_referents` lists what it references in the order of
    CPython's lru_cache_tp_traverse (3.11 to 3.13): each list link's type, key and result, then
    the cache dict, the wrapped function, the keyword marker, the link type, the CacheInfo type
    and the wrapper's `__dict__`. Found from the CacheInfo type backwards, and checked (a dict
    as large as `cache_info().currsize` says, then holding the key after the call)."""

    def __init__(self, wrapper, cache: dict, key, call: str, bounded: bool):
        self.wrapper, self.cache, self.key, self.call, self.bounded = wrapper, cache, key, call, bounded

    @classmethod
    def of(cls, wrapper, arguments) -> LruCache | None:
        parameters = getattr(wrapper, "cache_parameters", None)  # set by functools.lru_cache
        parameters = parameters() if callable(parameters) else None
        if not isinstance(parameters, dict) or parameters.get("maxsize") == 0:  # maxsize 0 caches nothing
            return None
        info = wrapper.cache_info()
        referents = gc.get_referents(wrapper)
        ends = [i for i, obj in enumerate(referents) if obj is type(info)]
        if not ends or ends[-1] < 4:
            return None
        cache, marker = referents[ends[-1] - 4], referents[ends[-1] - 2]
        if type(cache) is not dict or len(cache) != info.currsize:
            return None
        positional, keywords = arguments
        key = _lru_cache_key(positional, keywords, parameters["typed"], marker)
        call = ", ".join([*map(repr, positional), *(f"{k}={v!r}" for k, v in keywords)])
        bounded = parameters["maxsize"] is not None
        if bounded and not has_literal_spelling([*positional, *(v for _, v in keywords)]):
            return None  # its guard calls the wrapper with these arguments
        return cls(wrapper, cache, key, call, bounded)

    def source_of(self, wrapper_source, result):
        """The source of `result`, which the wrapper answered just now for the key."""
        entry = self.cache.get(self.key, _MISSING)
        if entry is _MISSING or (not self.bounded and entry is not result):
            # The body emptied its own cache, or it is not the C lru_cache: the result has no
            # source to guard it by, and the body has run already.
            raise Unsupported(f"reading the cache of {self.wrapper!r}, which does not hold the call just made")
        name = getattr(self.wrapper, "__qualname__", "lru_cache")
        cache = HeldObjectSource(f"cache of {name}", id(self.cache), self.cache)
        key = HeldObjectSource(f"key of {name}", id(self.key), self.key)
        return CachedResultSource(wrapper_source, cache, key, self.call, self.bounded)


_MISSING = object()


def _lru_cache_key(positional: tuple, keywords: tuple, typed: bool, marker: object):
    """The key CPython's lru_cache files a call under (lru_cache_make_key): a lone int or str
    argument itself, the arguments tuple without keywords, else the arguments, the marker and
    the keyword items flattened, then (typed) the types of every argument."""
    if not typed and not keywords:
        if len(positional) == 1 and type(positional[0]) in (int, str):
            return positional[0]
        return positional
    key = list(positional)
    if keywords:
        key.append(marker)
        for name, value in keywords:
            key += [name, value]
    if typed:
        key += [type(value) for value in positional]
        key += [type(value) for _, value in keywords]
    return tuple(key)


class PartialValue(Value):
    """functools.partial(func, *args, **kwargs) with symbolic bound arguments."""

    def __init__(self, func: Value, args: list[Value], kwargs: dict[str, Value], source=None):
        super().__init__(source)
        self.func = func
        self.args = list(args)
        # `p.keywords` is the partial's own dict (CPython hands out the dict it calls with):
        # one value, so that a change made through it shows in the next call, and is replayed
        # onto the real partial's dict for one passed in.
        self.keywords = DictValue({k: (ConstantValue(k), v) for k, v in kwargs.items()},
                                  source=AttrSource(source, "keywords") if source is not None else None)

    @property
    def kwargs(self) -> dict[str, Value]:
        return {key.as_python_constant(): value for key, value in self.keywords.entries.values()}

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
            return self.keywords
        return super().get_attr(frame, name)

    def inner_values(self):
        return [self.func, *self.args, *self.kwargs.values()]
