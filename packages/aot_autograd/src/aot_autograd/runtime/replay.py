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
    caller that runs more than the graph eagerly: aot.AotCompiledGraph.eager_replay)."""

    def __init__(self, run: Callable[..., Any], graph: fx.Graph, needed: Callable[[], bool]):
        self.run = run
        self.needed = needed
        self.devices = sorted({str(n.meta["val"].device) for n in graph.nodes
                               if consumes_randomness(n) and isinstance(n.meta.get("val"), torch.Tensor)})

    def snapshot(self) -> list:
        """The states of the generators the graph draws from (none for most graphs)."""
        if not self.devices or not self.needed():
            return []
        return [_generator(device).get_state() for device in self.devices]

    def __call__(self, inputs: Sequence[Any], snapshot: list) -> None:
        """Raises eager's error; returns if eager does not raise (the caller raises its own)."""
        if not self.needed():
            return
        for device, state in zip(self.devices, snapshot):
            _generator(device).set_state(state)
        try:
            self.run(*inputs)
        except Exception as eager_error:  # noqa: BLE001 (eager's own error, whatever it is)
            raise eager_error from None


def _generator(device: str) -> torch.Generator:
    if device == "cpu":
        return torch.default_generator
    return torch.cuda.default_generators[torch.device(device).index or 0]
