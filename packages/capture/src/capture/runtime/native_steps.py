"""How an entry that breaks its graph runs the refused instruction natively, per opcode.

A step writes Python over the rebuilt stack (`NativeStep.stack`, bottom first, each slot an
expression) that does what the instruction does, then ends each way control can leave it
with `step.resume(offset)`, which hands the stack and live locals to the resume function that
continues at `offset`. Conditional jumps and FOR_ITER end two ways. Instructions with no step
here cannot be run between two graphs: the graph then breaks before them (and the rest of the
function runs as one resume function).

Version differences stay here next to each opcode, as in capture.instructions.
"""

from __future__ import annotations

import contextlib
import dis
import operator
import sys
from dataclasses import dataclass
from typing import Callable

from fake_tensor.registries import register_once

from ..errors import Unsupported
from ..interpreter.registry import check_opname
from ..operators import BINARY, COMPARE, INPLACE
from ..values.base import Value

NATIVE_STEPS: dict[str, Callable] = {}


def native_step(*opnames: str):
    def register(emitter):
        for name in opnames:
            check_opname(name)
        return register_once(NATIVE_STEPS, opnames, emitter, "native steps")

    return register


@dataclass
class Slot:
    """One stack slot: `kind` is "value", "null" (CALL's NULL) or "with" (an open `with`
    block's exit, whose `expression` makes a fresh manager to re-enter); `value` is what
    capture knew about it (to call a user function through its compiled version)."""

    kind: str
    expression: str | None
    value: Value | None = None


class NativeStep:
    def __init__(self, inst: dis.Instruction, listing, stack: list[Slot], kw_names, *, name_for, fresh_name, resume, callee,
                 locals_: dict[str, str], inline_call):
        self.inst = inst
        self.listing = listing
        self.stack = stack
        self.locals = dict(locals_)  # name -> expression of the locals handed on
        self.kw_names = kw_names
        self.lines: list[str] = []
        self.name_for = name_for  # (object, stem) -> a name bound in the entry's namespace
        self.fresh_name = fresh_name  # () -> a local name not used yet
        self._resume = resume  # (offset, stack, locals) -> "return ..." statement
        self._callee = callee  # (Value) -> expression of its compiled version, or None
        # (Value, argument expressions) -> (lines, result) calling its compiled version without
        # a dispatcher frame, or None
        self._inline_call = inline_call
        self._indent = ""

    # --- stack ---------------------------------------------------------------------------------
    def pop(self) -> Slot:
        return self.stack.pop()

    def popn(self, n: int) -> list[Slot]:
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    def push(self, expression: str) -> None:
        self.stack.append(Slot("value", expression))

    def push_null(self) -> None:
        self.stack.append(Slot("null", None))

    # --- writing -------------------------------------------------------------------------------
    def emit(self, line: str) -> None:
        self.lines.append(self._indent + line)

    def assign(self, expression: str) -> str:
        name = self.fresh_name()
        self.emit(f"{name} = {expression}")
        return name

    def op(self, fn: Callable) -> str:
        return self.name_for(fn, getattr(fn, "__name__", "op"))

    def callee(self, slot: Slot) -> str:
        compiled = self._callee(slot.value) if slot.value is not None else None
        return compiled or slot.expression

    def call(self, fn: Slot, arguments: list[str]) -> str:
        """The name of the result of calling `fn` (its compiled version, for a user function
        that broke inside) with `arguments` (expressions, keywords spelled `k=v`)."""
        if fn.value is not None and not any("=" in a for a in arguments):
            inline = self._inline_call(fn.value, arguments)
            if inline is not None:
                lines, result = inline
                for line in lines:
                    self.emit(line)
                return result
        return self.assign(f"{self.callee(fn)}({', '.join(arguments)})")

    def resume(self, offset: int, stack: list[Slot] | None = None) -> None:
        self.emit(self._resume(offset, list(self.stack if stack is None else stack), dict(self.locals)))

    def next_offset(self) -> int:
        return self.listing.next_offset(self.inst.offset)

    @contextlib.contextmanager
    def indented(self):
        """Lines emitted inside go one level deeper (the body of an `if` or `try`)."""
        self._indent += "    "
        try:
            yield
        finally:
            self._indent = self._indent[:-4]


# --- calls ------------------------------------------------------------------------------------


@native_step("CALL")
def _call(step: NativeStep):
    # Stack: [NULL, callable, *args] or [callable, self, *args] (see instructions.calls).
    args = step.popn(step.inst.arg)
    first, second = step.popn(2)
    if first.kind == "null":
        fn = second
    else:
        fn, args = first, [second, *args]
    arguments = [a.expression for a in args]
    if step.kw_names:
        names = step.kw_names
        positional, keywords = arguments[: len(arguments) - len(names)], arguments[len(arguments) - len(names) :]
        arguments = positional + [f"{k}={v}" for k, v in zip(names, keywords)]
    step.push(step.call(fn, arguments))
    step.resume(step.next_offset())


@native_step("CALL_FUNCTION_EX")
def _call_function_ex(step: NativeStep):
    kwargs = step.pop() if step.inst.arg & 1 else None
    args = step.pop()
    fn = step.pop()
    step.pop()  # NULL
    star_kwargs = f", **{kwargs.expression}" if kwargs is not None else ""
    step.push(step.assign(f"{step.callee(fn)}(*{args.expression}{star_kwargs})"))
    step.resume(step.next_offset())


# --- branches and loops -------------------------------------------------------------------------


def _branch(test: str, jump_when: bool):
    """POP_JUMP_IF_*: `test` formats the popped value into a condition."""

    def emitter(step: NativeStep):
        condition = test.format(step.pop().expression)
        step.emit(f"if {condition}:")
        with step.indented():
            step.resume(step.inst.argval if jump_when else step.next_offset())
        step.resume(step.next_offset() if jump_when else step.inst.argval)

    return emitter


# 3.11 spells direction into the name; 3.12 has forward-only variants without it.
for _suffix in ("", "FORWARD_", "BACKWARD_"):
    native_step(f"POP_JUMP_{_suffix}IF_TRUE")(_branch("{}", True))
    native_step(f"POP_JUMP_{_suffix}IF_FALSE")(_branch("{}", False))
    native_step(f"POP_JUMP_{_suffix}IF_NONE")(_branch("{} is None", True))
    native_step(f"POP_JUMP_{_suffix}IF_NOT_NONE")(_branch("{} is not None", True))


def _jump_or_pop(jump_when: bool):
    # 3.11 only: `a or b` / `a and b` keep the deciding value when they jump.
    def emitter(step: NativeStep):
        value = step.stack[-1]
        step.emit(f"if {'' if jump_when else 'not '}{value.expression}:")
        with step.indented():
            step.resume(step.inst.argval)
        step.pop()
        step.resume(step.next_offset())

    return emitter


native_step("JUMP_IF_TRUE_OR_POP")(_jump_or_pop(True))
native_step("JUMP_IF_FALSE_OR_POP")(_jump_or_pop(False))

# On exhaustion 3.12 jumps to the loop's END_FOR and skips it; 3.11 jumps past the loop.
_FOR_ITER_SKIPS_END_FOR = sys.version_info >= (3, 12)


@native_step("FOR_ITER")
def _for_iter(step: NativeStep):
    iterator = step.stack[-1]
    item = step.fresh_name()
    step.emit("try:")
    with step.indented():
        step.emit(f"{item} = {step.op(next)}({iterator.expression})")
    step.emit(f"except {step.op(StopIteration)}:")
    with step.indented():
        exhausted = step.stack[:-1]
        target = step.inst.argval
        if _FOR_ITER_SKIPS_END_FOR:
            target = step.listing.next_offset(target)
        step.resume(target, exhausted)
    step.push(item)
    step.resume(step.next_offset())


@native_step("GET_ITER")
def _get_iter(step: NativeStep):
    step.push(step.assign(f"{step.op(iter)}({step.pop().expression})"))
    step.resume(step.next_offset())


@native_step("UNPACK_SEQUENCE")
def _unpack_sequence(step: NativeStep):
    names = [step.fresh_name() for _ in range(step.inst.arg)]
    value = step.pop()
    step.emit(f"{', '.join(names)}{',' if len(names) == 1 else ''} = {value.expression}")
    for name in reversed(names):
        step.push(name)
    step.resume(step.next_offset())


# --- locals -------------------------------------------------------------------------------------
# A graph breaks at `del o` or `o = ...` when that may end an object whose end shows (a weak
# reference to it, a finalizer: capture.values.lifetime). The entry hands the name on no longer
# (or bound anew) and drops its own references first (capture.runtime.entry), so the object
# dies here if eager's would.


@native_step("DELETE_FAST")
def _delete_fast(step: NativeStep):
    step.locals.pop(step.inst.argval, None)
    step.resume(step.next_offset())


@native_step("STORE_FAST")
def _store_fast(step: NativeStep):
    step.locals[step.inst.argval] = step.pop().expression
    step.resume(step.next_offset())


@native_step("STORE_DEREF")
def _store_deref(step: NativeStep):
    step.emit(f"{_own_cell(step)}.cell_contents = {step.pop().expression}")
    step.resume(step.next_offset())


@native_step("DELETE_DEREF")
def _delete_deref(step: NativeStep):
    step.emit(f"{step.op(_delete_contents)}({_own_cell(step)}, {step.inst.argval!r})")
    step.resume(step.next_offset())


def _own_cell(step: NativeStep) -> str:
    """A cell variable of the frame is handed on as its cell (capture.bytecode.resume); a free
    variable's cell is the closure's, which the entry does not name."""
    cell = step.locals.get(step.inst.argval)
    if step.inst.argval not in step.listing.code.co_cellvars or cell is None:
        raise Unsupported(f"{step.inst.opname} of the free variable {step.inst.argval!r} cannot run between two graphs")
    return cell


def _delete_contents(cell, name: str) -> None:
    try:
        cell.cell_contents
    except ValueError:  # empty: CPython's DELETE_DEREF error for a cell variable
        raise UnboundLocalError(f"cannot access local variable {name!r} where it is not associated with a value") from None
    del cell.cell_contents


# --- operators ----------------------------------------------------------------------------------


@native_step("BINARY_OP")
def _binary_op(step: NativeStep):
    right, left = step.pop(), step.pop()
    symbol = step.inst.argrepr
    fn = INPLACE[symbol] if symbol in INPLACE else BINARY[symbol]
    step.push(step.assign(f"{step.op(fn)}({left.expression}, {right.expression})"))
    step.resume(step.next_offset())


@native_step("COMPARE_OP")
def _compare_op(step: NativeStep):
    right, left = step.pop(), step.pop()
    step.push(step.assign(f"{step.op(COMPARE[step.inst.argval])}({left.expression}, {right.expression})"))
    step.resume(step.next_offset())


@native_step("CONTAINS_OP")
def _contains_op(step: NativeStep):
    container, item = step.pop(), step.pop()
    test = "not in" if step.inst.arg else "in"
    step.push(step.assign(f"{item.expression} {test} {container.expression}"))
    step.resume(step.next_offset())


@native_step("IS_OP")
def _is_op(step: NativeStep):
    right, left = step.pop(), step.pop()
    test = "is not" if step.inst.arg else "is"
    step.push(step.assign(f"{left.expression} {test} {right.expression}"))
    step.resume(step.next_offset())


def _unary(fn):
    def emitter(step: NativeStep):
        step.push(step.assign(f"{step.op(fn)}({step.pop().expression})"))
        step.resume(step.next_offset())

    return emitter


native_step("UNARY_NEGATIVE")(_unary(operator.neg))
native_step("UNARY_POSITIVE")(_unary(operator.pos))
native_step("UNARY_INVERT")(_unary(operator.invert))
native_step("UNARY_NOT")(_unary(operator.not_))


# --- attributes and items -------------------------------------------------------------------------

# 3.12 folded LOAD_METHOD into LOAD_ATTR: the low bit of its argument marks a method load.
_LOAD_ATTR_HAS_METHOD_BIT = sys.version_info >= (3, 12)


@native_step("LOAD_ATTR", "LOAD_METHOD")
def _load_attr(step: NativeStep):
    obj = step.pop()
    is_method = step.inst.opname == "LOAD_METHOD" or (_LOAD_ATTR_HAS_METHOD_BIT and step.inst.arg & 1)
    value = step.assign(f"{step.op(getattr)}({obj.expression}, {step.inst.argval!r})")
    if is_method:
        # [NULL, bound method] calls like CPython's [method, self].
        step.push_null()
    step.push(value)
    step.resume(step.next_offset())


@native_step("STORE_ATTR")
def _store_attr(step: NativeStep):
    obj, value = step.pop(), step.pop()
    step.emit(f"{step.op(setattr)}({obj.expression}, {step.inst.argval!r}, {value.expression})")
    step.resume(step.next_offset())


@native_step("BINARY_SUBSCR")
def _binary_subscr(step: NativeStep):
    key, obj = step.pop(), step.pop()
    step.push(step.assign(f"{obj.expression}[{key.expression}]"))
    step.resume(step.next_offset())


@native_step("STORE_SUBSCR")
def _store_subscr(step: NativeStep):
    key, obj, value = step.pop(), step.pop(), step.pop()
    step.emit(f"{obj.expression}[{key.expression}] = {value.expression}")
    step.resume(step.next_offset())


@native_step("BINARY_SLICE")
def _binary_slice(step: NativeStep):
    # 3.12: container[start:stop].
    stop, start, obj = step.pop(), step.pop(), step.pop()
    step.push(step.assign(f"{obj.expression}[{start.expression}:{stop.expression}]"))
    step.resume(step.next_offset())


_CONVERSIONS = {0: "", 1: "!s", 2: "!r", 3: "!a"}


@native_step("FORMAT_VALUE")
def _format_value(step: NativeStep):
    # The argument's low two bits pick !s/!r/!a; bit 2 says a format spec is on the stack.
    spec = step.pop() if step.inst.arg & 4 else None
    value = step.pop()
    spec_part = f":{{{spec.expression}}}" if spec is not None else ""
    step.push(step.assign(f"f'{{{value.expression}{_CONVERSIONS[step.inst.arg & 3]}{spec_part}}}'"))
    step.resume(step.next_offset())
