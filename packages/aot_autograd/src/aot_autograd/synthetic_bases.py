"""Inputs that share memory, one of them written in place (`f(x[:4], x[2:6])` adding into the
first): a functional graph reads its inputs as independent values, so the write would not show
in the other. As torch.compile does, such inputs are merged into one *synthetic base*.

The graph then takes, in place of a group of inputs sharing a storage, one 1-d input covering
the memory they span, and reads each member as an `as_strided` view of it: a write through one
member shows in the others, and the base's new value is written back into the caller's memory,
where every member sees it. Only groups whose members have static sizes, strides and storage
offsets, one dtype and device, and no gradient are merged; the caller guards the offsets and
the sharing pattern (capture's StoragesShared), so the views are right for every call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
import torch.fx as fx

from .graph_inputs import ModuleState, fake_mode_of


@dataclass(frozen=True)
class _Group:
    positions: tuple[int, ...]  # of the members among the graph's inputs, ascending
    start: int  # the storage offset where the base begins
    length: int  # elements the base covers


@dataclass(frozen=True)
class MergedInputs:
    graph_module: fx.GraphModule  # takes each group's base in place of its members
    example_inputs: list
    groups: tuple[_Group, ...]

    def calling(self, compiled: Callable) -> Callable:
        """A callable taking the original inputs that calls `compiled` with the bases."""
        groups = self.groups
        return lambda *args: compiled(*_with_bases(groups, args))


def _with_bases(groups: Sequence[_Group], args: Sequence[Any]) -> list:
    """`args` with each group's first member replaced by its base (a 1-d view of their
    storage) and its other members left out."""
    first = {group.positions[0]: group for group in groups}
    merged = {p for group in groups for p in group.positions[1:]}
    inputs = []
    for position, arg in enumerate(args):
        group = first.get(position)
        if group is not None:
            inputs.append(arg.as_strided((group.length,), (1,), group.start))
        elif position not in merged:
            inputs.append(arg)
    return inputs


def merge_aliased_inputs(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> MergedInputs | None:
    """`gm` with each group of inputs sharing a storage read through one base input, or None
    where a group cannot be merged (or the graph reads module state, which never merges)."""
    if ModuleState(gm).tensors:
        return None
    placeholders = list(gm.graph.find_nodes(op="placeholder"))
    values = [node.meta.get("example_value", real) for node, real in zip(placeholders, example_inputs)]
    groups = []
    for positions in _sharing_storage(values):
        group = _group(positions, [values[p] for p in positions])
        if group is None:
            return None
        groups.append(group)
    if not groups:
        return None
    graph_module = _read_through_bases(gm, placeholders, values, groups, fake_mode_of(gm))
    return MergedInputs(graph_module, _with_bases(groups, example_inputs), tuple(groups))


def _sharing_storage(values: Sequence[Any]) -> list[tuple[int, ...]]:
    by_storage: dict[int, list[int]] = {}
    storages = []  # kept alive, so that ids stay distinct
    for position, value in enumerate(values):
        if isinstance(value, torch.Tensor):
            storage = value.untyped_storage()
            storages.append(storage)
            by_storage.setdefault(id(storage), []).append(position)
    return [tuple(positions) for positions in by_storage.values() if len(positions) > 1]


def _group(positions: tuple[int, ...], members: list[torch.Tensor]) -> _Group | None:
    first = members[0]
    spans = []
    for member in members:
        geometry = (*member.shape, *member.stride(), member.storage_offset())
        if not all(type(n) is int for n in geometry) or member.requires_grad:
            return None
        if member.dtype != first.dtype or member.device != first.device:
            return None
        extent = 1 + sum((size - 1) * stride for size, stride in zip(member.shape, member.stride()))
        spans.append((member.storage_offset(), member.storage_offset() + (extent if member.numel() else 0)))
    start = min(begin for begin, _ in spans)
    return _Group(positions, start, max(end for _, end in spans) - start)


def _read_through_bases(gm, placeholders, values, groups, fake_mode) -> fx.GraphModule:
    """A copy of `gm` taking each group's base before its first member, and reading every
    member as a view of it (the views after the last placeholder). Capture's graphs carry
    fakes as example values, which the base's and views' nodes get too; others are traced
    from the real inputs."""
    graph = fx.Graph()
    copies: dict[fx.Node, fx.Node] = {}
    graph.output(graph.graph_copy(gm.graph, copies))
    last_placeholder = copies[placeholders[-1]]
    for group in groups:
        members = [copies[placeholders[p]] for p in group.positions]
        example = values[group.positions[0]]
        with graph.inserting_before(members[0]):
            base = graph.placeholder(f"{members[0].name}_base")
        fake_base = None
        if "example_value" in members[0].meta:
            with fake_mode:
                fake_base = torch.empty((group.length,), dtype=example.dtype, device=example.device)
            base.meta["example_value"] = fake_base
        for position, member in zip(group.positions, members):
            value = values[position]
            offset = value.storage_offset() - group.start
            with graph.inserting_after(last_placeholder):
                view = graph.call_function(torch.as_strided, (base, tuple(value.shape), value.stride(), offset))
            if fake_base is not None:
                with fake_mode:
                    view.meta["example_value"] = torch.as_strided(fake_base, value.shape, value.stride(), offset)
            member.replace_all_uses_with(view)
            if member is last_placeholder:
                last_placeholder = base
            graph.erase_node(member)
    return fx.GraphModule(gm, graph)
