"""Jumps, loops, returns and generator yields.

Branches are decided while tracing: their conditions must be known (constants, tensor
metadata); a condition on tensor data is unsupported (the graph breaks at the jump, which then
runs natively). Loops over known items unroll; iterating an iterator object that came from
outside (a resume function's loop, a generator) breaks at each FOR_ITER.
"""

from __future__ import annotations

import collections.abc
import sys

from ..errors import Unsupported
from ..interpreter.registry import handles
from ..operators import identical
from ..values.constant import ConstantValue
from ..values.exceptions import raise_user_error
from ..values.functions import GeneratorValue
from ..values.iterators import IteratorValue
from ..values.iterators import EndlessIteratorValue
from ..values.objects import ObjectValue

NONE = ConstantValue(None)


@handles("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP")
def _jump(frame, inst):
    frame.jump_to(inst.argval)


def _pop_jump(when: bool):
    def handler(frame, inst):
        if frame.pop().truth(frame) is when:
            frame.jump_to(inst.argval)

    return handler


def _pop_jump_none(when: bool):
    def handler(frame, inst):
        if bool(identical(frame, frame.pop(), NONE)) is when:
            frame.jump_to(inst.argval)

    return handler


# 3.11 has forward and backward variants of each conditional jump; 3.12 only forward ones,
# spelled without the direction. `dis` resolves either to an absolute target.
handles("POP_JUMP_IF_TRUE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE")(_pop_jump(True))
handles("POP_JUMP_IF_FALSE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE")(_pop_jump(False))
handles("POP_JUMP_IF_NONE", "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NONE")(_pop_jump_none(True))
handles("POP_JUMP_IF_NOT_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE")(
    _pop_jump_none(False)
)


def _jump_or_pop(when: bool):
    # 3.11 only: `a and b` / `a or b` keep the deciding value when they jump.
    def handler(frame, inst):
        if frame.peek().truth(frame) is when:
            frame.jump_to(inst.argval)
        else:
            frame.pop()

    return handler


handles("JUMP_IF_TRUE_OR_POP")(_jump_or_pop(True))
handles("JUMP_IF_FALSE_OR_POP")(_jump_or_pop(False))


# `yield from x` keeps x when it is a generator (which capture has already run: an
# IteratorValue), and iterates it otherwise, as GET_ITER does.
@handles("GET_ITER", "GET_YIELD_FROM_ITER")
def _get_iter(frame, inst):
    value = frame.pop()
    if isinstance(value, IteratorValue) or _is_iterator_object(value):
        frame.push(value)  # iter(it) is it
    else:
        frame.push(IteratorValue.over(frame, value))


def _is_iterator_object(value) -> bool:
    return isinstance(value, ObjectValue) and isinstance(value.obj, collections.abc.Iterator)


# On exhaustion both versions pop the iterator and jump; 3.12's target is the loop's END_FOR,
# which CPython then skips (JUMPBY(oparg + 1)), while 3.11's target is past the loop.
_FOR_ITER_SKIPS_END_FOR = sys.version_info >= (3, 12)


@handles("FOR_ITER")
def _for_iter(frame, inst):
    iterator = frame.peek()
    if not isinstance(iterator, IteratorValue):
        raise Unsupported(
            f"iterating over {iterator.describe()}, whose items capture cannot know in advance",
            hint="the graph breaks at each step of this loop; iterate over a list, tuple, dict, "
            "range or module list to unroll it into one graph",
        )
    item = iterator.next()
    if item is not None:
        frame.push(item)
        return
    frame.pop()
    frame.jump_to(inst.argval)
    if _FOR_ITER_SKIPS_END_FOR and frame.listing.instructions[frame.ip].opname == "END_FOR":
        frame.ip += 1


@handles("RETURN_VALUE")
def _return_value(frame, inst):
    frame.return_value = frame.pop()


@handles("RETURN_CONST")
def _return_const(frame, inst):
    # 3.12: LOAD_CONST + RETURN_VALUE in one instruction.
    frame.return_value = frame.session.wrap(inst.argval, None)


@handles("RETURN_GENERATOR")
def _return_generator(frame, inst):
    # The generator object this would return to the caller; the POP_TOP that follows drops it.
    # Capture makes the generator itself (values.functions.GeneratorValue), whose first
    # `next()` runs this.
    frame.push(NONE)


# SEND drives the iterator of `yield from`: [iterator, sent] -> [iterator, item] while it
# yields; when it is exhausted 3.11 replaces both with the iterator's return value and jumps
# past the loop, while 3.12 leaves [iterator, return value] and jumps to END_SEND, which
# drops the iterator. Capture's consumers only iterate, so the sent value is always None.
_SEND_LEAVES_ITERATOR = sys.version_info >= (3, 12)


@handles("SEND")
def _send(frame, inst):
    sent = frame.pop()  # the value sent in: None for next(), else generator.send's argument
    iterator = frame.peek()
    # Capture runs generators to completion, which an endless one never reaches.
    if not isinstance(iterator, IteratorValue) or isinstance(iterator, EndlessIteratorValue):
        raise Unsupported(f"`yield from` over {iterator.describe()}, whose items capture cannot know in advance")
    if not (sent.is_python_constant() and sent.as_python_constant() is None):
        # As CPython's SEND: a value other than None goes to the delegate's own send().
        if not isinstance(iterator, GeneratorValue):
            raise_user_error(frame, AttributeError, f"'{iterator.python_type().__name__}' object has no attribute 'send'")
        if iterator.started and not iterator.finished:
            iterator.frame.stack[-1] = sent  # where its YIELD_VALUE left None for the value sent in
    item = iterator.next()
    if item is not None:
        frame.push(item)
        return
    # A finished generator hands its return value to the first consumer only.
    returned, iterator.returned = iterator.returned or NONE, None
    if not _SEND_LEAVES_ITERATOR:
        frame.pop()
    frame.push(returned)
    frame.jump_to(inst.argval)


@handles("END_SEND")
def _end_send(frame, inst):
    # 3.12: [iterator, value] -> [value].
    value = frame.pop()
    frame.pop()
    frame.push(value)


@handles("YIELD_VALUE")
def _yield_value(frame, inst):
    frame.yielded.append(frame.pop())
    frame.push(NONE)  # what `send` would deliver; our consumers only iterate
    frame.suspended = True  # the frame's run() returns; the next `next()` continues here
