"""`with` blocks: BEFORE_WITH enters, and the exit function it leaves on the stack is called by
the block's normal exit (CALL with three Nones) or by WITH_EXCEPT_START when an exception
unwinds through the block."""

from __future__ import annotations

from ..interpreter.registry import handles
from ..values.constant import ConstantValue
from ..values.context import ContextExit, GlobalStateContext


@handles("BEFORE_WITH")
def _before_with(frame, inst):
    manager = frame.pop()
    if isinstance(manager, GlobalStateContext):
        frame.push(ContextExit(manager))
        frame.push(manager.enter(frame))
        return
    exit_ = manager.get_attr(frame, "__exit__")
    enter = manager.get_attr(frame, "__enter__")
    frame.push(exit_)
    frame.push(enter.call(frame, [], {}))


@handles("WITH_EXCEPT_START")
def _with_except_start(frame, inst):
    # Stack: [..., exit function, lasti, previous exception, exception]; the result (whether
    # to suppress) goes on top.
    exc = frame.peek(1)
    exit_ = frame.peek(4)
    exc_type = frame.session.wrap(exc.python_type(), None)
    frame.push(exit_.call(frame, [exc_type, exc, ConstantValue(None)], {}))
