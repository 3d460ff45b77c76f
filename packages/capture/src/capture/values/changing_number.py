"""An int or float frame input whose value changes between calls (`n` in `f(x, n)`, the
`n = x.sum().item()` a resume function receives after the `.item()` graph break, the loop
index a resume function receives).

Baking such a number into the graph would recompile for every value (the guard on its value
fails each call). As torch.compile does (automatic dynamic for scalars), capture specializes
it on the first call and, once a recompile shows it changed, makes it a graph input holding a
symbol of the ShapeEnv: a `torch.SymInt`, or a `torch.SymFloat` for floats (torch.compile
passes those as 0-d tensors; a symbolic float gives the same results with Python's scalar
type promotion). Arithmetic on it stays in the graph; a question about its value (`if n > 0`,
`range(n)`) asks the ShapeEnv, which guards the answer. `dynamic=True` makes such inputs
symbolic from the first call, `dynamic=False` always specializes them.
"""

from __future__ import annotations

import math

import torch
from guards import kinds
from guards.sources import ItemSource, LocalSource

# bool is left out: a flag that changes selects another path, worth an entry of its own.
CHANGING_NUMBER_TYPES = (int, float)
# Constants whose int items may change one by one (a shape computed before a graph break).
SIZE_TUPLES = (tuple, torch.Size)


def is_symbolic_number(session, obj, source) -> bool:
    """Whether the number `obj` read from `source` becomes a symbolic graph input."""
    if type(obj) not in CHANGING_NUMBER_TYPES or source is None:
        return False
    if type(obj) is float and not math.isfinite(obj):
        # An infinite or NaN float stays a constant, guarded by value: a symbol of the
        # ShapeEnv is a finite real, whatever its hint (`ord=inf` of a norm selects another
        # formula; `not s > 0` is guarded as `s <= 0`, which a NaN fails too).
        return False
    if source in session.changing_numbers:
        return True
    # dynamic=True: the arguments themselves, not what is read through them (module
    # attributes stay specialized, as torch.compile's are).
    return session.dynamic and isinstance(source, LocalSource)


def holds_symbolic_number(session, obj: tuple, source) -> bool:
    """Whether a tuple (or torch.Size) of constants read from `source` holds a number that
    becomes symbolic: then its items are wrapped one by one instead of the tuple being one
    guarded constant.
    (A resume function receives the `output_shape = (-1, seq_len, hidden)` a model computed
    before a graph break: pinning the whole tuple would recompile for every sequence length.)"""
    if source is None:
        return False
    return any(
        changing != source and _tuple_root(changing, stop=source) == source for changing in session.changing_numbers
    )


def pinned_numbers(source, value):
    """(source, number) of each int and float in a constant pinned at `source`: the value
    itself, or the items of a tuple or torch.Size (nested too), each readable on its own."""
    if type(value) in CHANGING_NUMBER_TYPES:
        yield source, value
    elif type(value) in SIZE_TUPLES:
        for i, item in enumerate(value):
            yield from pinned_numbers(ItemSource(source, i), item)


def _tuple_root(source, stop=None):
    """`source` without its trailing integer subscripts (`L['shape'][1]` -> `L['shape']`),
    stopping at `stop` if it is met on the way."""
    while isinstance(source, ItemSource) and type(source.key) is int and source != stop:
        source = source.base
    return source


def symbolic_number(session, obj: int | float, source):
    """The SymValue of the graph input that carries `obj`, guarded by its type, and a float by
    being finite: the ShapeEnv takes its symbol for a finite real (`a == a`, `a - a == 0`
    are decided without a guard), so a NaN or an infinity must not reach this entry."""
    session.add_guard(kinds.TypeMatch(source, type(obj)))
    if type(obj) is float:
        session.add_guard(kinds.FiniteFloat(source))
    return session.graph.add_number_input(obj, source)
