"""The call-rule registry: `@rule(len)` registers `handler(frame, args, kwargs) -> Value`
for calls of `len`; `@construct_rule(list)` registers `handler(frame, cls, args, kwargs)` for
constructing a class (and its subclasses, with `subclasses=True`). `accepts="(x, /)"` says
which of the callable's argument forms a rule models, when it models fewer than the callable
takes (calls.signatures: the others are refused, not answered wrongly)."""

from __future__ import annotations

from typing import Any, Callable

from fake_tensor.registries import register_once

from .signatures import RULE_ACCEPTS, parse_signature

CALL_RULES: dict[Any, Callable] = {}
# Rules for functions of modules capture must not import (torch._dynamo: the boundary in
# DESIGN.md) or need not import until user code has, keyed by `module.qualname`; code written
# for torch.compile calls them.
NAMED_RULES: dict[str, Callable] = {}
_NAMED_RULE_MODULES = ("torch._dynamo", "torch._higher_order_ops.invoke_subgraph")
CONSTRUCT_RULES: dict[type, tuple[Callable, bool]] = {}
# Rules for functions carrying a mark rather than a registration (attribute name -> the rule
# for a function whose attribute is set, neither None nor False), as code written for
# torch.compile marks them.
MARK_RULES: dict[str, Callable[[Any], Callable]] = {}


def _register(table, keys, handler):
    # One rule may name the same callable twice (OrderedDict inherits most dict methods):
    # register_once counts it once.
    return register_once(table, keys, handler, "call rules")


def _accepts(keys, accepts: str | None) -> None:
    if accepts is not None:
        for key in keys:
            RULE_ACCEPTS[key] = parse_signature(accepts)


def rule(*callables, accepts: str | None = None):
    _accepts(callables, accepts)
    return lambda handler: _register(CALL_RULES, callables, handler)


def rule_named(*qualified_names: str):
    return lambda handler: _register(NAMED_RULES, qualified_names, handler)


def construct_rule(*classes, subclasses: bool = False, accepts: str | None = None):
    _accepts(classes, accepts)

    def register(handler):
        _register(CONSTRUCT_RULES, classes, (handler, subclasses))
        return handler

    return register


def rule_for(fn: Any) -> Callable | None:
    """The rule for `fn`, also when `fn` wraps a function that has one: torch re-wraps some
    functions after import (`torch.manual_seed` gets a functools.wraps wrapper once
    torch._dynamo is loaded), so rules are found through `__wrapped__`."""
    for _ in range(8):
        try:
            handler = CALL_RULES.get(fn)
        except TypeError:  # unhashable callables have no rule
            return None
        if handler is not None:
            return handler
        for mark, rule_of_marked in MARK_RULES.items():
            if getattr(fn, mark, None) not in (None, False):
                return rule_of_marked(fn)
        module = getattr(fn, "__module__", None)
        if module is not None and module.startswith(_NAMED_RULE_MODULES):
            handler = NAMED_RULES.get(f"{module}.{getattr(fn, '__qualname__', '')}")
            if handler is not None:
                return handler
        fn = getattr(fn, "__wrapped__", None)
        if fn is None:
            return None
    return None
