"""The call-rule registry: `@rule(len)` registers `handler(frame, args, kwargs) -> Value`
for calls of `len`; `@construct_rule(list)` registers `handler(frame, cls, args, kwargs)` for
constructing a class (and its subclasses, with `subclasses=True`)."""

from __future__ import annotations

from typing import Any, Callable

CALL_RULES: dict[Any, Callable] = {}
CONSTRUCT_RULES: dict[type, tuple[Callable, bool]] = {}


def _register(table, keys, handler):
    # One rule may name the same callable twice (OrderedDict inherits most dict methods).
    for key in dict.fromkeys(keys):
        if key in table:
            raise ValueError(f"two call rules for {key!r}")
        table[key] = handler
    return handler


def rule(*callables):
    return lambda handler: _register(CALL_RULES, callables, handler)


def construct_rule(*classes, subclasses: bool = False):
    def register(handler):
        _register(CONSTRUCT_RULES, classes, (handler, subclasses))
        return handler

    return register
