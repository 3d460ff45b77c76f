"""Why a call missed the cache: the failing guard of each compiled entry, for recompile logs."""

from __future__ import annotations

from collections.abc import Callable, Sequence


def failure_reasons(guard_fns: Sequence[Callable[..., bool]], *args, **kwargs) -> list[str | None]:
    """For each guard function (one per cache entry, in cache order), the sentence naming its
    first failing guard for this call, or None where every guard passes."""
    reasons: list[str | None] = []
    for guard_fn in guard_fns:
        try:
            reasons.append(guard_fn.why(*args, **kwargs))
        except TypeError as error:  # the arguments do not bind to the guarded signature
            reasons.append(f"the arguments do not match the function's parameters: {error}")
    return reasons


def recompile_reason(guard_fns: Sequence[Callable[..., bool]], *args, **kwargs) -> str:
    """A multi-line explanation of why no cache entry accepted this call:

        entry 0: L['x'].size()[0] == 8 failed: got 9
        entry 1: L['x'].dtype == torch.float32 failed: got torch.float64
    """
    reasons = failure_reasons(guard_fns, *args, **kwargs)
    if not reasons:
        return "no compiled entry yet"
    return "\n".join(f"entry {i}: {reason or 'all guards pass'}" for i, reason in enumerate(reasons))
