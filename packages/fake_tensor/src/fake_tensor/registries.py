"""One rule per key: the check every decorator-filled registry of the compiler makes (opcode
handlers by opname, lowerings by ATen overload, guard emitters by guard kind, bound rules by
sympy class...). A second rule for a key is a mistake that would otherwise win silently, or
never run; refusing it at import names both.

It lives here, in the lowest layer, because every package has such tables and all of them
depend on fake_tensor (as for logs.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

Rule = TypeVar("Rule")


def register_once(table: dict, keys: Iterable, rule: Rule, what: str) -> Rule:
    """Enter `rule` under each of `keys` (a key named twice counts once); returns `rule`.

    Raises ValueError "two <what> for <key>: <old> and <new>" if a key has a rule already,
    leaving `table` as it was."""
    keys = list(dict.fromkeys(keys))
    for key in keys:
        if key in table:
            name = key.__name__ if isinstance(key, type) else key
            raise ValueError(f"two {what} for {name}: {table[key]} and {rule}")
    for key in keys:
        table[key] = rule
    return rule
