"""The inference path: one compiled forward graph, no autograd.Function around it.

The graph runs without grad mode even when the caller has it on (a graph none of whose
outputs carries a gradient): its functional ops must not make outputs require grad that
eager leaves detached (`detach` is gone from the graph). Nor with autocast (autocast.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

from .autocast import autocast_on, without_autocast
from .epilogue import GraphEffects
from .replay import EagerReplay


@dataclass
class InferencePlan:
    forward: Callable[..., Sequence[Any]]
    effects: GraphEffects
    # Runs the graph eagerly when the forward raises having written no input (replay.py), or None.
    on_error: EagerReplay | None = field(default=None, init=False)

    def __call__(self, inputs: Sequence[Any]) -> list:
        replay = self.on_error
        snapshot = replay.snapshot(inputs) if replay is not None else None
        try:
            if torch.is_grad_enabled() or autocast_on():
                with torch.no_grad(), without_autocast():
                    outputs = self.forward(*inputs)
            else:  # a caller's no_grad inference: nothing to switch off (two contexts' ~1.5 us a call)
                outputs = self.forward(*inputs)
        except Exception:
            if replay is not None:
                replay(inputs, snapshot)
            raise
        raw = {i: outputs[i] for i in self.effects.regenerated}
        return self.effects.apply(inputs, outputs, raw)
