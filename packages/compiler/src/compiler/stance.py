"""`set_stance`: what compiled functions do on a call, as a function, context manager or
decorator (torch.compiler.set_stance). The stance itself lives in capture.stance."""

from __future__ import annotations

import functools
from typing import Callable

import capture
import capture.session


class set_stance:  # noqa: N801  (a function to its users, as torch.compiler.set_stance is)
    """Set the stance of every compiled function:

    - "default": run a matching compiled entry; capture and compile a new one on a miss.
    - "force_eager": run the original Python, ignoring every compiled entry.
    - "eager_on_recompile": run a matching entry; on a miss run the original, compiling nothing.
    - "fail_on_recompile": run a matching entry; on a miss raise `capture.RecompileError`
      (a first call misses too).

    `set_stance("force_eager")` applies from now on; `with set_stance(...):` for a block;
    `@set_stance(...)` for each call of the decorated function. Like torch's, it may not be
    called while a function is being captured. torch's `skip_guard_eval_unsafe` and
    `force_backend` are not supported (NotImplementedError)."""

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
                 force_backend: str | Callable | None = None):
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        if skip_guard_eval_unsafe or force_backend is not None:
            raise NotImplementedError("set_stance: skip_guard_eval_unsafe and force_backend are not supported")
        # This thread's captures only (torch checks its thread's frame callback): the process-wide
        # is_compiling() flag is on while any thread captures.
        if capture.session.capturing_on_this_thread():
            raise RuntimeError("attempted to set_stance in a compiled region")
        self.stance = stance
        self.previous = capture.stance.set_stance(stance)

    def __enter__(self) -> None:
        capture.stance.set_stance(self.stance)

    def __exit__(self, *exc_info) -> None:
        capture.stance.set_stance(self.previous)

    def __call__(self, fn: Callable) -> Callable:
        # Decorating applies the stance around each call, not from now on.
        capture.stance.set_stance(self.previous)
        stance = self.stance

        @functools.wraps(fn)
        def with_stance(*args, **kwargs):
            with set_stance(stance):
                return fn(*args, **kwargs)

        return with_stance


capture.substitutes.forbid_tracing(
    set_stance, "compiler.set_stance may not be called inside a compiled function: call it around the call instead"
)
