"""The registry of ops that need more than "run the meta kernel", keyed by ATen overload.

A rule is `rule(mode, func, args, kwargs) -> result`: it refuses the op, adjusts what the
meta kernel returns, or replaces it. Rules live next to what they are about
(`data_dependent.py`, `constants.py`, `cpu_kernels.py`, `missing_meta_kernels.py`) and
register with `@rule_for(op, ...)`; `@rule_for_tag(tag)` gives a default to every op torch
tags so (an op's own rule wins over its tag's).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from fake_tensor.registries import register_once

Rule = Callable[[Any, torch._ops.OpOverload, tuple, dict], Any]

_RULES: dict[torch._ops.OpOverload, Rule] = {}
_TAG_RULES: dict[torch.Tag, Rule] = {}
_RESOLVED: dict[torch._ops.OpOverload, Rule | None] = {}


def rule_for(*ops: torch._ops.OpOverload) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        register_once(_RULES, ops, rule, "fake tensor rules")
        _RESOLVED.clear()
        return rule

    return register


def rule_for_tag(tag: torch.Tag) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        register_once(_TAG_RULES, [tag], rule, "fake tensor rules")
        _RESOLVED.clear()
        return rule

    return register


def rule_of(func: torch._ops.OpOverload) -> Rule | None:
    """The rule for `func`, or None when running its meta kernel is all it takes."""
    try:
        return _RESOLVED[func]
    except KeyError:
        pass
    rule = _RULES.get(func)
    if rule is None:
        rule = next((_TAG_RULES[tag] for tag in func.tags if tag in _TAG_RULES), None)
    _RESOLVED[func] = rule
    return rule


def bound_arguments(func: torch._ops.OpOverload, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The op's arguments by schema name, defaults filled in."""
    bound = {}
    for i, argument in enumerate(func._schema.arguments):
        if i < len(args):
            bound[argument.name] = args[i]
        elif argument.name in kwargs:
            bound[argument.name] = kwargs[argument.name]
        else:
            bound[argument.name] = argument.default_value if argument.has_default_value() else None
    return bound
