"""Writing a graph input's new value into its own memory (an optimizer step's parameters and
state, a batch norm's running stats), instead of into a fresh buffer the caller copies back.

aot_autograd ends a graph that mutates its inputs with `aten.copy_(input, new_value)` (when the
compiler asks it to, see aot_module_simplified's keep_input_mutations). Each such write becomes
one buffer stored into the input: the buffer computing `new_value` itself when that is safe, else
a copy of it at the end of the graph. Safe means every other read of the input's old value
happens before it, and it reads the input only at the element it writes (`p = p - lr * g`):

    buf7 = p - lr * g   ->  buf7 stored through p's pointer; buf7's readers read p's memory

`graph.input_writes` maps such a buffer to the input: kernels load and store the input's name
for it (scheduler), the wrapper names the input's tensor `buf7` and never frees or reuses it,
and the scheduler keeps every reader of the old value before it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.fx

from .ir import ComputedBuffer, ExternKernel, InputBuffer, IRNode, Layout, Pointwise
from .lowering import LOWERINGS
from .sizes import loop_vars

aten = torch.ops.aten


@dataclass(frozen=True)
class InputWrite:
    target: InputBuffer
    value: IRNode


def writes_input_at_end(graph, node: torch.fx.Node, args) -> bool:
    """Whether `node` is `copy_` into a graph input after which nothing reads that input
    (only other such writes and the output follow): the input's new value, not an in-graph
    mutation later ops observe (those stay aten calls, see lowering/extern.py)."""
    if node.target is not aten.copy_.default or not isinstance(args[0], InputBuffer):
        return False
    if args[0] not in graph.graph_inputs or any(user.op != "output" for user in node.users):
        return False
    placeholder = node.args[0]
    later = node.next
    while later.op != "root":
        if later.op != "output" and placeholder in later.all_input_nodes:
            return False
        later = later.next
    return True


def write_buffers(graph, writes: list[InputWrite]) -> list[tuple[InputBuffer, ComputedBuffer]]:
    """The buffer computing each write's new value, as (input, buffer)."""
    return [(w.target, _buffer_for(graph, w)) for w in writes]


def stored_in_place(graph, candidates: list[tuple[InputBuffer, ComputedBuffer]]) -> dict[str, str]:
    """{buffer name: input name} for every write: its buffer where that is safe, else a copy of
    it at the end of the graph. Asked once dead buffers are gone (they may read the input)."""
    position = {b.name: k for k, b in enumerate(graph.buffers)}
    by_name = {b.name: b for b in graph.buffers}
    in_place: dict[str, str] = {}
    for target, buffer in candidates:
        if buffer.name not in in_place and _safe_in_place(graph, target, buffer, position, by_name):
            in_place[buffer.name] = target.name
        else:
            copy = _new_buffer(graph, target, _copied(target, buffer))
            in_place[copy.name] = target.name
    return in_place


def _buffer_for(graph, write: InputWrite) -> ComputedBuffer:
    """The new value as a buffer: the already computed one when it has the input's layout
    (it has other readers), else a new one computing it in the input's layout."""
    value, target = write.value, write.target
    if (isinstance(value, ComputedBuffer) and isinstance(value.data, Pointwise)
            and (value.layout.size, value.layout.stride, value.dtype) == (target.layout.size, target.layout.stride, target.dtype)
            and value.layout.offset == 0 and value.name not in graph.output_names):
        return value
    return _new_buffer(graph, target, _copied(target, value))


def _copied(target: InputBuffer, value: IRNode) -> Pointwise:
    return LOWERINGS[aten.copy.default](target, value)  # broadcast and cast as copy_ does


def _new_buffer(graph, target: InputBuffer, value: Pointwise) -> ComputedBuffer:
    layout = Layout(target.device, target.dtype, target.layout.size, target.layout.stride)
    buffer = ComputedBuffer(graph.new_name(), layout, value)
    graph._add(buffer)
    return buffer


def _safe_in_place(graph, target: InputBuffer, buffer: ComputedBuffer, position: dict, by_name: dict) -> bool:
    """Every other reader of `target` comes before `buffer` (the scheduler keeps that order),
    none sees its memory through an extern's view, and `buffer` reads it only where it writes."""
    for reader in graph.consumers.get(target.name, ()):
        if reader == buffer.name:
            continue
        if position[reader] > position[buffer.name]:
            return False
        found = by_name[reader]
        if isinstance(found, ExternKernel) and found.aliases_inputs:
            return False
    index = loop_vars("i", len(buffer.data.ranges))
    written = buffer.layout.index(index)
    return all(i == written for name, i in buffer.reads() if name == target.name)
