"""Closure cells: ones made while tracing (MAKE_CELL) hold a symbolic value; ones of functions
that existed before tracing are read through their source and written as side effects."""

from __future__ import annotations

import types

from ..errors import Unsupported
from .base import Value
from .exceptions import raise_user_error


class CellValue(Value):
    def __init__(self, contents: Value | None = None):
        super().__init__(None)
        self.contents = contents

    def describe(self):
        return "closure cell"

    def load(self, frame, name: str) -> Value:
        if self.contents is None:
            raise_user_error(frame, NameError, f"cannot access free variable {name!r} where it is not associated with a value in enclosing scope")
        return self.contents

    def store(self, frame, value: Value) -> None:
        self.contents = value

    def reconstruct(self, writer):
        # The cell first, filled after: its contents may hold it (a recursive local function
        # is in its own closure), which must find the cell already made.
        cell = writer.bind(self, f"{writer.constant(types.CellType)}()")
        if self.contents is not None:
            writer.lines.append(f"{cell}.cell_contents = {writer.value(self.contents)}")
        return cell

    def inner_values(self):
        return [self.contents] if self.contents is not None else []


class ExistingCellValue(Value):
    """A cell of a function defined before tracing: its contents are read from the real cell
    (wrapped with `source`, guarded like any input); writes are recorded and replayed.
    `cell_source`, when known, reads the cell object itself (a resume function receives the
    cells of its frame as arguments, so that closures made before a graph break share them)."""

    def __init__(self, cell, source, cell_source=None):
        super().__init__(source)
        self.cell = cell
        self.cell_source = cell_source
        self._loaded: Value | None = None

    def describe(self):
        return "closure cell"

    def load(self, frame, name: str) -> Value:
        pending = frame.session.side_effects.pending_cell(self.cell)
        if pending is not None:
            return pending
        if self._loaded is None:
            try:
                contents = self.cell.cell_contents
            except ValueError:
                raise_user_error(frame, NameError, f"cannot access free variable {name!r} where it is not associated with a value in enclosing scope")
            self._loaded = frame.session.wrap(contents, self.source)
        return self._loaded

    def store(self, frame, value: Value) -> None:
        if self.source is None:
            raise Unsupported("assigning to a nonlocal variable of a function capture cannot name")
        frame.session.side_effects.store_cell(self.cell, self.source, value)

    def reconstruct(self, writer):
        if self.cell_source is None:
            return super().reconstruct(writer)
        return writer.source(self.cell_source)
