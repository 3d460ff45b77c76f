"""Tail calls between compiled entries and resume functions.

An entry that breaks its graph ends by calling a resume function. Called directly, a loop
whose body breaks would nest one Python frame per iteration (the resume function's entry calls
the resume function again) and overflow the stack after a few hundred iterations. So the
entry returns `TailCall(resume, args)` instead, and the dispatcher of the function the user
called runs the chain in a loop. Resume functions are called through their `dispatch_tail`
(which passes tail calls on); everything else sees plain return values.
"""

from __future__ import annotations

from typing import Callable


class TailCall:
    __slots__ = ("fn", "args")

    def __init__(self, fn: Callable, args: tuple):
        self.fn = fn
        self.args = args

    def __repr__(self) -> str:
        return f"TailCall({getattr(self.fn, '__name__', self.fn)}, {len(self.args)} arguments)"
