"""Tail calls between compiled entries and resume functions, holding nothing eager would not.

An entry that breaks its graph ends by calling a resume function. Called directly, a loop
whose body breaks would nest one Python frame per iteration (the resume function's entry calls
the resume function again) and overflow the stack after a few hundred iterations. So the
entry returns `TailCall(resume, args)` instead, and the dispatcher of the function the user
called runs the chain in a loop (`run_chain`). Resume functions are called through their
`dispatch_tail` (which passes tail calls on); everything else sees plain return values.

The arguments travel in a list that the callee empties in its own frame (`taking_box`):
eager's frame drops an object at `del` or when the name is rebound, and so must the chain, or
the object outlives it (a weak reference still answers, a finalizer runs late, a big tensor
stays allocated through the rest of the function). Passing them as arguments is not enough:
under a frame-evaluation hook (torch.compile leaves its own installed after a compile that
failed) the caller's stack holds a call's arguments until the callee returns
(capture.bytecode.boxed).
"""

from __future__ import annotations

import functools
import threading
import types
from typing import Callable

from ..bytecode.boxed import boxed_code


class TailCall:
    __slots__ = ("fn", "args")

    def __init__(self, fn: Callable, args: list):
        self.fn = fn
        self.args = args

    def __repr__(self) -> str:
        return f"TailCall({getattr(self.fn, '__name__', self.fn)}, {len(self.args)} arguments)"


_chains = threading.local()


def run_chain(call: TailCall):
    """Run tail calls until one returns a value. Counts the calls of each resume function
    (`times_called_in_chain`): one called again is in a loop whose body breaks."""
    counts: dict = {}
    outer = getattr(_chains, "counts", None)
    _chains.counts = counts
    try:
        while call.__class__ is TailCall:
            fn = call.fn
            counts[fn] = counts.get(fn, 0) + 1
            call = fn(call.args)
    finally:
        _chains.counts = outer
    return call


def times_called_in_chain(fn: Callable) -> int:
    """How many times the innermost running chain of this thread has called `fn` so far."""
    counts = getattr(_chains, "counts", None)
    return 0 if counts is None else counts.get(fn, 0)


_TAKES_BOX = "_capture_takes_box"


def taking_box(fn: Callable) -> Callable[[list], object]:
    """`fn` called with one list of its positional arguments, which it empties in its own
    frame: afterwards only that frame holds them. `fn` taking a list already is returned.
    Each call makes a new code object: callers keep what they will call again."""
    if getattr(fn, _TAKES_BOX, False):
        return fn
    code = boxed_code(fn.__code__) if isinstance(fn, types.FunctionType) and not fn.__defaults__ else None
    if code is None:
        return _popping(fn)
    boxed = types.FunctionType(code, fn.__globals__, fn.__name__, None, fn.__closure__)
    boxed.__qualname__ = fn.__qualname__
    setattr(boxed, _TAKES_BOX, True)
    return boxed


def _popping(fn: Callable) -> Callable[[list], object]:
    """What cannot take a list itself gets its arguments popped into the call: with no
    frame-evaluation hook installed, CPython moves them into the callee's frame."""
    call = functools.partial(_call_taking, fn)
    setattr(call, _TAKES_BOX, True)
    return call


_CALLERS: dict[int, Callable] = {}


def _call_taking(fn: Callable, box: list):
    """`fn(*box)`, emptying `box` on the way."""
    caller = _CALLERS.get(len(box))
    if caller is None:
        pops = ", ".join(["box.pop()"] * len(box))
        namespace: dict = {}
        exec(f"def call(fn, box):\n    box.reverse()\n    return fn({pops})\n", namespace)
        caller = _CALLERS.setdefault(len(box), namespace["call"])
    return caller(fn, box)
