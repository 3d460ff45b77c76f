"""The stance: what compiled functions do on a call, process-wide (torch.compiler.set_stance).

    default             run a matching entry; capture a new one on a miss
    force_eager         run the original function, ignoring every entry
    eager_on_recompile  run a matching entry; on a miss run the original, capturing nothing
    fail_on_recompile   run a matching entry; on a miss raise RecompileError (a first call
                        misses too: it would compile)

Every dispatcher reads `forced_eager[0]` once per call; the rest only matters on a miss
(runtime.cache.CodeCache._miss). `compiler.set_stance` is the user-facing function, context
manager and decorator.
"""

from __future__ import annotations

from .errors import CaptureError

STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")

_current = "default"
# A list, so that generated dispatchers hold it and read one item per call.
forced_eager = [False]


class RecompileError(CaptureError, RuntimeError):
    """A call would capture a new entry while the stance is "fail_on_recompile" (a RuntimeError,
    as torch.compile raises there)."""


def current_stance() -> str:
    return _current


def set_stance(stance: str) -> str:
    """Make `stance` current; returns the one it replaces."""
    global _current
    if stance not in STANCES:
        raise ValueError(f"unknown stance {stance!r}; the stances are: {', '.join(STANCES)}")
    previous, _current = _current, stance
    forced_eager[0] = stance == "force_eager"
    return previous
