"""Logging: `COMPILER_LOGS=graph_breaks,recompiles` or `compiler.set_logs("graph_breaks,recompiles")`.

Like `TORCH_LOGS`: a comma list of channels, read when `compiler` is imported (an unknown
name is an error naming the valid ones, as torch's import is). Each channel is the `logging`
logger `compiler.<name>`. They are ours, not the program's: they do not propagate to the root
logger, so `logging.basicConfig(level=logging.INFO)` prints none of them, and they write to
stderr through one handler on the `compiler` logger (capture.logs). A channel that is off
shows only warnings; one that is on shows everything. Add handlers to
`logging.getLogger("compiler")` to send the records elsewhere.

    graph_breaks  each graph break: reason, user stack, hint, what ran instead
    recompiles    each recompile, with the guard of each entry that failed
    guards        the generated guard function of each entry
    graph_code    each captured FX graph, as Python
    bytecode      each compiled entry (generated Python) and resume function (dis listing)
    output_code   the code inductor generates (kernels and wrapper)
    dynamic       dimensions made symbolic because their size changed between calls
    perf_hints    inductor's notes on slow paths
    capture       capture's own debug notes (a traced program that raised, ...)
    inductor      inductor's own notes (kernels compiled and how long it took, ...)
    aot_graphs    the ATen graphs aot_autograd makes: joint, forward/backward after partitioning, inference
    compile_time  each compile phase's start and end (capture, backend, lowering, codegen...), timed

The compile report and the progress lines listen to channels without printing them: `tap`
turns channels on for one handler only; stderr still shows just the channels a user turned on.
"""

from __future__ import annotations

import logging
import os

from capture import logs as capture_logs

CHANNELS = (
    "graph_breaks", "recompiles", "guards", "graph_code", "bytecode", "output_code", "dynamic", "perf_hints",
    "capture", "inductor", "aot_graphs", "compile_time",
)  # fmt: skip
ENV_VAR = capture_logs.ENV_VAR


def _parse(channels: str | list[str], origin: str) -> list[str]:
    names = [c.strip() for c in channels.split(",")] if isinstance(channels, str) else [c.strip() for c in channels]
    names = [n for n in names if n]
    unknown = [n for n in names if n not in CHANNELS]
    if unknown:
        raise ValueError(
            f"{origin}: unknown log channel(s) {', '.join(map(repr, unknown))}; the channels are: {', '.join(CHANNELS)}"
        )
    return names


def set_logs(channels: str | list[str] = "") -> list[str]:
    """Turn on the listed channels and off the others (`set_logs()` turns all off); returns
    the names turned on. An unknown name raises ValueError before anything changes."""
    names = _parse(channels, "compiler.set_logs")
    _user_channels().clear()
    _user_channels().update(names)
    _apply_levels()
    return names


# --- taps: channels on for a handler (the report, progress), not printed on stderr ----------------

_TAPS: dict[logging.Handler, frozenset[str]] = {}
_USER: set[str] | None = None  # channels a user turned on; None until first needed


def _logger(name: str) -> logging.Logger:
    return logging.getLogger(f"{capture_logs.PARENT}.{name}")


def _user_channels() -> set[str]:
    """The channels a user turned on: set_logs' list, or what COMPILER_LOGS set at import."""
    global _USER
    if _USER is None:
        capture_logs.set_up()
        _USER = {name for name in CHANNELS if _logger(name).level == logging.DEBUG}
    return _USER


def _apply_levels() -> None:
    tapped = set().union(*_TAPS.values()) if _TAPS else set()
    for name in CHANNELS:
        on = name in _user_channels() or name in tapped
        _logger(name).setLevel(logging.DEBUG if on else logging.NOTSET)


class _ShowUserChannels(logging.Filter):
    """On the stderr handler: a record of a channel only a tap turned on is not printed."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        channel = record.name.removeprefix(capture_logs.PARENT + ".")
        return channel not in CHANNELS or channel in _user_channels()


_STDERR_FILTER = _ShowUserChannels()


def tap(handler: logging.Handler, channels: list[str] | tuple[str, ...] = CHANNELS) -> None:
    """Send `channels`' records to `handler` (added to the `compiler` logger) without
    printing them on stderr unless a user turned them on."""
    _user_channels()
    parent = logging.getLogger(capture_logs.PARENT)
    for h in parent.handlers:
        if getattr(h, "is_compiler_logs_handler", False) and _STDERR_FILTER not in h.filters:
            h.addFilter(_STDERR_FILTER)
    _TAPS[handler] = frozenset(_parse(list(channels), "compiler.logs.tap"))
    if handler not in parent.handlers:
        parent.addHandler(handler)
    _apply_levels()


def untap(handler: logging.Handler) -> None:
    """Stop what `tap(handler, ...)` started."""
    if _TAPS.pop(handler, None) is not None:
        logging.getLogger(capture_logs.PARENT).removeHandler(handler)
        _apply_levels()


def configure_from_environment() -> None:
    """Apply COMPILER_LOGS (called when `compiler` is imported)."""
    value = os.environ.get(ENV_VAR, "")
    if value:
        set_logs(_parse(value, ENV_VAR))
