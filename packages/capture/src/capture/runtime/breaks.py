"""Graph breaks: compiling a function up to what capture cannot trace, and the rest later.

When a capture raises `Unsupported`, the outermost frame recorded where it can break
(`BreakPoint`: a step of its instructions). The function is captured again, stopping before
that step; the entry built from that capture

1. runs the graph so far (which ends by exiting the `with` blocks of grad mode, autocast...
   still open there) and replays side effects,
2. rebuilds the frame's stack and live locals as Python values,
3. runs the refused instruction natively (capture.runtime.native_steps) inside the same
   `with` blocks; a call of a user function that broke inside calls that function's
   compiled version instead (it runs as its own frame, with its own graphs),
4. returns a tail call of the resume function (capture.bytecode.resume) that continues after
   the instruction with that stack and those locals; it is compiled on its first call like
   any function.

A break inside a `try` or `except`, or a `with` block of a context manager capture does not
model, comes before that block instead (the entry has no handlers); a break that would leave
nothing for a graph, or whose live values capture cannot rebuild, makes the function run
eagerly (as torch.compile skips such frames).
"""

from __future__ import annotations

import inspect
import logging
import types
import warnings
from typing import TYPE_CHECKING

from guards import kinds
from guards.sources import AttrSource

from .. import logs
from ..bytecode import decode
from ..bytecode.liveness import live_locals
from ..bytecode.resume import ResumeCode, resume_code
from ..errors import CaptureInternalError, Unsupported, UserException
from ..interpreter.frame import BreakPoint, StackSnapshot, callable_slot
from ..values.base import Value
from ..values.context import ContextExit
from ..values.lazy import LazyInput
from ..markers import frame_only_disabled, mark_compiled
from ..sources import HeldSource
from ..module_call import hooked_call, hooked_call_of
from ..values.own_frame import own_frame_function
from ..values.modules import has_hooks
from ..values.objects import NullValue
from .dispatchers import inline_dispatch
from .compilation import GraphBreak
from .held_locals import is_held
from .hooked_tensors import mark_observed_tensor
from .native_steps import NATIVE_STEPS, NativeStep, Slot
from .shallow_disable import frame_only_runner
from .tail_call import TailCall

if TYPE_CHECKING:
    from .cache import CodeCache
    from .entry import CompiledEntry

breaks_log = logs.channel("graph_breaks")
entry_log = logs.channel("bytecode")


def compile_break(cache: CodeCache, err: Unsupported, args, kwargs) -> CompiledEntry | None:
    """The entry that breaks the graph where `err` was raised, or None when the function
    should run eagerly."""
    record = GraphBreak(cache.fn.__qualname__, err.reason, list(err.stack), err.hint)
    cache.compilation.breaks.append(record)
    entry = _break_entry(cache, err, args, kwargs, record)
    if entry is None:
        record.outcome = "eager"
    breaks_log.info("%s", record)
    return entry


def _break_entry(cache: CodeCache, err: Unsupported, args, kwargs, record: GraphBreak) -> CompiledEntry | None:
    point: BreakPoint | None = err.break_point
    if point is None:
        return None
    plan = _BreakPlan(cache, point)
    session = cache.new_session(args, kwargs, stop_step=point.step, live_values=plan.live_values)
    try:
        result = session.run()
        if result.stopped is None:
            raise CaptureInternalError("the second capture did not reach the graph break")
    except (Unsupported, UserException, CaptureInternalError) as again:
        # The traced code behaved differently the second time (a property with side effects,
        # say). Running the function eagerly is always right; say so rather than fail.
        warnings.warn(f"capture: {cache.fn.__qualname__} runs eagerly: capturing it up to its graph break failed: {again}", stacklevel=2)
        return None
    if plan.offset is None:
        return None  # a resume function that breaks before getting anywhere
    if point.before and not point.compiled_call and not _did_work(result):
        return None
    try:
        return cache.finish(result, tail=plan.tail)
    except Unsupported as failure:
        record.reason += f"; no resume function could start there: {failure.reason}"
        return None


def _did_work(result) -> bool:
    """Whether the graph before a break computes anything or the trace changed anything (a
    break that comes first would otherwise hand over to itself)."""
    ops = any(n.op in ("call_function", "call_method") and not n.meta.get("effect") for n in result.graph.nodes)
    return ops or bool(result.side_effects)



class _BreakPlan:
    """What the stopped frame hands on: the instruction to run natively (unless breaking
    before it), the stack slots, the live locals and the dead ones whose objects eager still
    holds (capture.runtime.held_locals), and how to write the entry's tail."""

    def __init__(self, cache: CodeCache, point: BreakPoint):
        self.cache = cache
        self.point = point
        resume: ResumeCode | None = cache.resume
        self.original = resume.original if resume is not None else cache.fn.__code__
        self.to_original = resume.original_offset if resume is not None else (lambda offset: offset)
        self.listing = decode(self.original)
        self.snapshot: StackSnapshot | None = None
        self.offset: int | None = None  # where in the original code the frame stopped
        self.locals: dict = {}
        self.held: set[str] = set()

    # --- what the graph must produce --------------------------------------------------------------
    def live_values(self, snapshot: StackSnapshot, session) -> list:
        self.snapshot = snapshot
        offset = self.offset = self.to_original(snapshot.offset)
        if offset is None:
            return []
        callee = self._called_value(snapshot, offset)
        if callee is not None:
            if self.point.compiled_call or self.point.in_callee:
                self._guard_callee(callee, session)
            if not (self.point.before or self.point.in_callee):
                # A break at `t.register_hook(...)` / `t.retain_grad()` splits the graph after
                # `t` (capture.runtime.hooked_tensors).
                mark_observed_tensor(callee)
        bound = dict(snapshot.locals)
        # Cell variables are handed on as cells (capture.bytecode.resume).
        bound.update((name, snapshot.cells[name]) for name in self.original.co_cellvars if name in snapshot.cells)
        live = live_locals(self.original, offset)
        self.held = {name for name in self.original.co_varnames if name in bound and is_held(bound[name])}
        self.locals = {name: bound[name] for name in live if name in bound}
        self.locals.update((name, bound[name]) for name in self.original.co_varnames if name in self.held)
        stack = [v for v in snapshot.stack if not isinstance(v, (NullValue, ContextExit))]
        return stack + list(self.locals.values())

    def _called_value(self, snapshot: StackSnapshot, offset: int) -> Value | None:
        """The callable on the stack when the frame stopped at a call, else None."""
        start = self.listing.index_of_offset[offset]
        # The CALL itself, or the KW_NAMES / PRECALL (3.11) before it.
        call = next((i for i in self.listing.instructions[start:] if i.opname not in ("KW_NAMES", "PRECALL")), None)
        if call is None or call.opname not in ("CALL", "CALL_FUNCTION_EX") or len(snapshot.stack) < -callable_slot(call):
            return None
        return snapshot.stack[callable_slot(call)]

    def _guard_callee(self, callee: Value, session) -> None:
        """The entry calls the compiled frame of the very callee the trace saw (its function's
        own cache, whose entries read that function's closure and defaults): a callee read from
        the frame must be that function again (a function passed in, another on the next
        call), or that module class."""
        target = own_frame_function(callee)
        if target is None or callee.source is None or isinstance(callee.source, HeldSource):
            return
        fn, bound, _ = target
        obj = callee.obj if isinstance(callee, LazyInput) else getattr(callee, "fn", None)
        if obj is fn:
            session.add_guard(kinds.IdentityMatch(callee.source, fn))
        elif isinstance(obj, types.MethodType):
            session.add_guard(kinds.IdentityMatch(AttrSource(callee.source, "__func__"), fn))
        elif bound is callee:  # a module: its class's forward (or hooked call)
            session.add_guard(kinds.TypeMatch(callee.source, type(callee.obj)))

    # --- the entry's tail ---------------------------------------------------------------------------
    def tail(self, writer) -> tuple[list[str], list[str]]:
        """(lines that rebuild the stack and live locals, lines that run the refused
        instruction and hand over): the entry replays side effects between the two."""
        snapshot = self.snapshot
        lines: list[str] = []

        def bind(expression: str, stem: str) -> str:
            lines.extend(writer.lines)
            writer.lines.clear()
            if expression.isidentifier():
                # A parameter or temporary of the entry, which nothing rebinds; a second name
                # for it would hold the object once more than eager's frame does.
                return expression
            name = writer.temporary(f"_{stem}")
            lines.append(f"{name} = {expression}")
            return name

        stack: list[Slot] = []
        contexts: list[str] = []
        for value in snapshot.stack:
            if isinstance(value, NullValue):
                stack.append(Slot("null", None))
            elif isinstance(value, ContextExit):
                fresh = _rebuilt(writer, value.manager)
                stack.append(Slot("with", fresh, value))
                contexts.append(fresh)
            else:
                stack.append(Slot("value", bind(writer.value(value), "s"), value))
        locals_ = {name: bind(writer.value(value), "l") for name, value in self.locals.items()}
        lines.extend(writer.lines)
        writer.lines.clear()
        rebuilt, lines = lines, []

        def resume(offset: int, slots: list[Slot], bound: dict[str, str] = locals_) -> str:
            return self._resume_call(writer, offset, slots, bound)

        offset = self.offset
        if self.point.compiled_call:
            start = self.listing.index_of_offset[offset]  # the CALL, or its KW_NAMES
            call = next(i for i in self.listing.instructions[start:] if i.opname in ("CALL", "CALL_FUNCTION_EX"))
            callee = stack[callable_slot(call)]
            compiled = self._compiled_callee(writer, callee.value)
            if compiled is None:
                raise Unsupported(f"{callee.value.describe()} cannot run as a frame of its own")
            callee.expression = bind(compiled, "c")
            lines.extend(writer.lines)
            writer.lines.clear()
        if self.point.before:
            lines.append(resume(offset, stack))
            return rebuilt, lines
        inst = self.listing.instructions[self.listing.index_of_offset[offset]]
        emitter = NATIVE_STEPS.get(inst.opname)
        if emitter is None:
            raise Unsupported(f"the {inst.opname} instruction cannot run between two graphs")
        step = NativeStep(
            inst,
            self.listing,
            stack,
            snapshot.kw_names,
            name_for=writer.name_for,
            fresh_name=lambda: writer.temporary("_t"),
            resume=resume,
            locals_=locals_,
            callee=lambda value: self._compiled_callee(writer, value),
            inline_call=lambda value, arguments: self._inline_call(writer, value, arguments),
        )
        emitter(step)
        if contexts:
            # The refused instruction runs inside the `with` blocks the graph exited.
            lines.append(f"with {', '.join(contexts)}:")
            lines.extend("    " + line for line in step.lines)
        else:
            lines.extend(step.lines)
        return rebuilt, lines

    def _resume_call(self, writer, offset: int, slots: list[Slot], locals_: dict[str, str]) -> str:
        # The locals read from `offset` on, and the objects eager's frame still holds, read
        # again or not (capture.runtime.held_locals): the resume function drops one when it
        # rebinds the name.
        reads = live_locals(self.original, offset)
        live = tuple(name for name in locals_ if name in reads or name in self.held)
        code = resume_code(self.original, offset, tuple(slot.kind for slot in slots), live)
        target = self.cache.compilation.resume_cache(self.cache.original, code)
        if entry_log.isEnabledFor(logging.DEBUG) and not target.entries:
            entry_log.debug("%s", code.listing())
        arguments = [locals_[name] for name in live] + [s.expression for s in slots if s.kind != "null"]
        function = writer.name_for(target.dispatch_tail, target.fn.__name__)
        return f"return {writer.name_for(TailCall, 'TailCall')}({function}, [{', '.join(arguments)}])"

    def _compiled_callee(self, writer, value) -> str | None:
        """For a call that broke inside the callee: the callee compiled as its own frame. A
        `disable(fn, recursive=False)` function: `fn` with its callees compiled."""
        original = frame_only_disabled(getattr(value, "fn", None))
        if original is not None:
            return writer.name_for(frame_only_runner(original, self.cache.compilation), original.__name__)
        if not self.point.in_callee:
            return None
        target = own_frame_function(value)
        if target is None:
            return None
        fn, bound, module = target
        dispatch = self.cache.compilation.cache(fn).dispatch
        if module:
            call = writer.name_for(_module_call(dispatch, self.cache.compilation), f"call_{fn.__qualname__.split('.')[0]}")
            return f"{writer.name_for(types.MethodType, 'MethodType')}({call}, {writer.value(bound)})"
        name = writer.name_for(dispatch, fn.__name__)
        if bound is None:
            return name
        return f"{writer.name_for(types.MethodType, 'MethodType')}({name}, {writer.value(bound)})"


    def _inline_call(self, writer, value, arguments: list[str]):
        """For a call that broke inside a plain function given all its parameters positionally:
        the lines choosing and calling its compiled entry in place (cache.inline_dispatch)."""
        if not self.point.in_callee or frame_only_disabled(getattr(value, "fn", None)) is not None:
            return None
        target = own_frame_function(value)
        if target is None or target[1] is not None or target[2]:
            return None
        code = target[0].__code__
        if code.co_argcount != len(arguments) or code.co_kwonlyargcount or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
            return None
        return inline_dispatch(self.cache.compilation.cache(target[0]), arguments, writer.name_for, lambda: writer.temporary("_t"))


def _module_call(dispatch, compilation):
    """`module(*args)` running the compiled forward; if the module gains forward hooks, the
    compiled `call_with_forward_hooks`; with backward hooks, nn.Module.__call__."""

    def call_module(module, *args, **kwargs):
        if has_hooks(module):
            if hooked_call(module):
                return compilation.cache(hooked_call_of(type(module))).dispatch(module, *args, **kwargs)
            return module(*args, **kwargs)
        return dispatch(module, *args, **kwargs)

    mark_compiled(call_module)
    return call_module


def _rebuilt(writer, manager) -> str:
    """An expression making a fresh, not yet entered manager like `manager`."""
    fn, args = manager.rebuilt()
    arguments = [writer.value(a) if isinstance(a, Value) else writer.constant(a) for a in args]
    return f"{writer.constant(fn)}({', '.join(arguments)})"
