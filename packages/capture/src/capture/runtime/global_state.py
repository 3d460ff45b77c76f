"""The global modes a captured graph switches (grad mode, autocast), put back when it raises.

A `with torch.no_grad():` or `with torch.autocast(...):` block inside the traced code is a
pair of calls in the graph, which ends in the modes it began with. A backend that runs the
graph as it is (the eager backend, a user's backend returning `gm.forward`) leaves the modes
of the block it raised in switched, where eager's `with` put them back: after
`with torch.no_grad(): y = x[i]` raised, grad mode stayed off for the rest of the program.
The entry of such a graph keeps the modes before each call and sets them back when the call
raises. Backends that trace the graph (aot_autograd's) run no switch at call time, and skip it.
"""

from __future__ import annotations

import torch
import torch.fx as fx

_GRAD_MODE_SWITCHES = {torch._C._set_grad_enabled}
_AUTOCAST_SWITCHES = {torch.amp.autocast_mode._enter_autocast, torch.set_autocast_enabled, torch.set_autocast_dtype}


class GlobalModes:
    """`save()` before the graph's call, `restore(saved)` when it raised."""

    def __init__(self, graph: fx.Graph):
        switches = [node for node in graph.nodes if node.meta.get("effect")]
        self.grad_mode = any(node.target in _GRAD_MODE_SWITCHES for node in switches)
        self.autocast_devices = sorted({str(node.args[0]) for node in switches if node.target in _AUTOCAST_SWITCHES})
        # Off where the compiled graph runs no switch itself (entry.set_compiled_graph).
        self.saves = self.grad_mode or bool(self.autocast_devices)

    def save(self) -> tuple | None:
        if not self.saves:
            return None
        autocast = None
        if self.autocast_devices:
            autocast = ([(torch.is_autocast_enabled(d), torch.get_autocast_dtype(d)) for d in self.autocast_devices],
                        _autocast_nesting(), torch.is_autocast_cache_enabled())
        return torch.is_grad_enabled(), autocast

    def restore(self, saved: tuple | None) -> None:
        if saved is None:
            return
        grad_mode, autocast = saved
        torch._C._set_grad_enabled(grad_mode)
        if autocast is None:
            return
        states, nesting, cache_enabled = autocast
        for device, (enabled, dtype) in zip(self.autocast_devices, states):
            torch.set_autocast_enabled(device, enabled)
            torch.set_autocast_dtype(device, dtype)
        # Each block's exit decrements the nesting, and the last one clears the cast cache.
        while _autocast_nesting() > nesting:
            if torch.autocast_decrement_nesting() == 0:
                torch.clear_autocast_cache()
        torch.set_autocast_cache_enabled(cache_enabled)


def _autocast_nesting() -> int:
    """How many autocast blocks are open (torch has no getter: one step up and back down)."""
    torch.autocast_increment_nesting()
    return torch.autocast_decrement_nesting()
