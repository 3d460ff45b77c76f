"""Tail calls between compiled entries and resume functions, holding nothing eager would not.

An entry that breaks its graph ends by calling a resume function. Called directly, a loop
whose body breaks would nest one Python frame per iteration (the resume function's entry calls
the resume function again) and overflow the stack after a few hundred iterations. So the
entry returns `TailCall(resume, args)` instead, and the dispatcher of the function the user
called runs the chain in a loop (`run_chain`). Resume functions are called through their
`dispatch_tail` (which passes tail calls on); everything else sees plain return values.

The arguments travel in a list that the callee empties (`call_taking`): eager's frame drops an
object at `del` or when the name is rebound, and so must the chain, or the object outlives it
(a weak reference still answers, a finalizer runs late, a big tensor stays allocated through
the rest of the function). A Python-to-Python call moves the arguments from the caller's stack
into the callee's frame (CPython 3.11+ consumes them), so after `fn(box.pop(), ...)` only the
callee holds them.
"""

from __future__ import annotations

import threading
from typing import Callable


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


_CALLERS: dict[int, Callable] = {}


def call_taking(fn: Callable, box: list):
    """`fn(*box)`, emptying `box` on the way: only `fn`'s frame holds the arguments."""
    caller = _CALLERS.get(len(box))
    if caller is None:
        pops = ", ".join(["box.pop()"] * len(box))
        namespace: dict = {}
        exec(f"def call(fn, box):\n    box.reverse()\n    return fn({pops})\n", namespace)
        caller = _CALLERS.setdefault(len(box), namespace["call"])
    return caller(fn, box)
