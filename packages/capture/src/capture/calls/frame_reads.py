"""`globals()`, `locals()`, `vars()` and `dir()`: they answer from the frame that calls them.
Code run at a graph break runs in the compiled entry's frame, not the user's, so a function
calling them without arguments runs natively (FrameRunsNatively); `vars(obj)` reads
`obj.__dict__`."""

from __future__ import annotations

import dis
import types

from ..errors import FrameRunsNatively, Unsupported
from ..values.exceptions import raise_user_error
from .registry import rule

_FRAME_READERS = {"locals": locals, "vars": vars, "dir": dir}


def check_reads_of_own_frame(code: types.CodeType, f_globals: dict) -> None:
    """Raise FrameRunsNatively if `code` calls `locals()`, `vars()` or `dir()` without
    arguments: they list every local of the function, which after a graph break its resume
    function would answer with the locals it received (the live ones, and the stack). So
    such a function runs natively from its first instruction, not from the call."""
    instructions = [inst for inst in dis.get_instructions(code) if inst.opname != "CACHE"]
    for inst, following in zip(instructions, instructions[1:]):
        if inst.opname not in ("LOAD_GLOBAL", "LOAD_NAME") or inst.argval not in _FRAME_READERS:
            continue
        reader = f_globals.get(inst.argval, _FRAME_READERS[inst.argval])
        if reader is _FRAME_READERS[inst.argval] and following.opname in ("PRECALL", "CALL") and following.arg == 0:
            raise _reads_the_frame(inst.argval)


def _reads_the_frame(name: str) -> FrameRunsNatively:
    return FrameRunsNatively(
        f"{name}() reads the calling frame",
        hint="the function runs natively, where its frame is the real one; pass what it needs as arguments to compile it",
    )


@rule(globals)
def _globals(frame, args, kwargs):
    raise _reads_the_frame("globals")


@rule(locals)
def _locals(frame, args, kwargs):
    raise _reads_the_frame("locals")


@rule(vars)
def _vars(frame, args, kwargs):
    if not args and not kwargs:
        raise _reads_the_frame("vars")
    if len(args) != 1 or kwargs:
        raise_user_error(frame, TypeError, f"vars expected at most 1 argument, got {len(args)}")
    return args[0].get_attr(frame, "__dict__")


@rule(dir)
def _dir(frame, args, kwargs):
    if not args and not kwargs:
        raise _reads_the_frame("dir")
    raise Unsupported("call to dir, which capture cannot trace into", hint="call it outside the compiled function")
