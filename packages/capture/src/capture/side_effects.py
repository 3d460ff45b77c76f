"""Side effects of the traced program on objects that outlive it.

Nothing is mutated while tracing: attribute writes on existing objects, stores to globals and
to closure cells, and mutations of input lists/dicts/sets are recorded here (later reads in the
same trace see the recorded value) and replayed by the compiled entry after the graph runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import Unsupported
from .values.base import Value
from .values.deleted import DELETED  # what a recorded `del obj.name` stores


@dataclass
class AttributeWrite:
    target: Value  # the object written to (has a source, or is held by identity)
    values: dict[str, Value] = field(default_factory=dict)
    # Names written by object.__setattr__, replayed the same way: past the class's own
    # __setattr__ (a frozen dataclass's __post_init__, a __setattr__ that ends in object's).
    raw: set[str] = field(default_factory=set)
    # Names deleted and then set again: replayed as a deletion first, so that the name moves to
    # the end of the object's __dict__ as in eager (`vars(obj)` order), with `values` in the
    # order of those last writes.
    readded: set[str] = field(default_factory=set)


class SideEffects:
    def __init__(self):
        self.attribute_writes: dict[int, AttributeWrite] = {}
        # (globals dict, name) -> (globals dict, name, value, module): `module` is the module
        # value written through (`module.name = v`), replayed through its source.
        self.global_writes: dict[tuple[int, str], tuple[dict, str, Value, Value | None]] = {}
        self.cell_writes: dict[int, tuple[Any, Any, Value]] = {}
        self.mutated_containers: dict[int, Value] = {}
        # Calls made only for their output (logging), in program order: (callable, args, kwargs).
        self.deferred_calls: list[tuple[Value, list[Value], dict[str, Value]]] = []
        self._private: set[int] = set()
        self._keepalive: list[Any] = []

    def __bool__(self) -> bool:
        return bool(
            self.attribute_writes or self.global_writes or self.cell_writes or self.mutated_containers or self.deferred_calls
        )

    # --- attributes of existing objects -----------------------------------------------------
    def store_attr(self, target: Value, name: str, value: Value, obj: Any = None, *, raw: bool = False) -> None:
        """`obj` is the object written to, for targets that have no `identity()` (a tensor
        input, whose `.grad` is written). `raw`: written by object.__setattr__."""
        if name == "__class__":
            # Reads later in the call would still see the old class (its methods, isinstance).
            raise Unsupported(f"assigning __class__ of {target.describe()}")
        if obj is None:
            obj = target.identity()
        write = self.attribute_writes.get(id(obj))
        if write is None:
            write = self.attribute_writes[id(obj)] = AttributeWrite(target)
            self._keepalive.append(obj)
        if write.values.get(name) is DELETED and value is not DELETED:
            del write.values[name]
            write.readded.add(name)
        write.values[name] = value
        if raw:
            write.raw.add(name)
        else:
            write.raw.discard(name)

    def pending_attr(self, obj: Any, name: str) -> Value | None:
        write = self.attribute_writes.get(id(obj))
        return write.values.get(name) if write is not None else None

    # --- globals ---------------------------------------------------------------------------------
    def store_global(self, f_globals: dict, name: str, value: Value, module: Value | None = None) -> None:
        """A store to a global: STORE_GLOBAL (`f_globals` is the running function's), or an
        attribute set on a module (`module.name = v`; f_globals is its __dict__), which is the
        same thing: its functions read the name with LOAD_GLOBAL."""
        self.global_writes[(id(f_globals), name)] = (f_globals, name, value, module)

    def globals_written(self, f_globals: dict) -> bool:
        """Some global of `f_globals` was stored by this trace (not yet in the real dict)."""
        return any(key == id(f_globals) for key, _ in self.global_writes)

    def pending_global(self, f_globals: dict, name: str) -> Value | None:
        entry = self.global_writes.get((id(f_globals), name))
        return entry[2] if entry is not None else None

    # --- closure cells ---------------------------------------------------------------------------
    def store_cell(self, cell, source, value: Value) -> None:
        self.cell_writes[id(cell)] = (cell, source, value)

    def pending_cell(self, cell) -> Value | None:
        entry = self.cell_writes.get(id(cell))
        return entry[2] if entry is not None else None

    # --- containers read from the inputs -------------------------------------------------------
    def mutated_container(self, container: Value) -> None:
        if container.source is not None and id(container) not in self._private:
            self.mutated_containers[id(container)] = container

    def private(self, container: Value) -> None:
        """A container no one else sees (the `**kwargs` dict a call creates): its mutations
        need no replay."""
        self._private.add(id(container))

    # --- calls made for their output ------------------------------------------------------------
    def defer_call(self, fn: Value, args: list[Value], kwargs: dict[str, Value]) -> None:
        self.deferred_calls.append((fn, args, kwargs))
