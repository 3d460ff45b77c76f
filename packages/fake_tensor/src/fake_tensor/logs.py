"""The log channels every layer writes to: `compiler.<channel>` loggers, silent until turned on.

Like torch's TORCH_LOGS, our loggers are not the user's: a program calling
`logging.basicConfig(level=logging.INFO)` must not get every graph, guard and recompile
printed. So the parent logger `compiler` does not propagate to the root logger, has its own
handler (stderr, `[compiler.<channel>] message`) and level WARNING: a channel's INFO and DEBUG
records appear only once it is turned on (its level set to DEBUG) by `COMPILER_LOGS=a,b` or
`compiler.set_logs("a,b")`; warnings appear always, as torch's do.

It lives here, in the lowest layer, because capture and inductor both write to these channels
and neither depends on the other (each re-exports it as its own `logs`); whichever package
is imported first sets the loggers up, once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time

ENV_VAR = "COMPILER_LOGS"
PARENT = "compiler"


class StderrHandler(logging.StreamHandler):
    """Writes to the `sys.stderr` of the moment (pytest and notebooks replace it)."""

    is_compiler_logs_handler = True

    def __init__(self):
        super().__init__()
        self.setFormatter(logging.Formatter("[%(name)s] %(message)s"))

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):  # StreamHandler.__init__ assigns it; the property always reads sys.stderr
        pass


def set_up() -> None:
    """Give the `compiler` loggers their own handler, level WARNING and no propagation, and
    turn on the channels COMPILER_LOGS lists (once per process)."""
    parent = logging.getLogger(PARENT)
    if any(getattr(h, "is_compiler_logs_handler", False) for h in parent.handlers):
        return
    parent.propagate = False
    if parent.level == logging.NOTSET:
        parent.setLevel(logging.WARNING)
    parent.addHandler(StderrHandler())
    for name in os.environ.get(ENV_VAR, "").split(","):
        if name.strip():
            logging.getLogger(f"{PARENT}.{name.strip()}").setLevel(logging.DEBUG)


def channel(name: str) -> logging.Logger:
    """The logger of channel `name` (`compiler.<name>`)."""
    set_up()
    return logging.getLogger(f"{PARENT}.{name}")


# The `compile_time` channel: where each compile phase starts and ends, with its duration in
# the record's `phase`, `subject`, `event` ("start", "end", "step") and `seconds` attributes.
# compiler's report and progress lines read these records; COMPILER_LOGS=compile_time prints them.
compile_time = logging.getLogger(f"{PARENT}.compile_time")


@contextlib.contextmanager
def phase(name: str, subject: str = ""):
    """Time one compile phase on the `compile_time` channel (nothing when it is off)."""
    if not compile_time.isEnabledFor(logging.DEBUG):
        yield
        return
    compile_time.debug("%s %s ...", name, subject, extra={"phase": name, "subject": subject, "event": "start"})
    start = time.perf_counter()
    try:
        yield
    finally:
        seconds = time.perf_counter() - start
        compile_time.debug(
            "%s %s: %.3fs", name, subject, seconds,
            extra={"phase": name, "subject": subject, "event": "end", "seconds": seconds},
        )


def phase_step(name: str, done: int, total: int) -> None:
    """Progress inside a phase (`kernel builds 3/8`), on the `compile_time` channel."""
    if compile_time.isEnabledFor(logging.DEBUG):
        compile_time.debug("%s %d/%d", name, done, total, extra={"phase": name, "subject": f"{done}/{total}", "event": "step"})
