"""The interpreter against the bytecode of the running CPython (3.11 or 3.12): every opcode
that ordinary model code compiles to has a handler, and the constructs whose encoding changed
between versions (comprehensions inlined in 3.12, BINARY_SLICE/STORE_SLICE, LOAD_SUPER_ATTR,
RETURN_CONST, CALL_INTRINSIC_1, FOR_ITER/END_FOR) trace correctly."""

from __future__ import annotations

import dis
import sys

import pytest
import torch
from torch import nn

from capture.bytecode import decode
from capture.interpreter.registry import HANDLERS
from helpers import check


class Base(nn.Module):
    def scale(self, x):
        return x * 2

    @property
    def offset(self):
        return 1


class Derived(Base):
    def scale(self, x):
        return super().scale(x) + super().offset


def comprehensions(x):
    squares = [t * t for t in (x, x + 1)]
    by_index = {i: t for i, t in enumerate(squares)}
    sizes = {s for s in x.shape}
    outer = 5
    shadow = [outer for outer in range(2)]
    return squares, by_index, sizes, outer, shadow


def slices(x):
    items = [x, x + 1, x + 2, x + 3]
    items[1:3] = [x * 10]
    y = x.clone()
    y[1:3] = 0
    return items[::2], items[1:], y[:2], +x.sum()


def star_calls(x):
    def inner(*args, **kwargs):
        return sum(args) + len(kwargs)

    parts = [x, x]
    return inner(*parts, *[x], **{"a": 1}), inner(*(p for p in parts))


def early_return(x):
    if x.shape[0] > 100:
        return None
    for i in range(2):
        if i == 1:
            return x + i
    return x


def try_with(x):
    with torch.no_grad():
        try:
            y = x * 2
        finally:
            z = x + 1
    return y, z


CONSTRUCTS = [comprehensions, slices, star_calls, early_return, try_with, Derived().scale]


def _opnames(code) -> set[str]:
    names = {inst.opname for inst in dis.get_instructions(code)}
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            names |= _opnames(const)
    return names


@pytest.mark.parametrize("fn", CONSTRUCTS, ids=lambda f: f.__name__)
def test_every_opcode_has_a_handler(fn):
    code = getattr(fn, "__func__", fn).__code__
    missing = _opnames(code) - set(HANDLERS) - {"CACHE"}
    assert not missing, f"Python {sys.version_info[:2]}: no handler for {sorted(missing)}"


@pytest.mark.parametrize("fn", CONSTRUCTS, ids=lambda f: f.__name__)
def test_construct_matches_eager(fn):
    check(fn, lambda: (torch.randn(4, 3),))


def test_exception_table_is_decoded_like_dis():
    code = try_with.__code__
    ours = [(e.start, e.end, e.target, e.depth, e.lasti) for e in decode(code).exception_table]
    if hasattr(dis, "_parse_exception_table"):
        theirs = [(e.start, e.end, e.target, e.depth, e.lasti) for e in dis._parse_exception_table(code)]
        assert ours == theirs
    assert ours, "try/finally inside with has handlers"
