"""The interpreter against the bytecode of the running CPython (3.11 or 3.12): every opcode
that ordinary model code compiles to has a handler, and the constructs whose encoding changed
between versions (comprehensions inlined in 3.12, BINARY_SLICE/STORE_SLICE, LOAD_SUPER_ATTR,
RETURN_CONST, CALL_INTRINSIC_1, FOR_ITER/END_FOR) trace correctly."""

from __future__ import annotations

import contextlib
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


def resumable(x, n):
    total = x
    k = 2

    def add(t):
        return t + k

    with contextlib.nullcontext():
        for i in range(n):
            total = add(total) + i
            print("tick", i)
            total = total * 2
    return total, [t * k for t in range(3)]


def test_resume_function_continues_like_the_original(capsys):
    """A resume function made at the `print` call of the first iteration, given the stack and
    cells the original had there, finishes the call as the original does (the `with` block
    re-entered, the loop iterator and the closure cell handed over)."""
    import types

    from capture.bytecode.liveness import live_locals
    from capture.bytecode.resume import resume_code

    code = resumable.__code__
    listing = decode(code)
    print_line = code.co_firstlineno + 10
    call = next(i for i in listing.instructions if i.opname == "CALL" and listing.lines[listing.index_of_offset[i.offset]] == print_line)
    after = listing.next_offset(call.offset)
    cell = types.CellType(2)
    add = types.FunctionType(next(c for c in code.co_consts if getattr(c, "co_name", None) == "add"), globals(), "add", None, (cell,))
    state = {"x": 1, "n": 3, "total": 1 + 2 + 0, "k": cell, "add": add}
    live = tuple(name for name in live_locals(code, after) if name in state)
    resume = resume_code(code, after, ("with", "value", "value"), live)
    fn = types.FunctionType(resume.code, globals(), "resumed", None, resumable.__closure__)
    result = fn(*(state[name] for name in live), contextlib.nullcontext(), iter(range(1, 3)), None)
    assert result == resumable(1, 3)
    assert capsys.readouterr().out == "tick 1\ntick 2\ntick 0\ntick 1\ntick 2\n"
    assert resume.original_offset(decode(resume.code).instructions[-1].offset) == listing.instructions[-1].offset
