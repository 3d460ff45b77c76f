"""Stack shuffling and instructions that do nothing to the symbolic state."""

from __future__ import annotations

from ..interpreter.registry import handles
from ..values.objects import NULL


@handles("NOP", "RESUME", "PRECALL", "COPY_FREE_VARS", "EXTENDED_ARG")
def _nothing(frame, inst):
    # PRECALL (3.11 only) prepares the adaptive interpreter's specialization; closure cells are
    # installed when a frame is created, so COPY_FREE_VARS has nothing left to do.
    pass


@handles("POP_TOP")
def _pop_top(frame, inst):
    frame.pop_raw()


@handles("PUSH_NULL")
def _push_null(frame, inst):
    frame.push(NULL)


@handles("COPY")
def _copy(frame, inst):
    frame.push(frame.peek(inst.arg))


@handles("SWAP")
def _swap(frame, inst):
    stack = frame.stack
    stack[-1], stack[-inst.arg] = stack[-inst.arg], stack[-1]


@handles("END_FOR")
def _end_for(frame, inst):
    # 3.12: pops the exhausted iterator and its last value; FOR_ITER normally jumps past it.
    frame.popn(2)
