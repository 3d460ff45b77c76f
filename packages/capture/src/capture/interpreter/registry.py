"""The opcode registry: one handler per opname, filled by `@handles(...)` next to each rule.

A handler is `handler(frame, inst)`; it reads and writes `frame.stack`, locals and cells, and
moves `frame.ip` for jumps. Which opnames exist differs between CPython versions; a handler may
be registered for names that only one version has, and the version differences of an opcode
that both have are handled inside its handler.
"""

from __future__ import annotations

import dis
from typing import Callable

from fake_tensor.registries import register_once

# Opnames of one supported CPython only. Every other registered name must be one of this
# interpreter's (`dis.opmap`), so a misspelt opname fails at import instead of never matching.
ONLY_IN_311 = frozenset({
    "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP", "LIST_TO_TUPLE", "POP_JUMP_BACKWARD_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_TRUE",
    "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
    "POP_JUMP_FORWARD_IF_TRUE", "PRECALL", "UNARY_POSITIVE",
})
ONLY_IN_312 = frozenset({
    "BINARY_SLICE", "CALL_INTRINSIC_1", "END_FOR", "END_SEND", "JUMP", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_CHECK",
    "LOAD_SUPER_ATTR", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE", "POP_JUMP_IF_TRUE",
    "RETURN_CONST", "STORE_SLICE",
})
KNOWN_OPNAMES = frozenset(dis.opmap) | ONLY_IN_311 | ONLY_IN_312

HANDLERS: dict[str, Callable] = {}


def check_opname(name: str) -> None:
    if name not in KNOWN_OPNAMES:
        raise ValueError(f"{name} is no opname of CPython 3.11 or 3.12")


def handles(*opnames: str):
    def register(handler):
        for name in opnames:
            check_opname(name)
        return register_once(HANDLERS, opnames, handler, "handlers")

    return register
