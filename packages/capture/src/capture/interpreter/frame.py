"""`Frame`: one Python frame interpreted symbolically.

A frame holds symbolic locals, cells and a value stack, walks its code's instructions and
dispatches each to the handler registered for its opname. User functions called from it are
inlined by a child frame (`parent` links them), so a stack of frames mirrors the Python call
stack the traced program would have.

Exceptions raised by the traced program (an `IndexError` from a dict lookup, a `raise` the
program reaches) travel as `UserException` and are routed through the code's exception table
exactly as CPython 3.11+ does; ones no frame handles leave the capture (the caller then runs
the function eagerly, so the user sees the real exception). `Unsupported` errors collect the
user's file:line of every frame they cross.

Values reach the layers above them only through the frame they are handed: calling what
capture does not inline (`call_builtin`, `construct`), comparing (`compare`), inlining a call
(`inline`), the `values.base.TracingFrame` protocol this class implements.

`snapshot()` describes the frame at the current instruction (stack and live locals): what a
graph break needs to hand over to a resume function. The outermost frame (the function being
compiled) also counts its steps: an `Unsupported` leaving it records where the graph can
break (`BreakPoint`), and a second capture told to stop at that step ends there with
`stopped` set instead of running the instruction (capture.runtime.breaks).
"""

from __future__ import annotations

import builtins
import dis
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from fake_tensor import GuardOnDataDependentError
from fake_tensor.errors import raised_by_signal_handler

from ..bytecode import decode
from ..calls import call_builtin, construct
from ..errors import (
    CaptureError, CaptureInternalError, FrameRunsNatively, Unsupported, UserException, UserLocation,
)
from ..operators import compare
from ..values.constant import ConstantValue
from ..values.containers import TupleValue
from ..values.context import resumable_exit
from ..values.exceptions import ExceptionValue
from ..values.lazy import LazyInput, realized
from ..values.class_attributes import bind_class_attribute
from ..values.own_frame import own_frame_function
from .registry import HANDLERS

if TYPE_CHECKING:
    from ..session import CaptureSession
    from ..values.base import Value

# Inlining depth at which capture stops: deep recursion in traced code is almost always
# unbounded recursion on something capture treats as a constant.
MAX_INLINE_DEPTH = 64


@dataclass(frozen=True)
class BreakPoint:
    """Where the outermost frame can break after an `Unsupported`: before its `step`-th
    instruction. With `before` False that instruction is the refused one and runs natively
    between the graph and the resume function; with `before` True the refused instruction lies
    inside a region a resume function cannot start in (a `try` body, an `except` handler, a
    `with` block of a context manager capture does not model), and the break comes at the last
    step from which one can, leaving the refused instruction to the resume function.
    `in_callee` tells that the refusal came from inside a function the instruction called."""

    step: int
    before: bool
    in_callee: bool
    # Breaking before a call inside a `try` whose callee broke: the resume function starts at
    # the call (inside the `try`, so its handlers stay in force) with the callee replaced by
    # its compiled version.
    compiled_call: bool = False


@dataclass(frozen=True)
class StackSnapshot:
    """What a frame holds at one instruction: the instruction, the value stack (bottom
    first) and the locals that are bound."""

    offset: int
    opname: str
    location: UserLocation
    stack: tuple
    locals: dict
    kw_names: tuple | None = None
    cells: dict | None = None


def callable_slot(inst: dis.Instruction) -> int:
    """The stack index (from the top, negative) of the callable a CALL or CALL_FUNCTION_EX
    calls: below its arguments, above CALL's NULL (see capture.instructions.calls)."""
    if inst.opname == "CALL":
        return -(inst.arg + 1)
    return -(2 + (inst.arg & 1))


class Frame:
    def __init__(
        self,
        session: CaptureSession,
        code: types.CodeType,
        f_globals: dict[str, Any],
        locals_: dict[str, Value],
        cells: dict[str, Value],
        *,
        parent: Frame | None = None,
        function: Value | None = None,
        generator: bool = False,
    ):
        self.session = session
        self.code = code
        self.listing = decode(code)
        self.f_globals = f_globals
        raw_builtins = f_globals.get("__builtins__", builtins)
        self.f_builtins = raw_builtins if isinstance(raw_builtins, dict) else raw_builtins.__dict__
        self.locals: dict[str, Value] = dict(locals_)
        self.cells: dict[str, Value] = dict(cells)
        self.stack: list[Value] = []
        self.parent = parent
        self.function = function
        self.depth = 0 if parent is None else parent.depth + 1
        if self.depth > MAX_INLINE_DEPTH:
            raise Unsupported(
                f"inlining depth exceeded {MAX_INLINE_DEPTH} at {code.co_name}",
                hint="the traced code recurses; make the recursion depth depend on Python "
                "constants or call the function outside the compiled region",
            )
        self.ip = 0
        self.current: dis.Instruction | None = None
        self._stack_at_instruction: list[Value] = []
        self.kw_names: tuple[str, ...] | None = None
        # The exception being handled, as sys.exc_info() would report it (PUSH_EXC_INFO).
        self.handled_exception: Value | None = None
        self.return_value: Value | None = None
        # A generator frame's run() stops after each yield (`suspended`), leaving the value in
        # `yielded` for its GeneratorValue to hand out; the next run() continues after it.
        self.generator = generator
        self.yielded: list[Value] = []
        self.suspended = False
        # The outermost frame counts the instructions it ran (`steps`), remembers the last
        # step a resume function could start at, and stops before `stop_step` if given.
        self.steps = 0
        self.last_resumable_step = 0
        self.kw_names_step = 0
        self.stop_step: int | None = None
        self.stopped: StackSnapshot | None = None

    # --- running ----------------------------------------------------------------------------
    def run(self) -> Value | None:
        """Interpret the code to its return; the returned value (None if the frame stopped
        at `stop_step`, see `stopped`)."""
        instructions = self.listing.instructions
        outermost = self.parent is None
        while self.return_value is None:
            inst = instructions[self.ip]
            self.current = inst
            # The stack as the instruction found it, for describing the frame if it is refused
            # (handlers pop their operands before they know whether they can proceed).
            self._stack_at_instruction = list(self.stack)
            if outermost:
                if self.steps == self.stop_step:
                    self.stopped = self.snapshot()
                    return None
                if self._resumable_here(inst):
                    self.last_resumable_step = self.steps
                if inst.opname == "KW_NAMES":
                    self.kw_names_step = self.steps
                self.steps += 1
            self.ip += 1
            handler = HANDLERS.get(inst.opname)
            try:
                if handler is None:
                    raise Unsupported(
                        f"the {inst.opname} instruction is not supported",
                        hint="rewrite the construct, or call it outside the compiled function",
                    )
                try:
                    handler(self, inst)
                except GuardOnDataDependentError as err:
                    raise Unsupported(
                        f"data-dependent branching or int conversion: {err}",
                        hint="the graph breaks here and the rest runs on the real values",
                    ) from err
                if self.suspended:
                    self.suspended = False
                    return None
            except UserException as exc:
                self._unwind(inst, exc)
            except Unsupported as err:
                if outermost and err.break_point is None and not (isinstance(err, FrameRunsNatively) and err.location is None):
                    err.break_point = self._break_point(inst, in_callee=err.location is not None)
                err.add_frame(self.location(), self.snapshot() if err.location is None else None)
                raise
            except CaptureError:
                raise
            except Exception as err:
                if raised_by_signal_handler(err):
                    raise
                # A bug in capture, not in the user's program: say where it happened.
                raise CaptureInternalError(
                    f"{type(err).__name__}: {err}\nwhile tracing {inst.opname} at {self.location()}"
                ) from err
        return self.return_value

    # --- graph breaks -------------------------------------------------------------------------
    def _resumable_here(self, inst: dis.Instruction) -> bool:
        """Whether a resume function could start at `inst` with the current stack: not inside
        a `try` or `except` (the entry that runs the refused instruction has no handlers),
        not inside a `with` block of a context manager capture cannot re-enter, and not
        between KW_NAMES and its CALL."""
        if self.kw_names is not None and inst.opname != "CALL":
            return False
        for entry, kind in self.listing.handler_chain(inst.offset):
            if kind == "with":
                if not resumable_exit(self.stack[entry.depth - 1]):
                    return False
            elif kind != "cleanup":
                return False
        return True

    def _break_point(self, inst: dis.Instruction, *, in_callee: bool) -> BreakPoint:
        step = self.steps - 1
        if self.last_resumable_step == step:
            return BreakPoint(step, before=False, in_callee=in_callee)
        if in_callee and self._callee_can_run_inside_try(inst):
            # With keyword arguments the resume function must run KW_NAMES again.
            start = self.kw_names_step if self.kw_names is not None else step
            return BreakPoint(start, before=True, in_callee=True, compiled_call=True)
        return BreakPoint(self.last_resumable_step, before=True, in_callee=False)

    def _callee_can_run_inside_try(self, inst: dis.Instruction) -> bool:
        """Whether the call at `inst` (whose callee broke) sits only inside `try` bodies, not
        in an `except` handler or a `with` block, and calls a function capture can compile."""
        if inst.opname not in ("CALL", "CALL_FUNCTION_EX") or self.handled_exception is not None:
            return False
        if any(kind == "with" for _, kind in self.listing.handler_chain(inst.offset)):
            return False
        return own_frame_function(self._stack_at_instruction[callable_slot(inst)]) is not None

    def _unwind(self, inst: dis.Instruction, exc: UserException) -> None:
        """Route a traced exception through the exception table, like CPython's
        `exception_unwind`: truncate the stack, maybe push the raising offset, push the
        exception and jump to the handler; with no handler, leave this frame."""
        entry = self.listing.handler_for(inst.offset)
        if entry is None:
            exc.stack.append(self.location())
            raise exc
        del self.stack[entry.depth :]
        if entry.lasti:
            self.stack.append(ConstantValue(inst.offset))
        self.stack.append(exc.value)
        self.jump_to(entry.target)

    def jump_to(self, offset: int) -> None:
        self.ip = self.listing.index(offset)

    def throw(self, exc: UserException) -> None:
        """Raise a traced exception at the current instruction (where a generator is
        suspended, for `generator.throw`)."""
        self._unwind(self.current, exc)

    # --- what values ask of the frame (values.base.TracingFrame) ---------------------------------
    def call_builtin(self, fn: Any, args: list[Value], kwargs: dict[str, Value]) -> Value:
        return call_builtin(self, fn, args, kwargs)

    def construct(self, cls: Value, args: list[Value], kwargs: dict[str, Value]) -> Value:
        return construct(self, cls, args, kwargs)

    def compare(self, symbol: str, a: Value, b: Value) -> Value:
        return compare(self, symbol, a, b)

    def make_tuple(self, items: list[Value]) -> Value:
        return TupleValue(items)

    def bind_class_attribute(self, instance: Value, cls: type, descriptor: Any, name: str) -> Value | None:
        return bind_class_attribute(self, instance, cls, descriptor, name)

    def raise_real(self, err: BaseException) -> NoReturn:
        raise UserException(ExceptionValue.from_real(err)) from None

    def inline(
        self, code: types.CodeType, f_globals: dict, locals_: dict, cells: dict, *, function: Value, generator: bool
    ) -> Frame:
        return Frame(self.session, code, f_globals, locals_, cells, parent=self, function=function, generator=generator)

    def current_exception(self) -> Value | None:
        """The exception the innermost traced frame is handling, as sys.exc_info() sees it."""
        frame = self
        while frame is not None:
            if frame.handled_exception is not None:
                return frame.handled_exception
            frame = frame.parent
        return None

    # --- stack helpers ------------------------------------------------------------------------
    # `pop`, `popn` and `peek` hand out wrapped values (a frame input is wrapped, and guarded,
    # when an instruction first looks at it); `push`, `pop_raw` move values as they are.
    def push(self, value: Value) -> None:
        self.stack.append(value)

    def pop(self) -> Value:
        return realized(self.session, self.stack.pop())

    def pop_raw(self) -> Value:
        return self.stack.pop()

    def popn(self, n: int) -> list[Value]:
        if n == 0:
            return []
        if n > len(self.stack):
            raise CaptureInternalError(f"stack underflow at {self.current.opname}")
        items = [realized(self.session, v) for v in self.stack[-n:]]
        del self.stack[-n:]
        return items

    def peek(self, depth: int = 1) -> Value:
        value = self.stack[-depth]
        if isinstance(value, LazyInput):
            value = self.stack[-depth] = value.realize(self.session)
        return value

    def local(self, name: str) -> Value | None:
        """The wrapped value of a bound local (None if unbound)."""
        value = self.locals.get(name)
        if isinstance(value, LazyInput):
            value = self.locals[name] = value.realize(self.session)
        return value

    # --- where we are ---------------------------------------------------------------------------
    def location(self) -> UserLocation:
        index = max(self.ip - 1, 0)
        return UserLocation(self.code.co_filename, self.listing.lines[index], self.code.co_name)

    def snapshot(self) -> StackSnapshot:
        inst = self.current
        return StackSnapshot(
            offset=inst.offset if inst else 0,
            opname=inst.opname if inst else "",
            location=self.location(),
            stack=tuple(self._stack_at_instruction),
            locals=dict(self.locals),
            kw_names=self.kw_names,
            cells=dict(self.cells),
        )

    def user_stack(self) -> list[UserLocation]:
        frames = []
        frame = self
        while frame is not None:
            frames.append(frame.location())
            frame = frame.parent
        return frames[::-1]
