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
"""

from __future__ import annotations

import logging
import os

from capture import logs as capture_logs

CHANNELS = (
    "graph_breaks", "recompiles", "guards", "graph_code", "bytecode", "output_code", "dynamic", "perf_hints",
    "capture", "inductor",
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
    capture_logs.set_up()
    for name in CHANNELS:
        logging.getLogger(f"{capture_logs.PARENT}.{name}").setLevel(logging.DEBUG if name in names else logging.NOTSET)
    return names


def configure_from_environment() -> None:
    """Apply COMPILER_LOGS (called when `compiler` is imported)."""
    value = os.environ.get(ENV_VAR, "")
    if value:
        set_logs(_parse(value, ENV_VAR))
