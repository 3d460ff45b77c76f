"""The inference path: one compiled forward graph, no autograd.Function around it.

The graph runs without grad mode even when the caller has it on (a graph none of whose
outputs carries a gradient): its functional ops must not make outputs require grad that
eager leaves detached (`detach` is gone from the graph). Nor with autocast (autocast.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch

from .autocast import without_autocast
from .epilogue import GraphEffects


@dataclass
class InferencePlan:
    forward: Callable[..., Sequence[Any]]
    effects: GraphEffects

    def __call__(self, inputs: Sequence[Any]) -> list:
        with torch.no_grad(), without_autocast():
            outputs = self.forward(*inputs)
        raw = {i: outputs[i] for i in self.effects.regenerated}
        return self.effects.apply(inputs, outputs, raw)
