"""The inputs of a compiled graph: the module's parameters and buffers, then its placeholders.

Graphs from capture hold no parameters (capture lifts them to placeholders); graphs from
`torch.fx.symbolic_trace` read them from the module. Either way the ATen graphs take them as
ordinary inputs, so gradients flow to them and buffer updates (BatchNorm's running stats)
are input mutations. Tracing swaps fakes into the module's attributes for the duration.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import torch
import torch.fx as fx

from fake_tensor import FakeTensorMode, is_fake


@dataclass(frozen=True)
class _Slot:
    module: torch.nn.Module
    table: str  # "_parameters" or "_buffers"
    name: str
    index: int  # into ModuleState.tensors


class ModuleState:
    """Each distinct parameter and buffer of a module once (tied ones share an input)."""

    def __init__(self, module: torch.nn.Module):
        self.tensors: list[torch.Tensor] = []
        self._slots: list[_Slot] = []
        seen: dict[int, int] = {}
        for owner in module.modules():
            for table in ("_parameters", "_buffers"):
                for name, tensor in getattr(owner, table).items():
                    if tensor is None:
                        continue
                    if id(tensor) not in seen:
                        seen[id(tensor)] = len(self.tensors)
                        self.tensors.append(tensor)
                    self._slots.append(_Slot(owner, table, name, seen[id(tensor)]))

    @contextlib.contextmanager
    def swapped(self, values: Sequence[Any]) -> Iterator[None]:
        """The module's attributes hold `values` (one per tensor) inside the block."""
        for slot in self._slots:
            getattr(slot.module, slot.table)[slot.name] = values[slot.index]
        try:
            yield
        finally:
            for slot in self._slots:
                getattr(slot.module, slot.table)[slot.name] = self.tensors[slot.index]


def fake_mode_of(gm: fx.GraphModule) -> FakeTensorMode:
    """The mode capture traced with (so sizes share its ShapeEnv), or a fresh static one. A
    graph of symbolic numbers and no tensor inputs (`torch.eye(n, m)`) gets a mode over
    their ShapeEnv: a static mode would meet sizes it has no symbols for."""
    values = [node.meta.get("example_value") for node in gm.graph.find_nodes(op="placeholder")]
    for value in values:
        if is_fake(value):
            return value.fake_mode
    for value in values:
        if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return FakeTensorMode(shape_env=value.node.shape_env)
    return FakeTensorMode()


def fake_inputs(gm: fx.GraphModule, state: ModuleState, example_inputs: Sequence[Any], mode: FakeTensorMode) -> list:
    """Fakes for (*parameters and buffers, *placeholders), from capture's example values
    where present, else converted from the real inputs (static shapes)."""
    fakes = [mode.from_real(tensor) for tensor in state.tensors]
    placeholders = gm.graph.find_nodes(op="placeholder")
    for node, real in zip(placeholders, example_inputs):
        example = node.meta.get("example_value")
        if example is not None:
            fakes.append(example)
        elif isinstance(real, torch.Tensor):
            fakes.append(mode.from_real(real))
        else:
            fakes.append(real)
    return fakes
