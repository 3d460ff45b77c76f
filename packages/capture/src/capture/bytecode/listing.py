"""A code object decoded once into what the interpreter walks: instructions by index, jump
targets by offset, each instruction's source line, and the exception table (with the kind of
each handler, which graph breaks need: a resume function can start inside a `with` block it
re-enters, not inside a `try`).
"""

from __future__ import annotations

import dis
import types
from dataclasses import dataclass, field
from functools import lru_cache

# Instructions that only carry data for the adaptive interpreter or the next instruction's
# argument; `dis` already folds EXTENDED_ARG into the argument that follows it.
_SKIPPED = frozenset({"CACHE", "EXTENDED_ARG"})


@dataclass(frozen=True)
class ExceptionTableEntry:
    """One row of a 3.11+ exception table (CPython's Objects/exception_handling_notes.txt):
    an exception raised by an instruction in [start, end) unwinds the stack to `depth`, pushes
    the offset of the raising instruction when `lasti`, then the exception, and jumps to
    `target`. Offsets are in bytes."""

    start: int
    end: int
    target: int
    depth: int
    lasti: bool


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    # 6 bits of value per byte, most significant first; bit 6 says another byte follows.
    byte = data[pos]
    value = byte & 63
    while byte & 64:
        pos += 1
        byte = data[pos]
        value = (value << 6) | (byte & 63)
    return value, pos + 1


def _parse_exception_table(code: types.CodeType) -> tuple[ExceptionTableEntry, ...]:
    data = code.co_exceptiontable
    entries = []
    pos = 0
    while pos < len(data):
        start, pos = _read_varint(data, pos)
        length, pos = _read_varint(data, pos)
        target, pos = _read_varint(data, pos)
        depth_lasti, pos = _read_varint(data, pos)
        # The table counts 2-byte code units; everything else here counts bytes.
        entries.append(
            ExceptionTableEntry(
                start=start * 2,
                end=(start + length) * 2,
                target=target * 2,
                depth=depth_lasti >> 1,
                lasti=bool(depth_lasti & 1),
            )
        )
    return tuple(entries)


# The first instructions of the handlers CPython's compiler writes for `with` blocks and for
# re-raising out of a handler (the same in 3.11 and 3.12); any other handler belongs to a
# `try` statement (or, in 3.12, to an inlined comprehension restoring its variable).
_WITH_HANDLER = ("PUSH_EXC_INFO", "WITH_EXCEPT_START")
_CLEANUP_HANDLER = ("COPY", "POP_EXCEPT", "RERAISE")


@dataclass(frozen=True)
class CodeListing:
    code: types.CodeType
    instructions: tuple[dis.Instruction, ...]
    index_of_offset: dict[int, int]
    lines: tuple[int | None, ...]
    exception_table: tuple[ExceptionTableEntry, ...]
    _chains: dict = field(default_factory=dict, compare=False, repr=False)

    def handler_chain(self, offset: int) -> tuple[tuple[ExceptionTableEntry, str], ...]:
        """The handlers an exception raised at `offset` may pass through, innermost first,
        each with its kind: "with" (a `with` block's exit), "cleanup" (re-raising out of a
        handler) or "try". The table is flat (one entry per instruction), so the enclosing
        blocks are found by following each handler's own entry."""
        chain = self._chains.get(offset)
        if chain is None:
            found = []
            entry = self.handler_for(offset)
            while entry is not None and len(found) < 64:
                found.append((entry, self._handler_kind(entry.target)))
                entry = self.handler_for(entry.target)
            chain = self._chains[offset] = tuple(found)
        return chain

    def _handler_kind(self, target: int) -> str:
        start = self.index(target)
        names = tuple(inst.opname for inst in self.instructions[start : start + 3])
        if names[:2] == _WITH_HANDLER:
            return "with"
        if names == _CLEANUP_HANDLER:
            return "cleanup"
        return "try"

    @property
    def passed_cells(self) -> tuple[str, ...]:
        """Cell variables that are parameters the code does not turn into cells itself (no
        MAKE_CELL): a resume function receives its frame's cells ready made."""
        made = {inst.argval for inst in self.instructions if inst.opname == "MAKE_CELL"}
        parameters = self.code.co_varnames[: self.code.co_argcount]
        return tuple(name for name in self.code.co_cellvars if name in parameters and name not in made)

    def next_offset(self, offset: int) -> int:
        """The offset of the instruction after the one at `offset`."""
        return self.instructions[self.index_of_offset[offset] + 1].offset

    def handler_for(self, offset: int) -> ExceptionTableEntry | None:
        """The innermost handler covering the instruction at `offset` (entries are disjoint
        ranges, so the first match is the one)."""
        for entry in self.exception_table:
            if entry.start <= offset < entry.end:
                return entry
        return None

    def index(self, offset: int) -> int:
        """Index of the first real instruction at or after `offset` (jump targets)."""
        while offset not in self.index_of_offset:
            offset += 2
        return self.index_of_offset[offset]


@lru_cache(maxsize=4096)
def decode(code: types.CodeType) -> CodeListing:
    instructions = tuple(i for i in dis.get_instructions(code) if i.opname not in _SKIPPED)
    lines = []
    line = code.co_firstlineno
    for inst in instructions:
        if inst.positions is not None and inst.positions.lineno is not None:
            line = inst.positions.lineno
        lines.append(line)
    return CodeListing(
        code=code,
        instructions=instructions,
        index_of_offset={inst.offset: i for i, inst in enumerate(instructions)},
        lines=tuple(lines),
        exception_table=_parse_exception_table(code),
    )
