"""Which objects' ends a program can see, and where capture must leave a drop to Python.

CPython frees an object when its last reference goes, and a program can watch that: a weak
reference answers None and runs its callback, a `WeakValueDictionary` loses the entry,
`weakref.finalize` and `__del__` run. A traced `del o` (or `o = other`) cannot tell whether it
drops the last reference, so when the object is watched the graph breaks there and the drop
runs natively (capture.runtime.native_steps), where the object dies exactly when eager's does.
So does a store into a closure cell (`o = None` where a closure reads `o`).
"""

from __future__ import annotations

import weakref

import torch
from guards.sources import LocalSource

from ..sources import HeldSource
from .cells import CellValue, ExistingCellValue
from .lazy import LazyInput
from .objects import ObjectValue

# Objects no weak reference or finalizer can watch, or that live as long as the program.
# Tensors are left out too: their end is memory, which the graph and the runtime free early.
LIFETIME_UNSEEN = (
    int, float, complex, str, bytes, bool, type(None), range, slice, type, torch.Tensor,
    torch.dtype, torch.device, torch.Size, torch.memory_format, torch.layout,
)


def end_is_watched(obj: object) -> bool:
    """Whether something would notice `obj` being freed now."""
    if issubclass(type(obj), LIFETIME_UNSEEN):  # not isinstance: it reads __class__ through a Python __getattribute__
        return False
    if getattr(type(obj), "__del__", None) is not None:
        return True
    return weakref.getweakrefcount(obj) > 0 and any(not _torch_bookkeeping(ref) for ref in weakref.getweakrefs(obj))


def _torch_bookkeeping(ref: weakref.ref) -> bool:
    """A weak reference torch keeps for itself: once torch.compile has run in the process, its
    generation tracker files every nn.Module built afterwards in a weak-key table whose
    callback is torch's code. No program sees those entries go; counted, every loop over a
    module list broke the graph at its loop variable."""
    callback = getattr(ref, "__callback__", None)
    return callback is not None and getattr(callback, "__module__", "").startswith("torch.")


def drop_may_end_watched(frame, name: str) -> bool:
    """Whether dropping the local `name` of the traced `frame` may free an object whose end is
    watched. An object read through an attribute or item of another is still held by it, one
    another local or stack slot of the traced frames binds is held there; one the frame was
    handed (an argument, a resume function's local) may be held by the frame alone."""
    value = frame.locals.get(name)
    if not isinstance(value, (LazyInput, ObjectValue)):
        return False
    source = value.source
    if source is not None and not isinstance(source, (LocalSource, HeldSource)):
        return False
    return end_is_watched(value.obj) and not _bound_elsewhere(frame, name, value.obj)


def rebinding_cell_may_end_watched(frame, name: str) -> bool:
    """Whether storing into the closure cell `name` of the traced `frame` may free an object
    whose end is watched: the cell's object, held by no traced frame's local or stack slot."""
    cell = frame.cells.get(name)
    value = None
    if isinstance(cell, CellValue):
        value = cell.contents
    elif isinstance(cell, ExistingCellValue):
        value = frame.session.side_effects.pending_cell(cell.cell)
        if value is None:  # still what it held before the call
            try:
                return _watched_and_free(frame, cell.cell.cell_contents)
            except ValueError:  # empty
                return False
    return isinstance(value, (LazyInput, ObjectValue)) and _watched_and_free(frame, value.obj)


def _watched_and_free(frame, obj: object) -> bool:
    return end_is_watched(obj) and not _bound_elsewhere(frame, None, obj)


def _bound_elsewhere(frame, name: str | None, obj: object) -> bool:
    """Whether a traced frame binds `obj` other than as `frame`'s local `name` (a loop over
    optimizers rebinds `opt` to objects the list and the parameters still hold)."""
    current = frame
    while current is not None:
        others = [v for n, v in current.locals.items() if not (current is frame and n == name)]
        for value in others + list(current.stack):
            if isinstance(value, (LazyInput, ObjectValue)) and value.obj is obj:
                return True
        current = current.parent
    return False
