"""The opcode registry: one handler per opname, filled by `@handles(...)` next to each rule.

A handler is `handler(frame, inst)`; it reads and writes `frame.stack`, locals and cells, and
moves `frame.ip` for jumps. Which opnames exist differs between CPython versions; a handler may
be registered for names that only one version has, and the version differences of an opcode
that both have are handled inside its handler.
"""

from __future__ import annotations

from typing import Callable

HANDLERS: dict[str, Callable] = {}


def handles(*opnames: str):
    def register(handler):
        for name in opnames:
            if name in HANDLERS:
                raise ValueError(f"two handlers for {name}: {HANDLERS[name]} and {handler}")
            HANDLERS[name] = handler
        return handler

    return register
