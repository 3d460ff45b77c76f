"""Running a graph again as eager runs it, after its compiled forward raised having written none
of its inputs (an index out of range, a division by zero: errors only real values show).

The functional graph writes its inputs at its end (or the epilogue does, after it), so when an
op raises part-way the inputs are still unwritten, where eager had made every write before that
op. Running the capture graph eagerly on the same inputs makes those writes and raises eager's
own error. The random draws the compiled forward made before it raised are undone first (the
generators' states are kept at each call of a graph that draws), so that the replay draws what
eager drew and leaves the generators where eager leaves them.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch
import torch.fx as fx

from ..functionalization.dead_code import consumes_randomness


class EagerReplay:
    """`needed()`: whether this call replays (a plan writing no input replays only for a
    caller that runs more than the graph eagerly: aot.AotCompiledGraph.eager_replay).
    `restored`: positions of inputs the compiled forward may have written before it raised
    (a compiler writing inputs in place ahead of a step that checks values): copied at each
    call that may replay, and put back before the replay."""

    def __init__(self, run: Callable[..., Any], graph: fx.Graph, needed: Callable[[], bool], restored: Sequence[int] = ()):
        self.run = run
        self.needed = needed
        self.restored = tuple(restored)
        self.devices = sorted({str(n.meta["val"].device) for n in graph.nodes
                               if consumes_randomness(n) and isinstance(n.meta.get("val"), torch.Tensor)})

    def snapshot(self, inputs: Sequence[Any]) -> tuple | None:
        """The states of the generators the graph draws from and copies of the inputs at
        `restored` (none for most graphs)."""
        if not (self.devices or self.restored) or not self.needed():
            return None
        with torch.no_grad():
            copies = [inputs[k].clone() for k in self.restored]
        return [_generator(device).get_state() for device in self.devices], copies

    def __call__(self, inputs: Sequence[Any], snapshot: tuple | None) -> None:
        """Raises eager's error; returns if eager does not raise (the caller raises its own)."""
        if not self.needed() or (self.restored and snapshot is None):
            return
        states, copies = snapshot or ((), ())
        with torch.no_grad():
            for k, copy in zip(self.restored, copies):
                inputs[k].copy_(copy)
        for device, state in zip(self.devices, states):
            _generator(device).set_state(state)
        try:
            self.run(*inputs)
        except Exception as eager_error:  # noqa: BLE001 (eager's own error, whatever it is)
            raise eager_error from None


def _generator(device: str) -> torch.Generator:
    if device == "cpu":
        return torch.default_generator
    return torch.cuda.default_generators[torch.device(device).index or 0]
