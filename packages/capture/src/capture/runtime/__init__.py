"""What runs on every call: the compiled entry (generated Python that fetches the graph's
inputs, calls the compiled graph, replays side effects and rebuilds the return value), the
per-function cache of (guard function, entry) pairs with its recompile policy.

Exports `CodeCache`, `CompiledEntry`, `build_entry`, `reset`.
"""

from .cache import CodeCache, reset
from .entry import CompiledEntry, build_entry

__all__ = ["CodeCache", "CompiledEntry", "build_entry", "reset"]
