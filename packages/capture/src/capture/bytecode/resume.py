"""Resume functions: code objects that continue a function from the middle.

`resume_code(original, offset, stack, live)` copies `original`'s instructions and adds a
prologue right after RESUME that rebuilds the value stack the original had at `offset` from
the new function's arguments, then jumps there. Its parameters are the live locals (keeping
their names, so the copied LOAD_FAST/STORE_FAST still work) followed by one per stack slot
(unbound once pushed).
Cell variables are parameters too, passed as the cells themselves (the copied code has no
MAKE_CELL for them), so closures made before the break and the code after it share them.
A slot is one of

    "value"  a value passed in (`__stack3`)
    "null"   the NULL of CALL's protocol (PUSH_NULL; there is no Python object for it)
    "with"   a `with` block's exit: the argument is a fresh context manager, which the
             prologue enters (BEFORE_WITH) so the copied code exits it as the original would

Exception-table depths are copied from the original (the `bytecode` library does not keep
them through its abstract form, and recomputing them after the prologue's jump gives wrong
depths), and the stack size is the original's plus BEFORE_WITH's two transient slots.

Resume codes are made from the original code only, never from another resume code, and
cached: a loop whose body breaks reaches the same (offset, stack, locals) every iteration and
so the same resume function and its cache of compiled entries.
"""

from __future__ import annotations

import dis
import types
from dataclasses import dataclass

from bytecode import Bytecode, CompilerFlags, Instr, Label, TryBegin

from ..errors import CaptureInternalError
from .listing import decode

STACK_PREFIX = "__stack"


@dataclass(frozen=True)
class ResumeCode:
    code: types.CodeType
    original: types.CodeType
    offset: int  # where in `original` it resumes
    stack: tuple[str, ...]  # slot kinds, bottom first
    parameters: tuple[str, ...]
    # Where the copy of the original's instructions after RESUME starts, in this code and in
    # the original (the header before RESUME loses its MAKE_CELLs, the prologue is added).
    body_start: int
    original_body_start: int

    def original_offset(self, offset: int) -> int | None:
        """The offset in the original code of the instruction at `offset` in this one (None
        for the header and prologue, which the original does not have)."""
        index = decode(self.code).index_of_offset[offset]
        if index < self.body_start:
            return None
        return decode(self.original).instructions[index - self.body_start + self.original_body_start].offset

    def listing(self) -> str:
        """The resume function as a `dis` listing (what COMPILER_LOGS=bytecode shows)."""
        return f"{self.code.co_qualname} (resumes {self.original.co_qualname} at offset {self.offset}):\n" + dis.Bytecode(self.code).dis()


_CACHE: dict[tuple, ResumeCode] = {}

# Flags a resume function cannot keep: it takes plain positional parameters.
_DROPPED_FLAGS = CompilerFlags.VARARGS | CompilerFlags.VARKEYWORDS


def stack_parameter(index: int) -> str:
    return f"{STACK_PREFIX}{index}"


def resume_code(original: types.CodeType, offset: int, stack: tuple[str, ...], live: tuple[str, ...]) -> ResumeCode:
    key = (original, offset, stack, live)
    known = _CACHE.get(key)
    if known is None:
        # setdefault: threads building the same resume function at once all get the first one.
        known = _CACHE.setdefault(key, _build(original, offset, stack, live))
    return known


def _build(original: types.CodeType, offset: int, stack: tuple[str, ...], live: tuple[str, ...]) -> ResumeCode:
    listing = decode(original)
    abstract = Bytecode.from_code(original)
    real = [item for item in abstract if isinstance(item, Instr)]
    if [i.name for i in real] != [i.opname for i in listing.instructions]:
        raise CaptureInternalError(f"the bytecode library decoded {original.co_qualname} differently from dis")
    copy_exception_depths(abstract, listing)
    target = real[listing.index_of_offset[offset]]
    header = next(i for i, inst in enumerate(listing.instructions) if inst.opname == "RESUME") + 1
    resume_instr = real[header - 1]

    stack_names = [stack_parameter(i) for i in range(len(stack))]
    parameters = tuple(live) + tuple(name for name, kind in zip(stack_names, stack) if kind != "null")
    where = resume_instr.location
    prologue: list = []
    for name, kind in zip(stack_names, stack):
        # A stack slot's parameter is unbound once pushed: the original's stack alone holds
        # the value, which dies when the code pops it, as eager's does.
        if kind == "null":
            prologue.append(Instr("PUSH_NULL", location=where))
        elif kind == "with":
            prologue += [Instr("LOAD_FAST", name, location=where), Instr("DELETE_FAST", name, location=where),
                         Instr("BEFORE_WITH", location=where), Instr("POP_TOP", location=where)]
        else:
            prologue += [Instr("LOAD_FAST", name, location=where), Instr("DELETE_FAST", name, location=where)]
    label = Label()
    prologue.append(Instr("JUMP_FORWARD", label, location=where))

    body: list = []
    for item in abstract:
        if item is target:
            body.append(label)
        if isinstance(item, Instr) and item.name == "MAKE_CELL":
            continue  # cells are passed in
        body.append(item)
        if item is resume_instr:
            body.extend(prologue)
    made_cells = sum(1 for inst in listing.instructions[:header] if inst.opname == "MAKE_CELL")

    new = Bytecode(body)
    for attribute in ("name", "filename", "first_lineno", "docstring", "cellvars", "freevars"):
        setattr(new, attribute, getattr(abstract, attribute))
    line = listing.lines[listing.index_of_offset[offset]]
    new.qualname = f"{original.co_qualname}.<resume at line {line}>"
    new.argnames = list(parameters)
    new.argcount = len(parameters)
    new.posonlyargcount = 0
    new.kwonlyargcount = 0
    new.flags = abstract.flags & ~_DROPPED_FLAGS
    code = new.to_code(stacksize=original.co_stacksize + 2, compute_exception_stack_depths=False)
    result = ResumeCode(code, original, offset, stack, parameters, header - made_cells + len(prologue), header)
    _check_alignment(result)
    return result


def copy_exception_depths(abstract: Bytecode, listing) -> None:
    """Give each TryBegin the depth of the original entry covering the instruction after it."""
    items = list(abstract)
    index = 0
    pending: list[TryBegin] = []
    for item in items:
        if isinstance(item, TryBegin):
            pending.append(item)
        elif isinstance(item, Instr):
            for begin in pending:
                entry = listing.handler_for(listing.instructions[index].offset)
                if entry is None:
                    raise CaptureInternalError("an exception-table entry covers no instruction")
                begin.stack_depth = entry.depth
            pending.clear()
            index += 1


def _check_alignment(result: ResumeCode) -> None:
    original = decode(result.original).instructions
    copied = decode(result.code).instructions[result.body_start :]
    if [i.opname for i in copied] != [i.opname for i in original[result.original_body_start :]]:
        raise CaptureInternalError(f"resume function for {result.original.co_qualname} lost instructions")
