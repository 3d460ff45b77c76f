"""Automatic dynamic shapes: which input dimensions changed size between calls.

Each entry remembers the sizes its tensor inputs had (`input_shapes`, by source). When a call
misses every entry, the sizes it brings are compared with those: a dimension whose size
differs becomes symbolic in the next capture (`CodeCache.automatic_dims`), so a third size
does not recompile. Parameters and buffers are not inputs of this kind (their sizes stay
static, as in torch.compile).

Int and float inputs are treated alike: each entry remembers the numbers it was specialized to
(`input_numbers`); one whose value differs in a call that misses becomes a symbolic number
input (`CodeCache.changing_numbers`, see capture.values.changing_number) in later captures.
"""

from __future__ import annotations

import inspect
import types

import torch
from guards import kinds
from guards.sources import BufferSource, LocalSource, ParameterSource

from ..sources import HeldSource
from ..values.changing_number import pinned_numbers


def input_shapes(result) -> list[tuple]:
    """(source, static sizes) of the captured graph's tensor inputs read from the frame."""
    shapes = []
    for graph_input in result.inputs:
        source = graph_input.source
        if isinstance(source, (HeldSource, ParameterSource, BufferSource)):
            continue
        if isinstance(graph_input.value, torch.nn.Parameter) or not isinstance(graph_input.value, torch.Tensor):
            continue
        fake = graph_input.node.meta["example_value"]
        shapes.append((source, tuple(s if isinstance(s, int) else None for s in fake.shape)))
    return shapes


def input_numbers(result) -> list[tuple]:
    """(source, value) of the ints and floats read from the frame's arguments that the entry's
    guards pin to one value (each item of a pinned tuple of numbers too)."""
    return [
        pinned
        for guard in result.guards
        if type(guard) is kinds.ConstantMatch and isinstance(guard.source.root(), LocalSource)
        for pinned in pinned_numbers(guard.source, guard.value)
    ]


def changed_numbers(fn: types.FunctionType, entries, args, kwargs) -> set:
    """Sources of number inputs whose value in this call differs from one an entry pinned
    (with the same type: an int that becomes a float is another entry's business)."""
    scope = _scope(fn, args, kwargs)
    if scope is None:
        return set()
    changed = set()
    for entry in entries:
        for source, pinned in getattr(entry, "input_numbers", ()):
            try:
                value = eval(str(source), scope)  # sources print as Python over L, G and C
            except Exception:
                continue
            if type(value) is type(pinned) and value != pinned:
                changed.add(source)
    return changed


def changed_dims(fn: types.FunctionType, entries, args, kwargs) -> dict:
    """source -> dims whose size in this call differs from a static size an entry saw."""
    scope = _scope(fn, args, kwargs)
    if scope is None:
        return {}
    changed: dict = {}
    for entry in entries:
        for source, sizes in getattr(entry, "input_shapes", ()):
            try:
                value = eval(str(source), scope)  # sources print as Python over L, G and C
            except Exception:
                continue
            if not isinstance(value, torch.Tensor) or value.dim() != len(sizes):
                continue
            dims = {d for d, size in enumerate(sizes) if size is not None and value.shape[d] != size}
            if dims:
                changed.setdefault(source, set()).update(dims)
    return changed


def _scope(fn: types.FunctionType, args, kwargs) -> dict | None:
    try:
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    cells = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            cells[name] = cell.cell_contents
        except ValueError:
            pass
    return {"L": dict(bound.arguments), "G": fn.__globals__, "C": cells}
