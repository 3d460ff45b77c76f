"""Argument checking for calls capture answers with a rule: a call the real callable rejects
raises the TypeError eager raises, and a call form a rule does not model is refused (the graph
breaks and the call runs natively) instead of being answered with its extra arguments ignored.

Two signatures per callable: what the callable itself accepts (`inspect.signature`, or, for
the builtins without a text signature, the spelling of CPython's documentation written here),
and what its rule accepts (`accepts=` at registration; by default the same).
"""

from __future__ import annotations

import collections
import functools
import inspect
from typing import Any

import torch

from ..errors import Unsupported
from ..type_keys import WeakTypeTable, get_by_type
from ..values.exceptions import raise_user_error

# Builtins whose C implementation carries no text signature (`inspect.signature` fails), as
# the Python documentation spells their parameters. `_` marks an optional argument.
_DOCUMENTED = {
    getattr: "(object, name, default=_, /)",
    iter: "(object, sentinel=_, /)",
    next: "(iterator, default=_, /)",
    # No required parameter: _min_max raises CPython's own words for a call without one.
    max: "(*args, key=_, default=_)",
    min: "(*args, key=_, default=_)",
    type: "(object_or_name, bases=_, dict=_, /)",
    range: "(start_or_stop, stop=_, step=_, /)",
    slice: "(start_or_stop, stop=_, step=_, /)",
    zip: "(*iterables, strict=False)",
    map: "(function, iterable, /, *iterables)",
    filter: "(function, iterable, /)",
    set: "(iterable=_, /)",
    frozenset: "(iterable=_, /)",
    dict: "(mapping_or_iterable=_, /, **kwargs)",
    collections.OrderedDict: "(mapping_or_iterable=_, /, **kwargs)",
    int: "(x=_, /, base=_)",
    bool: "(x=_, /)",
    str: "(object=_, encoding=_, errors=_)",
    super: "(type=_, object_or_type=_, /)",
    functools.partial: "(func, /, *args, **keywords)",
    # Its __init__ takes nothing, but its __new__ decorates a function passed to it.
    torch.no_grad: "(orig_func=_)",
    list.__getitem__: "(self, index, /)",
    dict.__getitem__: "(self, key, /)",
    set.__contains__: "(self, key, /)",
    frozenset.__contains__: "(self, key, /)",
    dict.keys: "(self, /)",
    dict.values: "(self, /)",
    dict.items: "(self, /)",
    dict.copy: "(self, /)",
    dict.clear: "(self, /)",
    dict.pop: "(self, key, default=_, /)",
    dict.update: "(self, other=_, /, **kwargs)",
    set.add: "(self, element, /)",
    set.discard: "(self, element, /)",
    set.update: "(self, /, *others)",
    set.union: "(self, /, *others)",
    set.intersection: "(self, /, *others)",
    set.difference: "(self, /, *others)",
    set.issubset: "(self, other, /)",
    set.issuperset: "(self, other, /)",
    frozenset.union: "(self, /, *others)",
    frozenset.intersection: "(self, /, *others)",
    frozenset.difference: "(self, /, *others)",
}
# OrderedDict's own methods take what dict's take.
for _name in ("keys", "values", "items", "copy", "pop", "update"):
    _DOCUMENTED[getattr(collections.OrderedDict, _name)] = _DOCUMENTED[getattr(dict, _name)]

# What a rule accepts where that is less than the callable: callable -> Signature.
RULE_ACCEPTS: dict[Any, inspect.Signature] = {}


def parse_signature(text: str) -> inspect.Signature:
    """An `inspect.Signature` from its spelling, `"(a, b=_, /, *rest)"`."""
    namespace: dict[str, Any] = {"_": None}
    exec(f"def f{text}: pass", namespace)  # noqa: S102 (spellings written in this package)
    return inspect.signature(namespace["f"])


@functools.cache
def _callable_signature(fn: Any) -> inspect.Signature | None:
    return _signature(fn, _DOCUMENTED.get(fn))


def _signature(fn: Any, text: str | None) -> inspect.Signature | None:
    if text is not None:
        return parse_signature(text)
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


# Classes by identity, held weakly: a class's hash and == are its metaclass's (type_keys.py),
# and a user's class (a list subclass defined in a function) must not live on in a cache.
_CLASS_SIGNATURES = WeakTypeTable()


def callable_signature(fn: Any) -> inspect.Signature | None:
    """What `fn` accepts, when that is known."""
    if isinstance(fn, type):
        signature = _CLASS_SIGNATURES.get(fn, _UNKNOWN)
        if signature is _UNKNOWN:
            signature = _CLASS_SIGNATURES[fn] = _signature(fn, get_by_type(_DOCUMENTED, fn))
        return signature
    try:
        return _callable_signature(fn)
    except TypeError:  # unhashable callables
        return None


_UNKNOWN = object()


def check_arguments(frame, fn: Any, args: list, kwargs: dict, *, rule_key: Any = None) -> None:
    """Raise the traced program's TypeError when `fn` rejects these arguments, `Unsupported`
    when the rule registered for `rule_key` (default `fn`; a base class for constructing a
    subclass) does not model them."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    signature = callable_signature(fn)
    if signature is not None:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as err:
            raise_user_error(frame, TypeError, f"{name}(): {err}")
    accepts = RULE_ACCEPTS.get(fn if rule_key is None else rule_key)
    if accepts is not None:
        try:
            accepts.bind(*args, **kwargs)
        except TypeError:
            raise Unsupported(
                f"{name}() called with arguments capture does not model ({len(args)} positional, "
                f"keywords {sorted(kwargs)})"
            ) from None
