"""`compiler.config`: the settings a user may change, in one place, whichever package owns them::

    recompile_limit           entries per function before it runs eagerly (capture; default 8)
    automatic_dynamic_shapes  a size that changes between calls becomes symbolic (capture; True)
    capture_scalar_outputs    `.item()` is an unbacked number (u0) in the graph (capture; default
                              False: the graph breaks at `.item()`)
    capture_dynamic_output_shape_ops
                              nonzero, boolean masks, masked_select, unique stay in the graph with
                              an unbacked size (capture; default False: the graph breaks there)
    cache_dir                 inductor's on-disk cache (PTC_INDUCTOR_CACHE_DIR; default
                              ~/.cache/ptc_inductor)
    progress                  a status line on stderr for compiles longer than 2 s: "auto"
                              (when stderr is a terminal; the default), "always" or "never"
                              (COMPILER_PROGRESS; compiler.progress)

Read and assign them as attributes (`compiler.config.recompile_limit = 16`), or for a block
with `with compiler.config.patch(recompile_limit=16):`. Each name is torch's for the same setting
(torch._dynamo.config.recompile_limit, ...).
"""

from __future__ import annotations

import contextlib
import os
import pathlib

import capture

from . import progress

CACHE_DIR_VARIABLE = "PTC_INDUCTOR_CACHE_DIR"


class Config:
    @property
    def recompile_limit(self) -> int:
        return capture.config.recompile_limit

    @recompile_limit.setter
    def recompile_limit(self, value: int) -> None:
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"recompile_limit must be a positive int, not {value!r}")
        capture.config.recompile_limit = value

    @property
    def automatic_dynamic_shapes(self) -> bool:
        return capture.config.automatic_dynamic_shapes

    @automatic_dynamic_shapes.setter
    def automatic_dynamic_shapes(self, value: bool) -> None:
        capture.config.automatic_dynamic_shapes = bool(value)

    @property
    def capture_scalar_outputs(self) -> bool:
        return capture.config.capture_scalar_outputs

    @capture_scalar_outputs.setter
    def capture_scalar_outputs(self, value: bool) -> None:
        capture.config.capture_scalar_outputs = bool(value)

    @property
    def capture_dynamic_output_shape_ops(self) -> bool:
        return capture.config.capture_dynamic_output_shape_ops

    @capture_dynamic_output_shape_ops.setter
    def capture_dynamic_output_shape_ops(self, value: bool) -> None:
        capture.config.capture_dynamic_output_shape_ops = bool(value)

    @property
    def cache_dir(self) -> str:
        # Imported here: `import compiler` does not import inductor until it compiles a graph.
        from inductor import cache

        return str(cache.cache_dir())

    @cache_dir.setter
    def cache_dir(self, value: str | os.PathLike) -> None:
        os.environ[CACHE_DIR_VARIABLE] = str(pathlib.Path(value).expanduser().resolve())

    @property
    def progress(self) -> str:
        return progress.current_mode()

    @progress.setter
    def progress(self, value: str | bool) -> None:
        progress.set_mode(value)

    def names(self) -> list[str]:
        return [name for name, value in vars(Config).items() if isinstance(value, property)]

    @contextlib.contextmanager
    def patch(self, **changes):
        """Apply `changes` for the duration of a `with` block."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise AttributeError(
                f"compiler.config has no setting(s) {', '.join(unknown)}; the settings are: {', '.join(self.names())}"
            )
        saved = {name: getattr(self, name) for name in changes}
        try:
            for name, value in changes.items():
                setattr(self, name, value)
            yield
        finally:
            for name, value in saved.items():
                setattr(self, name, value)

    def __setattr__(self, name: str, value) -> None:
        if name not in self.names():
            raise AttributeError(
                f"compiler.config has no setting {name!r}; the settings are: {', '.join(self.names())}"
            )
        super().__setattr__(name, value)

    def __repr__(self) -> str:
        return "compiler.config(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in self.names()) + ")"


config = Config()
