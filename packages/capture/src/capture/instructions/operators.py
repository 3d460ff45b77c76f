"""Binary, in-place, unary, comparison, identity and membership instructions."""

from __future__ import annotations

from .. import operators
from ..interpreter.registry import handles
from ..values.constant import ConstantValue


@handles("BINARY_OP")
def _binary_op(frame, inst):
    # 3.11+ has one BINARY_OP whose argrepr is the operator ("+", "+=", ...).
    right = frame.pop()
    left = frame.pop()
    symbol = inst.argrepr
    if symbol.endswith("=") and symbol not in operators.COMPARE:
        frame.push(operators.inplace(frame, symbol, left, right))
    else:
        frame.push(operators.binary(frame, symbol, left, right))


@handles("COMPARE_OP")
def _compare_op(frame, inst):
    # `dis` decodes both encodings (3.12 keeps the operator in the high bits) into argval.
    right = frame.pop()
    left = frame.pop()
    frame.push(operators.compare(frame, inst.argval, left, right))


@handles("IS_OP")
def _is_op(frame, inst):
    right = frame.pop()
    left = frame.pop()
    same = operators.is_(frame, left, right).value
    frame.push(ConstantValue(same != bool(inst.arg)))


@handles("CONTAINS_OP")
def _contains_op(frame, inst):
    container = frame.pop()
    item = frame.pop()
    result = operators.contains(frame, item, container)
    if inst.arg:
        result = ConstantValue(not result.truth(frame))
    frame.push(result)


@handles("UNARY_NEGATIVE")
def _negative(frame, inst):
    frame.push(operators.unary(frame, "-", frame.pop()))


@handles("UNARY_POSITIVE")
def _positive(frame, inst):
    # 3.11 only; 3.12 spells it CALL_INTRINSIC_1 INTRINSIC_UNARY_POSITIVE.
    frame.push(operators.unary(frame, "+", frame.pop()))


@handles("UNARY_INVERT")
def _invert(frame, inst):
    frame.push(operators.unary(frame, "~", frame.pop()))


@handles("UNARY_NOT")
def _not(frame, inst):
    frame.push(ConstantValue(not frame.pop().truth(frame)))
