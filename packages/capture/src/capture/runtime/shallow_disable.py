"""`disable(fn, recursive=False)`: `fn`'s own frame runs natively, what it calls is compiled.

torch.compile gets this from its frame-evaluation hook: `fn`'s code is skipped, and every
frame it calls meets the hook and is compiled. We have no such hook, so `fn` runs as a copy
whose call sites route the callable through `compiled_callee`, which hands back the compiled
version of a user function, bound method or module (one cache per callee and compilation,
the same caches a graph break inside a callee uses). The call sites are the loads CPython
emits for a call: `LOAD_GLOBAL` with its NULL bit (`helper(x)`) and method loads
(`self.layer(x)`, `obj.method(x)`: `LOAD_METHOD` on 3.11, `LOAD_ATTR` with its method bit
on 3.12). A callable first stored in a local and called from there runs natively.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import TYPE_CHECKING, Any, Callable

from bytecode import Bytecode, Instr
from torch import nn

from ..bytecode import decode
from ..bytecode.resume import copy_exception_depths
from ..calls.torch_ops import is_torch_operation
from ..markers import frame_only_disabled, is_compiled
from ..module_call import hooked_call, hooked_call_of
from ..values.own_frame import _compilable
from ..values.modules import has_hooks

if TYPE_CHECKING:
    from .compilation import Compilation

# Modules whose functions torch.compile never compiles as frames of their own (its skip
# files): torch itself, the standard library and our own packages.
_NOT_USER_CODE = ("torch", "capture", "compiler", "fake_tensor", "guards", "aot_autograd", "inductor")


def frame_only_runner(fn: Callable, compilation: Compilation) -> Callable:
    """`fn` running natively with the callees at its call sites compiled by `compilation`."""
    # Kept on the compilation (a cycle through the runner's route, which the collector frees).
    runners = compilation.__dict__.setdefault("_frame_only_runners", {})
    runner = runners.get(fn)
    if runner is None:
        runner = runners[fn] = _build_runner(fn, compilation)
    return runner


def compiled_callee(value: Any, compilation: Compilation) -> Any:
    """What a call site of a frame-only-disabled function calls instead of `value`."""
    original = frame_only_disabled(value)
    if original is not None:
        return frame_only_runner(original, compilation)
    if isinstance(value, types.FunctionType) and _is_user_function(value):
        return compilation.cache(value).dispatch
    if isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType):
        if _is_user_function(value.__func__):
            return types.MethodType(compilation.cache(value.__func__).dispatch, value.__self__)
        return value
    if isinstance(value, nn.Module) and "forward" not in value.__dict__:
        if hooked_call(value):
            return types.MethodType(compilation.cache(hooked_call_of(type(value))).dispatch, value)
        forward = type(value).forward
        if not has_hooks(value) and isinstance(forward, types.FunctionType) and _is_user_function(forward):
            return types.MethodType(compilation.cache(forward).dispatch, value)
    return value


def _is_user_function(fn: types.FunctionType) -> bool:
    module = fn.__globals__.get("__name__") or ""
    top = module.split(".")[0]
    if top in _NOT_USER_CODE or top in sys.stdlib_module_names:
        return False
    return _compilable(fn) and not is_torch_operation(fn) and not is_compiled(fn)


def _build_runner(fn: Callable, compilation: Compilation) -> Callable:
    if not isinstance(fn, types.FunctionType):
        return fn  # a builtin or callable object: nothing of it is Python we could compile
    route = functools.partial(compiled_callee, compilation=compilation)
    copy = types.FunctionType(_route_call_sites(fn.__code__, route), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    return functools.update_wrapper(copy, fn)


def _route_call_sites(code: types.CodeType, route: Callable) -> types.CodeType:
    program = Bytecode.from_code(code)
    # The bytecode library recomputes exception-table depths wrongly after a resume
    # function's prologue jump (capture.bytecode.resume): keep the code's own.
    copy_exception_depths(program, decode(code))
    rewritten = []
    for instr in program:
        if not isinstance(instr, Instr):
            rewritten.append(instr)
            continue
        if instr.name == "LOAD_GLOBAL" and instr.arg[0]:  # [NULL, callable]
            rewritten += [instr, *_apply(route, instr)]
        elif instr.name == "LOAD_METHOD" or (instr.name == "LOAD_ATTR" and isinstance(instr.arg, tuple) and instr.arg[0]):
            # A plain attribute load, routed, under a NULL: [NULL, callable] as CALL expects.
            plain = Instr("LOAD_ATTR", (False, instr.arg[1]) if sys.version_info >= (3, 12) else instr.arg, location=instr.location)
            rewritten += [plain, *_apply(route, instr), Instr("PUSH_NULL", location=instr.location), Instr("SWAP", 2, location=instr.location)]
        else:
            rewritten.append(instr)
    program.clear()
    program.extend(rewritten)
    # The bytecode library's own stack-size count misses what it reaches only through the
    # exception table after a resume function's prologue jump (it gave 2 for a resume function
    # needing 7: the handler's values overran the frame and CPython crashed). A routed call site
    # holds at most two values more than the code did there (the NULL and the route).
    return program.to_code(stacksize=code.co_stacksize + 2, compute_exception_stack_depths=False)


def _apply(fn: Callable, at: Instr) -> list[Instr]:
    """Instructions replacing the top of the stack `v` by `fn(v)`."""
    where = at.location
    call = [Instr("PRECALL", 1, location=where)] if sys.version_info < (3, 12) else []
    return [
        Instr("PUSH_NULL", location=where),
        Instr("SWAP", 2, location=where),
        Instr("LOAD_CONST", fn, location=where),
        Instr("SWAP", 2, location=where),
        *call,
        Instr("CALL", 1, location=where),
    ]
