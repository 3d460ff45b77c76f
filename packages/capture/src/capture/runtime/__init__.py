"""What runs on every call: the compiled entry (generated Python that fetches the graph's
inputs, calls the compiled graph, replays side effects and rebuilds the return value), the
per-function cache of (guard function, entry) pairs with its recompile policy and automatic
dynamic shapes, the generated dispatchers that pick an entry per call, and graph breaks: entries that run the refused instruction natively
(`native_steps`) and hand over to a resume function by tail call (`breaks`, `tail_call`).
`Compilation` holds what one `optimize` call shares, and records graphs and breaks.

Exports `CodeCache`, `Compilation`, `CompiledEntry`, `build_entry`, `reset`.
"""

from .cache import CodeCache, reset
from .compilation import Compilation
from .entry import CompiledEntry, build_entry

__all__ = ["CodeCache", "Compilation", "CompiledEntry", "build_entry", "reset"]
