"""Progress while compiling: one status line on stderr for a compile that takes a while.

`compiler.config.progress` (or `COMPILER_PROGRESS=auto|always|never`):

* "auto" (the default): once a compile has run for `DELAY_SECONDS`, a status line on stderr
  if stderr is a terminal (`[compiler] 3.1s capture forward > backend inductor > kernel
  builds 5/12`), rewritten in place and erased when the compile ends; nothing otherwise.
* "always": the same line for every compile, after the same delay, terminal or not (then
  one line per change rather than one rewritten line).
* "never": no line.

When a compile that showed progress ends, its summary (time per phase) goes to the
`compile_time` log channel only (COMPILER_LOGS=compile_time prints it). The phases come from
that channel's records (capture.logs.phase and inductor.logs.phase), which the progress
handler receives through `compiler.logs.tap` without printing them.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time

from . import logs

ENV_VAR = "COMPILER_PROGRESS"
MODES = ("auto", "always", "never")
DELAY_SECONDS = 2.0
REDRAW_SECONDS = 0.25

summary_log = logging.getLogger("compiler.compile_time")


class Progress(logging.Handler):
    """Follows the phases of the compile in progress and draws the status line."""

    def __init__(self, mode: str):
        super().__init__(level=logging.DEBUG)
        self.mode = mode
        self._lock = threading.Lock()
        self._stack: list[str] = []  # open phases of the compile in progress, outermost first
        self._step = ""  # the latest step inside a phase ("kernel builds 3/8")
        self._started = 0.0
        self._owner = 0  # the thread whose compile the line follows
        self._shown = ""  # the line drawn last ("" when none)
        self._own: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._redraw_loop, name="compiler-progress", daemon=True)
        self._thread.start()

    def emit(self, record: logging.LogRecord) -> None:
        kind = getattr(record, "event", None)
        if record.name != "compiler.compile_time" or kind is None:
            return
        label = f"{record.phase} {record.subject}".strip()
        finished = None
        with self._lock:
            if not self._stack and kind == "start":
                self._started, self._own, self._owner = time.perf_counter(), {}, record.thread
            elif record.thread != self._owner and kind != "step":
                return  # another thread compiling at the same time: one line follows one compile
            if kind == "start":
                self._stack.append(label)
                self._step = ""
            elif kind == "step":
                self._step = label
            elif self._stack:
                self._stack.pop()
                self._own[record.phase] = self._own.get(record.phase, 0.0) + record.seconds
                self._step = ""
                if not self._stack:
                    finished = time.perf_counter() - self._started
        if finished is not None:
            self._compile_ended(finished)
        else:
            self._draw()

    def _line(self) -> str:
        if not self._stack or time.perf_counter() - self._started < DELAY_SECONDS:
            return ""
        # A step ("kernel builds 3/8") stands in for the phase it counts ("kernel builds 8 C++ kernels").
        parts = list(self._stack)
        if self._step and parts and self._step.split(" ")[:-1] == parts[-1].split(" ")[: len(self._step.split(" ")) - 1]:
            parts[-1] = self._step
        elif self._step:
            parts.append(self._step)
        return f"[compiler] {time.perf_counter() - self._started:.1f}s " + " > ".join(parts)

    def _draw(self) -> None:
        with self._lock:
            line = self._line()
            if not line or line == self._shown:
                return
            if _stderr_is_terminal():
                sys.stderr.write("\r\033[K" + line[: _width()])
            elif self.mode == "always":
                # Not a terminal: a line per phase entered, not per redraw of the clock nor
                # per return to the enclosing phase.
                now, before = line.split(" ", 2)[2], self._shown.split(" ", 2)[2:]
                if before and before[0].startswith(now):
                    return
                sys.stderr.write(line + "\n")
            else:
                return
            sys.stderr.flush()
            self._shown = line

    def _compile_ended(self, seconds: float) -> None:
        with self._lock:
            shown, self._shown = self._shown, ""
            if shown and _stderr_is_terminal():
                sys.stderr.write("\r\033[K")
                sys.stderr.flush()
        if shown:
            phases = ", ".join(f"{name} {s:.2f}s" for name, s in self._own.items())
            summary_log.info("compiled in %.2fs (phases, nested ones included in their parents: %s)", seconds, phases)

    def _redraw_loop(self) -> None:
        while not self._stop.wait(REDRAW_SECONDS):
            if self._stack:
                self._draw()

    def close(self) -> None:
        self._stop.set()
        super().close()


def _width() -> int:
    try:
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        columns = 0
    return columns - 1 if columns > 1 else 119  # a pseudo-terminal may report 0 columns


_HANDLER: Progress | None = None


def configure(mode: str | bool) -> str:
    """Set the progress mode ("auto", "always", "never"; True/False mean always/never)."""
    global _HANDLER
    if isinstance(mode, bool):
        mode = "always" if mode else "never"
    if mode not in MODES:
        raise ValueError(f"compiler.config.progress must be one of {', '.join(MODES)}, not {mode!r}")
    if _HANDLER is not None:
        logs.untap(_HANDLER)
        _HANDLER.close()
        _HANDLER = None
    # "auto" listens only when stderr is a terminal now (a program's stderr seldom changes).
    if mode == "always" or (mode == "auto" and _stderr_is_terminal()):
        _HANDLER = Progress(mode)
        logs.tap(_HANDLER, ["compile_time"])
    return mode


_MODE = ["auto"]


def current_mode() -> str:
    return _MODE[0]


def set_mode(value: str | bool) -> None:
    _MODE[0] = configure(value)


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def configure_from_environment() -> None:
    """Apply COMPILER_PROGRESS (called when `compiler` is imported)."""
    set_mode(os.environ.get(ENV_VAR, "auto").strip().lower() or "auto")
