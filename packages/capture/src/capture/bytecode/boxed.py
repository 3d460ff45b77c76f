"""Code that takes its positional arguments out of a list, in its own frame.

Called as `fn(a, b)`, CPython moves the arguments from the caller's stack into the callee's
frame, so that the callee alone holds them, but only while no frame-evaluation hook (PEP 523)
is installed. With one (torch.compile's while its code runs, and the one torch leaves behind
after a compile that failed; a debugger's), every call goes through vectorcall and the
caller's stack holds the arguments until the callee returns: an object the callee drops (`del
o`) lives on, its weak references still answer and `__del__` runs late.

`boxed_code(code)` is `code` taking one list, `__box`, instead of its parameters: a prologue
after RESUME moves the items into the parameters' slots and empties the list, so that the
caller holds an empty list. A parameter passed as a cell (a resume function's, whose copied
code has no MAKE_CELL for it) lands in its slot as the cell, as when it was an argument.
"""

from __future__ import annotations

import types

from bytecode import Bytecode, CompilerFlags, Instr

from .listing import decode
from .resume import copy_exception_depths

BOX = "__box"

# A box is emptied once the frame starts: a generator's or coroutine's frame starts at its
# first resumption, not at the call.
_UNBOXABLE_FLAGS = (CompilerFlags.VARARGS | CompilerFlags.VARKEYWORDS | CompilerFlags.GENERATOR
                    | CompilerFlags.COROUTINE | CompilerFlags.ASYNC_GENERATOR | CompilerFlags.ITERABLE_COROUTINE)


def boxed_code(code: types.CodeType) -> types.CodeType | None:
    """`code` taking its positional parameters in one list it empties; None where that cannot
    be done: keyword-only or variadic parameters, generators, a parameter its own code turns
    into a cell (MAKE_CELL reads the argument before any prologue could store it)."""
    if code.co_kwonlyargcount or code.co_flags & _UNBOXABLE_FLAGS:
        return None
    parameters = code.co_varnames[: code.co_argcount]
    if BOX in code.co_varnames or any(i.opname == "MAKE_CELL" and i.argval in parameters for i in decode(code).instructions):
        return None
    program = Bytecode.from_code(code)
    # As for a routed copy (runtime.shallow_disable): the library's own depths are wrong after
    # a resume function's prologue jump.
    copy_exception_depths(program, decode(code))
    resume = next(i for i, item in enumerate(program) if isinstance(item, Instr) and item.name == "RESUME")
    where = program[resume].location
    prologue = [Instr("LOAD_FAST", BOX, location=where), Instr("UNPACK_SEQUENCE", len(parameters), location=where)]
    prologue += [Instr("STORE_FAST", name, location=where) for name in parameters]
    # del __box[:]
    prologue += [Instr("LOAD_FAST", BOX, location=where), Instr("LOAD_CONST", None, location=where),
                 Instr("LOAD_CONST", None, location=where), Instr("BUILD_SLICE", 2, location=where),
                 Instr("DELETE_SUBSCR", location=where)]
    program[resume + 1 : resume + 1] = prologue
    program.argnames = [BOX]
    program.argcount = 1
    program.posonlyargcount = 0
    return program.to_code(stacksize=code.co_stacksize + max(len(parameters), 3), compute_exception_stack_depths=False)
