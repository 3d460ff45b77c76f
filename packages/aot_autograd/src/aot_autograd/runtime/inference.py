"""The inference path: one compiled forward graph, no autograd.Function around it.

The graph runs without grad mode even when the caller has it on (a graph none of whose
outputs carries a gradient): its functional ops must not make outputs require grad that
eager leaves detached (`detach` is gone from the graph). Nor with autocast (autocast.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

from .autocast import without_autocast
from .epilogue import GraphEffects


@dataclass
class InferencePlan:
    forward: Callable[..., Sequence[Any]]
    effects: GraphEffects
    # Called with the inputs when the forward raises (AotCompiledGraph._replay_eagerly), or None.
    on_error: Callable | None = field(default=None, init=False)

    def __call__(self, inputs: Sequence[Any]) -> list:
        try:
            with torch.no_grad(), without_autocast():
                outputs = self.forward(*inputs)
        except Exception:
            if self.on_error is not None:
                self.on_error(inputs)
            raise
        raw = {i: outputs[i] for i in self.effects.regenerated}
        return self.effects.apply(inputs, outputs, raw)
