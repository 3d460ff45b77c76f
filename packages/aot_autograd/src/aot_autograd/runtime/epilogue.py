"""What happens after a compiled forward ran: the effects the functional graph returned as
values are applied to the real tensors.

- Mutated inputs: the graph returned their new values first; they are copied into the real
  inputs, so that a BatchNorm's running stats or an argument written in place change as in
  eager.
- Inputs the compiled graph wrote in place itself (`written_in_graph`, see
  functionalization/writes_in_graph.py): only their version counters move, as eager's in-place
  ops move them (autograd checks them on saved tensors).
- Aliased outputs: an output that was a view of an input (or of another output) in eager is
  handed back as a view of the real tensor, with the geometry the trace recorded, so that it
  shares storage (and autograd history) as in eager; one made through `detach` is a view of
  the real tensor's detached alias, with no history, and never the input object itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch

from ..functionalization import OutputAlias


@dataclass(frozen=True)
class GraphEffects:
    mutated_inputs: list[int]
    output_aliases: list[OutputAlias | None]
    written_in_graph: tuple[int, ...] = ()

    @property
    def regenerated(self) -> list[int]:
        """Positions (among all graph outputs) of the outputs rebuilt as views."""
        first = len(self.mutated_inputs)
        return [first + j for j, alias in enumerate(self.output_aliases) if alias is not None]

    def apply(self, inputs: Sequence[Any], graph_outputs: Sequence[Any], raw: dict[int, Any]) -> list:
        """The user's outputs, after the mutations are copied into `inputs`.

        `raw` holds the graph's own value of each regenerated output, used for its geometry
        when the trace's was symbolic.
        """
        first = len(self.mutated_inputs)
        grad_enabled = torch.is_grad_enabled()
        # Copies that record no autograd history go in one foreach call: an optimizer step
        # writes every parameter and state tensor (hundreds of them).
        targets, values = [], []
        for index, value in zip(self.mutated_inputs, graph_outputs[:first]):
            if grad_enabled and value.requires_grad:
                inputs[index].copy_(value)
            else:
                targets.append(inputs[index])
                values.append(value)
        if targets:
            with torch.no_grad():
                torch._foreach_copy_(targets, values)
        if self.written_in_graph:
            torch.autograd.graph.increment_version([inputs[index] for index in self.written_in_graph])
        outputs = list(graph_outputs[first:])
        for j, alias in enumerate(self.output_aliases):
            if alias is not None:
                base = inputs[alias.index] if alias.of == "input" else outputs[alias.index]
                outputs[j] = _view_of(base, alias, raw.get(first + j))
        return outputs


def _view_of(base: torch.Tensor, alias: OutputAlias, raw: torch.Tensor | None) -> torch.Tensor:
    if alias.identity:
        return base
    if alias.detached:
        base = base.detach()
    if alias.dtype != base.dtype:
        base = base.view(alias.dtype)
    if alias.geometry is not None:
        size, stride, offset = alias.geometry
        return base.as_strided(size, stride, base.storage_offset() + offset)
    return base.as_strided(raw.size(), raw.stride(), raw.storage_offset())
