"""The inference path: one compiled forward graph, no autograd.Function around it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .epilogue import GraphEffects


@dataclass
class InferencePlan:
    forward: Callable[..., Sequence[Any]]
    effects: GraphEffects

    def __call__(self, inputs: Sequence[Any]) -> list:
        outputs = self.forward(*inputs)
        raw = {i: outputs[i] for i in self.effects.regenerated}
        return self.effects.apply(inputs, outputs, raw)
