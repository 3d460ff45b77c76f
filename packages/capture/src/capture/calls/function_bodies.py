"""What a custom autograd.Function's methods read and change outside themselves.

Its forward, setup_context and backward run natively, not interpreted: on fakes while capturing,
then in the backend's trace (aot_autograd bakes both into its graphs). So whatever Python state
they read is fixed at compile time, and whatever they change is changed then, not on the calls
that hit the cache. Before the Function runs on fakes, its methods (and the functions,
methods and nested Functions they call by a global, closure or attribute name) are scanned:

- a number, string or flag read from a global, a closure cell, or an attribute or constant-key
  item chain on one (`g * SCALE`, `config.SCALE`, `CONFIG["scale"]`, `SCALES[0]`) is guarded,
  as a read by traced code is; so are the methods and the functions they call, by identity;
- a change made outside (assigning a global or a closure variable, writing an attribute or item
  of an object reached from outside: `Counter.n += 1`; calling a method of one: `calls.append`;
  `print`) or a read no guard can name (an object with `__getattr__`, an item by a computed key,
  `CONFIG.get(...)`, iterating or passing on an outside list, dict or object) makes the capture
  refuse the call: the graph breaks around `apply`, which runs eagerly on every call, as
  torch.compile does for a backward with side effects.

The scan follows the stack of each code object linearly, keeping for each slot whether it holds a
value from outside (with its source), a constant, or something the method made itself (locals,
tensors, ctx): locals are the Function's own business. Calls the scan cannot see into (an
outside callable object, an unknown builtin) are refused too: eager runs them, never silently
once.
"""

from __future__ import annotations

import builtins
import cmath
import dis
import enum
import inspect
import math
import operator
import types
from dataclasses import dataclass
from typing import Any

import torch
from guards import kinds
from guards.sources import AttrSource, HeldObjectSource, ItemSource

from ..errors import Unsupported
from ..values.constant import CONSTANT_TYPES, is_constant_type


@dataclass(frozen=True)
class _Outside:
    """A stack slot holding a value reached from outside the method: `source` names it for a
    guard (None where nothing can, a builtin for instance)."""

    value: Any
    source: Any


@dataclass(frozen=True)
class _Const:
    value: Any


@dataclass(frozen=True)
class _Argument:
    """A list, dict or object the caller passed to `apply`: the graph gets a copy of what it
    held, so the forward may read it but not change it (`log.append(...)` was lost)."""

    type_: type


@dataclass(frozen=True)
class _ArgumentMethod:
    """`argument.name` about to be called."""

    type_: type
    name: str


# Methods of the builtin containers that change them.
_MUTATING_METHODS = frozenset(
    ("append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add",
     "discard", "sort", "reverse", "appendleft", "extendleft", "popleft", "rotate", "__setitem__",
     "__delitem__", "__iadd__", "__ior__")
)


# Builtins that neither change state nor read any beyond their arguments.
_PURE_BUILTINS = frozenset(
    getattr(builtins, name)
    for name in (
        "abs", "all", "any", "bool", "callable", "dict", "divmod", "enumerate", "filter", "float",
        "frozenset", "getattr", "hasattr", "hash", "int", "isinstance", "issubclass", "len", "list",
        "map", "max", "min", "pow", "range", "reversed", "round", "set", "slice", "sorted", "str",
        "sum", "tuple", "type", "zip", "repr", "format", "id", "ord", "chr", "iter", "complex",
        "NotImplementedError", "RuntimeError", "ValueError", "TypeError", "AssertionError",
    )
)
_PURE_MODULES = (math, cmath, operator)
_NO_FALL_THROUGH = frozenset(
    ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "RETURN_VALUE",
     "RETURN_CONST", "RAISE_VARARGS", "RERAISE")
)
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_NO_STACK = frozenset(
    ("NOP", "RESUME", "PRECALL", "KW_NAMES", "CACHE", "EXTENDED_ARG", "MAKE_CELL", "COPY_FREE_VARS",
     "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "DELETE_FAST")
)
_MAX_DEPTH = 6


def scan_function_class(session, function_class: type, arg_types: list[type]) -> None:
    """Guard what `function_class`'s methods read from outside; raise Unsupported where they
    change or read outside state a compiled graph cannot keep. `arg_types`: the Python types
    of the positional arguments of `apply`."""
    immutable = (torch.Tensor, enum.Enum, type, tuple, frozenset, range, slice, *CONSTANT_TYPES)
    arguments = tuple(None if issubclass(t, immutable) or _torch_owned(t) else _Argument(t) for t in arg_types)
    _Scan(session, function_class).function_class(function_class, arguments=arguments)


def _torch_owned(value: Any) -> bool:
    """torch's own functions, classes and objects: what they read and do is torch's, and
    tensors they make are traced."""
    # Only the type's own attributes of an arbitrary object are read: its `__getattr__` is user code.
    if isinstance(value, types.ModuleType):
        module = value.__name__
    elif isinstance(value, types.BuiltinFunctionType) and isinstance(value.__module__, str):
        module = value.__module__  # torch.sin, math.sqrt (a bound `[].append` has none)
    elif isinstance(value, types.FunctionType):
        module = value.__module__
    elif isinstance(value, types.MethodDescriptorType | types.WrapperDescriptorType):
        module = value.__objclass__.__module__
    else:
        module = type.__getattribute__(value if isinstance(value, type) else type(value), "__module__")
    return isinstance(module, str) and (module == "torch" or module.startswith("torch."))


def _plain(value: Any) -> bool:
    """A value whose use by the method needs no guard beyond its own reads: numbers and
    strings and enum members (guarded when read), tensors (graph values), functions, classes
    and modules."""
    return (
        is_constant_type(value)
        or isinstance(value, enum.Enum)
        or isinstance(value, torch.Tensor | type | types.ModuleType | types.FunctionType | types.BuiltinFunctionType)
        or _torch_owned(value)
    )


class _Scan:
    def __init__(self, session, function_class: type):
        self.session = session
        self.name = function_class.__qualname__
        self.seen: set = set()

    # --- entry points ------------------------------------------------------------------------

    def function_class(self, function_class: type, depth: int = 0, arguments: tuple = ()) -> None:
        if function_class in self.seen:
            return
        self.seen.add(function_class)
        # forward(ctx, *args), or forward(*args) with a setup_context(ctx, inputs, output).
        setup_context = inspect.getattr_static(function_class, "setup_context", None)
        new_style = not _torch_owned(getattr(setup_context, "__func__", setup_context))
        held = HeldObjectSource(f"class {function_class.__qualname__}", id(function_class), function_class)
        for name in ("forward", "setup_context", "backward", "vjp", "jvp"):
            method = inspect.getattr_static(function_class, name, None)
            fn = getattr(method, "__func__", method)
            if not isinstance(fn, types.FunctionType) or _torch_owned(fn):
                continue  # torch.autograd.Function's own defaults
            # The methods themselves, which a program may replace between calls (a patched backward).
            if isinstance(method, classmethod):
                self.session.add_guard(kinds.IdentityMatch(AttrSource(AttrSource(held, name), "__func__"), fn))
            else:
                self.session.add_guard(kinds.IdentityMatch(AttrSource(held, name), getattr(function_class, name)))
            params = () if name != "forward" else arguments if new_style else (None, *arguments)
            if isinstance(method, classmethod):
                params = (_Outside(function_class, held), *params)  # cls: its attributes are read as the class's
            self.function(fn, params, depth)

    def function(self, fn: Any, params: tuple, depth: int) -> None:
        fn = inspect.unwrap(fn)  # once_differentiable's functools.wraps wrapper
        if not isinstance(fn, types.FunctionType) or _torch_owned(fn):
            return
        key = (fn, tuple(p if isinstance(p, _Argument) else isinstance(p, _Outside) for p in params))
        if key in self.seen or depth > _MAX_DEPTH:
            return
        self.seen.add(key)
        _CodeScan(self, fn, params, depth).run(fn.__code__, top=True)

    # --- what a read or a call means -----------------------------------------------------------

    def refuse(self, what: str, fn: types.FunctionType, line: int | None) -> None:
        where = f"{fn.__qualname__} ({fn.__code__.co_filename}:{line or fn.__code__.co_firstlineno})"
        raise Unsupported(
            f"the autograd.Function {self.name} runs natively, not traced, and {where} {what}",
            hint=f"the graph breaks around {self.name}.apply, which runs eagerly on every call "
            "(a compiled graph would have read or changed that state once, while compiling)",
        )

    def read(self, value: Any, source: Any, fn, line) -> _Outside:
        """A value read from outside: guarded when it is a number, string or flag."""
        if is_constant_type(value):
            if source is None:
                self.refuse(f"reads {value!r} where no guard can follow it", fn, line)
            self.session.add_guard(kinds.ConstantMatch(source, value))
        elif isinstance(value, types.FunctionType | enum.Enum) and source is not None:
            self.session.add_guard(kinds.IdentityMatch(source, value))
        return _Outside(value, source)

    def attribute(self, base: _Outside, name: str, fn, line) -> _Outside:
        """`base.name` read without running a descriptor or `__getattr__`."""
        owner = base.value
        if isinstance(owner, torch.Tensor):
            return None  # tensor metadata and methods: traced
        if _torch_owned(owner) and not isinstance(owner, type):
            return _Outside(getattr(owner, name), None)  # torch.ops.aten.sin, torch.nn.functional
        plain = isinstance(owner, types.ModuleType | type) or (
            type(owner).__getattribute__ is object.__getattribute__ and not hasattr(type(owner), "__getattr__")
        )
        try:
            value = inspect.getattr_static(owner, name) if plain else None
        except AttributeError:
            value = None
            plain = False
        if not plain:
            self.refuse(f"reads {_spelled(base)}.{name} through an attribute hook no guard can follow", fn, line)
        if isinstance(value, staticmethod | classmethod):
            value = value.__func__ if isinstance(value, staticmethod) else types.MethodType(value.__func__, owner)
        elif isinstance(value, property) or (
            hasattr(type(value), "__get__") and type(value).__module__ != "builtins" and not isinstance(owner, types.ModuleType)
        ):
            self.refuse(f"reads {_spelled(base)}.{name} through a descriptor no guard can follow", fn, line)
        source = AttrSource(base.source, name) if base.source is not None else None
        return self.read(value, source, fn, line)

    def call(self, callee, receiver, args: list, fn, line, depth: int) -> None:
        """A call the method makes: followed into Python functions, allowed for torch's and pure
        builtins, refused where it changes outside state or cannot be seen into."""
        outside_args = [a for a in args if isinstance(a, _Outside)]
        if isinstance(callee, _ArgumentMethod):
            self.argument_method(callee, receiver, args, fn, line, depth)
            return
        if not isinstance(callee, _Outside):
            for arg in outside_args:  # its own callable (x.add, ctx.save_for_backward) given outside state
                self.consume(arg, "passes", fn, line)
            return
        value = callee.value
        if isinstance(value, types.MethodType) and value.__func__ is torch.autograd.Function.apply.__func__:
            self.function_class(value.__self__, depth + 1)  # a nested Function
            for arg in outside_args:
                self.consume(arg, "passes", fn, line)
            return
        if isinstance(value, types.FunctionType) and not _torch_owned(value):
            params = ((receiver,) if isinstance(receiver, _Outside) else ()) + tuple(args)
            self.function(value, params, depth + 1)
            return
        if isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType) and not _torch_owned(value.__func__):
            self.function(value.__func__, (_Outside(value.__self__, None), *args), depth + 1)
            return
        if isinstance(value, type) and not _torch_owned(value) and value.__module__ != "builtins":
            init = inspect.getattr_static(value, "__init__", None)
            if isinstance(init, types.FunctionType):
                self.function(init, (None, *args), depth + 1)
            return
        if _torch_owned(value) or value in _PURE_BUILTINS or _in_pure_module(value) or (
            isinstance(value, type) and value.__module__ == "builtins"
        ):
            for arg in outside_args:
                self.consume(arg, "passes", fn, line)
            return
        self.refuse(f"calls {_spelled(callee)}, which may change or read state the compiler cannot see", fn, line)

    def argument_method(self, callee: _ArgumentMethod, receiver, args: list, fn, line, depth: int) -> None:
        method = inspect.getattr_static(callee.type_, callee.name, None)
        if isinstance(method, types.FunctionType):  # the argument's own class: followed, with it as self
            self.function(method, (receiver, *args), depth + 1)
        elif callee.name in _MUTATING_METHODS or callee.type_.__module__ != "builtins":
            self.refuse(f"calls .{callee.name}() of its {callee.type_.__name__} argument, which the graph "
                        "would call on a copy, once", fn, line)

    def consume(self, slot, how: str, fn, line) -> None:
        """An outside value used as a whole (passed on, iterated, tested, stored): fine for
        numbers (guarded), tensors, functions and classes; refused for lists, dicts and objects,
        whose contents the use reads unguarded."""
        if isinstance(slot, _Outside) and not _plain(slot.value):
            self.refuse(f"{how} {_spelled(slot)} (a {type(slot.value).__name__} from outside) whose contents no guard follows", fn, line)


def _in_pure_module(value: Any) -> bool:
    owner = getattr(value, "__self__", None)
    return isinstance(value, types.BuiltinFunctionType) and any(owner is m for m in _PURE_MODULES)


def _spelled(slot: _Outside) -> str:
    if slot.source is not None:
        return str(slot.source)
    name = getattr(type(slot.value), "__name__", "")  # the type's, not the object's own attribute hooks
    return slot.value.__qualname__ if isinstance(slot.value, types.BuiltinFunctionType) else name


class _CodeScan:
    """One function's code objects (its own and the nested ones: 3.11's comprehensions,
    lambdas), followed instruction by instruction."""

    def __init__(self, scan: _Scan, fn: types.FunctionType, params: tuple, depth: int):
        self.scan, self.fn, self.params, self.depth = scan, fn, params, depth
        self.cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        builtins_ = fn.__builtins__ if isinstance(fn.__builtins__, dict) else vars(fn.__builtins__)
        self.builtins = builtins_

    def run(self, code: types.CodeType, top: bool) -> None:
        params = self.params if top else ()
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        local = {name: slot for name, slot in zip(names, params)}
        stack: list = []
        at_target: dict[int, list] = {}
        falls_through = True
        line = None
        for inst in dis.get_instructions(code):
            line = (inst.positions.lineno if inst.positions else None) or line
            if not falls_through:  # reached by a jump only (or an exception handler: unknown)
                stack = list(at_target.get(inst.offset, []))
            pre = list(stack)
            self.step(inst, stack, local, line)
            if inst.opcode in _JUMPS and isinstance(inst.argval, int):
                depth = len(pre) + _effect(inst, jump=True)
                at_target.setdefault(inst.argval, (pre + [None] * depth)[:depth] if depth >= 0 else [])
            falls_through = inst.opname not in _NO_FALL_THROUGH
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self.run(const, top=False)

    def step(self, inst: dis.Instruction, stack: list, local: dict, line) -> None:  # noqa: C901 (one case per opcode)
        scan, fn, op = self.scan, self.fn, inst.opname

        def pop():
            return stack.pop() if stack else None

        if op == "LOAD_GLOBAL":
            if inst.arg & 1:
                stack.append(None)  # the NULL before a called global
            stack.append(self.global_read(inst.argval, line))
        elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
            stack.append(self.cell_read(inst.argval, line))
        elif op in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR"):
            stack.append(local.get(inst.argval))
        elif op == "LOAD_CONST":
            stack.append(_Const(inst.argval))
        elif op == "STORE_FAST":
            local[inst.argval] = pop()
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            base = pop()
            attr = scan.attribute(base, inst.argval, fn, line) if isinstance(base, _Outside) else None
            if op == "LOAD_METHOD" or inst.arg & 1 and op == "LOAD_ATTR" and _method_flag():
                if isinstance(base, _Argument):
                    attr = _ArgumentMethod(base.type_, inst.argval)
                stack.extend((attr, base))  # [method, self]: the call sees both
            else:
                stack.append(attr)
        elif op == "BINARY_SUBSCR":
            key, container = pop(), pop()
            stack.append(self.item_read(container, key, line))
        elif op == "BINARY_SLICE":
            pop(), pop()
            container = pop()
            scan.consume(container, "slices", fn, line)
            stack.append(None)
        elif op in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            stack.pop() if op == "STORE_GLOBAL" and stack else None
            scan.refuse(f"assigns the global {inst.argval}", fn, line)
        elif op in ("STORE_DEREF", "DELETE_DEREF"):
            value = pop() if op == "STORE_DEREF" else None
            if inst.argval in self.cells:
                scan.refuse(f"assigns the closure variable {inst.argval}", fn, line)
            scan.consume(value, "keeps", fn, line)
        elif op in ("STORE_ATTR", "DELETE_ATTR"):
            target = pop()
            value = pop() if op == "STORE_ATTR" else None
            if isinstance(target, _Outside):
                scan.refuse(f"sets the attribute {inst.argval} of {_spelled(target)}", fn, line)
            if isinstance(target, _Argument):
                scan.refuse(f"sets the attribute {inst.argval} of its {target.type_.__name__} argument", fn, line)
            scan.consume(value, "stores", fn, line)
        elif op in ("STORE_SUBSCR", "DELETE_SUBSCR", "STORE_SLICE"):
            count = {"STORE_SUBSCR": 3, "DELETE_SUBSCR": 2, "STORE_SLICE": 4}[op]
            popped = [pop() for _ in range(count)]
            container = popped[1] if op != "STORE_SLICE" else popped[2]
            if isinstance(container, _Outside) and not isinstance(container.value, torch.Tensor):
                scan.refuse(f"writes an item of {_spelled(container)}", fn, line)
            if isinstance(container, _Argument):
                scan.refuse(f"writes an item of its {container.type_.__name__} argument", fn, line)
            scan.consume(popped[-1] if op != "DELETE_SUBSCR" else None, "stores", fn, line)
        elif op == "COPY":
            stack.append(stack[-inst.arg] if len(stack) >= inst.arg else None)
        elif op == "SWAP":
            if len(stack) >= inst.arg:
                stack[-1], stack[-inst.arg] = stack[-inst.arg], stack[-1]
        elif op == "PUSH_NULL":
            stack.append(None)
        elif op == "CALL":
            args = [pop() for _ in range(inst.arg)][::-1]
            second, first = pop(), pop()
            callee, receiver = (first, second) if first is not None else (second, None)
            scan.call(callee, receiver, args, fn, line, self.depth)
            stack.append(None)
        elif op == "CALL_FUNCTION_EX":
            popped = [pop() for _ in range(2 + (inst.arg & 1))]
            callee = pop()
            scan.call(callee, None, popped, fn, line, self.depth)
            stack.append(None)
        elif op not in _NO_STACK:
            self.other(inst, stack, line)

    def other(self, inst: dis.Instruction, stack: list, line) -> None:
        """Any other instruction: what it takes off the stack is used as a whole (tested,
        iterated, combined), what it pushes is the method's own."""
        effect = _effect(inst, jump=False)
        # Most take what they replace (GET_ITER, UNARY_NOT: one for one); those pushing more
        # push on top of what they read (FOR_ITER, BEFORE_WITH), except the unpackings.
        taken = max(-effect, 0) or (1 if effect == 0 or inst.opname in ("UNPACK_SEQUENCE", "UNPACK_EX") else 0)
        for _ in range(min(taken, len(stack))):
            self.scan.consume(stack.pop(), "uses", self.fn, line)
        stack.extend([None] * (effect + taken))

    def global_read(self, name: str, line):
        fn = self.fn
        if name in fn.__globals__:
            return self.scan.read(fn.__globals__[name], self.scan.session.global_source(fn.__globals__, name), fn, line)
        if name in self.builtins:
            return _Outside(self.builtins[name], None)
        return None  # a NameError when run, as eager's

    def cell_read(self, name: str, line):
        if name not in self.cells:
            return None  # a cell of the method's own (a local a nested function shares)
        cell = self.cells[name]
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell: a NameError when read, nothing to guard
            return None
        source = AttrSource(HeldObjectSource(f"cell {name} of {self.fn.__qualname__}", id(cell), cell), "cell_contents")
        return self.scan.read(value, source, self.fn, line)

    def item_read(self, container, key, line):
        if not isinstance(container, _Outside) or isinstance(container.value, torch.Tensor) or _torch_owned(container.value):
            self.scan.consume(key, "indexes by", self.fn, line)
            return None
        value, fn = container.value, self.fn
        if isinstance(key, _Outside) and is_constant_type(key.value):
            key = _Const(key.value)  # a guarded global or cell number: the key is known too
        if type(value) in (dict, list, tuple) and isinstance(key, _Const) and is_constant_type(key.value):
            try:
                item = value[key.value]
            except (KeyError, IndexError, TypeError):
                return None  # raises when run, as eager's
            source = ItemSource(container.source, key.value) if container.source is not None else None
            return self.scan.read(item, source, fn, line)
        self.scan.refuse(f"reads an item of {_spelled(container)} by a key no guard can follow", fn, line)
        return None


def _method_flag() -> bool:
    """3.12's LOAD_ATTR with its low bit set loads a method and its receiver (3.11's LOAD_METHOD)."""
    return "LOAD_METHOD" not in dis.opmap


def _effect(inst: dis.Instruction, *, jump: bool) -> int:
    try:
        return dis.stack_effect(inst.opcode, inst.arg, jump=jump)
    except ValueError:
        return dis.stack_effect(inst.opcode, jump=jump) if inst.arg is None else 0
