"""Logging: `COMPILER_LOGS=graph_breaks,recompiles,guards,graph_code,bytecode,output_code`.

Like `TORCH_LOGS`: a comma list of channels, read when `compiler` is imported (or passed to
`set_logs`). Each channel is the `logging` logger `compiler.<name>`; a listed one is set to
DEBUG and gets a handler writing to stderr (unless it has one), so the usual `logging`
configuration (levels, handlers, files) applies too.

    graph_breaks  each graph break: reason, user stack, hint, what ran instead
    recompiles    each recompile, with the guard of each entry that failed
    guards        the generated guard function of each entry
    graph_code    each captured FX graph, as Python
    bytecode      each compiled entry (generated Python) and resume function (dis listing)
    output_code   the code inductor generates (kernels and wrapper)
    dynamic       dimensions made symbolic because their size changed between calls
    perf_hints    inductor's notes on slow paths
"""

from __future__ import annotations

import logging
import os
import sys
import warnings

CHANNELS = ("graph_breaks", "recompiles", "guards", "graph_code", "bytecode", "output_code", "dynamic", "perf_hints")
ENV_VAR = "COMPILER_LOGS"

# The handler set_logs attached to each channel it turned on.
_handlers: dict[str, logging.Handler] = {}


def set_logs(channels: str | list[str] = "") -> list[str]:
    """Turn on the listed channels (and off the others); returns the names turned on."""
    names = [c.strip() for c in channels.split(",")] if isinstance(channels, str) else list(channels)
    names = [n for n in names if n]
    unknown = [n for n in names if n not in CHANNELS]
    if unknown:
        raise ValueError(f"unknown log channel(s) {', '.join(unknown)}; known: {', '.join(CHANNELS)}")
    for name in CHANNELS:
        logger = logging.getLogger(f"compiler.{name}")
        if name in names:
            logger.setLevel(logging.DEBUG)
            # A package may have attached its own handler already (inductor does for
            # output_code when used alone): one handler per channel, or records print twice.
            if not logger.handlers:
                handler = _handlers[name] = logging.StreamHandler(sys.stderr)
                handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
                logger.addHandler(handler)
        else:
            logger.setLevel(logging.NOTSET)
            handler = _handlers.pop(name, None)
            if handler is not None:
                logger.removeHandler(handler)
    return names


def configure_from_environment() -> None:
    value = os.environ.get(ENV_VAR, "")
    if not value:
        return
    try:
        set_logs(value)
    except ValueError as err:
        warnings.warn(f"{ENV_VAR}: {err}", stacklevel=2)
