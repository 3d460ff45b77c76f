"""Which locals a code object may still read from a given offset on (liveness).

A graph break hands the live locals to the resume function; dead ones are left behind, so a
value capture cannot rebuild (a closure, a generator half consumed) only stops a break when
the rest of the function still needs it. The analysis is the textbook backward one over the
decoded instructions, with an edge from every instruction an exception table entry covers to
its handler. Cell variables are always live (closures made before the break may read them).
"""

from __future__ import annotations

import dis
import types
from functools import lru_cache

from .listing import CodeListing, decode

_READS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "DELETE_FAST"})
_WRITES = frozenset({"STORE_FAST"})
# Instructions after which control never falls through to the next one.
_NO_FALLTHROUGH = frozenset(
    {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
     "JUMP_BACKWARD_NO_INTERRUPT", "JUMP"}
)  # fmt: skip
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def live_locals(code: types.CodeType, offset: int) -> tuple[str, ...]:
    """Names of the locals (in `co_varnames` order) that may be read at or after `offset`
    before being written; cell variables included."""
    live = _live_in(code)[decode(code).index(offset)]
    names = [name for name in code.co_varnames if name in live]
    names += [name for name in code.co_cellvars if name not in names]
    if "__class__" in code.co_freevars and code.co_argcount and code.co_varnames[0] not in names:
        # Zero-argument super() reads the first local without naming it.
        names.insert(0, code.co_varnames[0])
    return tuple(names)


def _successors(listing: CodeListing, index: int) -> list[int]:
    inst = listing.instructions[index]
    found = []
    if inst.opname not in _NO_FALLTHROUGH and index + 1 < len(listing.instructions):
        found.append(index + 1)
    if inst.opcode in _JUMPS:
        found.append(listing.index(inst.argval))
    handler = listing.handler_for(inst.offset)
    if handler is not None:
        found.append(listing.index(handler.target))
    return found


@lru_cache(maxsize=1024)
def _live_in(code: types.CodeType) -> tuple[frozenset, ...]:
    listing = decode(code)
    count = len(listing.instructions)
    successors = [_successors(listing, i) for i in range(count)]
    live_in: list[frozenset] = [frozenset()] * count
    changed = True
    while changed:
        changed = False
        for i in reversed(range(count)):
            inst = listing.instructions[i]
            out = frozenset().union(*(live_in[s] for s in successors[i]))
            if inst.opname in _WRITES:
                out = out - {inst.argval}
            if inst.opname in _READS:
                out = out | {inst.argval}
            if out != live_in[i]:
                live_in[i] = out
                changed = True
    return tuple(live_in)
