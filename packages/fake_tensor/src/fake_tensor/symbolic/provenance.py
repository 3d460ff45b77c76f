"""Where a guard came from (`Origin`, and `Guard`: a condition with its origin): the
innermost frame of the user's code, and the op being run.

A guard is recorded deep inside a kernel's shape logic (torch's Python decompositions, meta
functions, our SymNode). The person reading "seq <= 1024" wants the line of *their* model
that caused it, so we walk the Python stack outward and take the first frame that is not
torch's, not fake_tensor's and not the standard library's. Walking the stack is slow, but it
happens once per new guard, not per question. Code that runs the user's program some other
way (a bytecode interpreter) names the user's line itself with `ShapeEnv.attributing_to`.
"""

from __future__ import annotations

import dataclasses
import linecache
import os
import sys
import sysconfig
import types

import sympy
import torch

_LIBRARY_DIRS = (
    os.path.dirname(torch.__file__) + os.sep,
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,  # fake_tensor
)
_STDLIB_DIR = sysconfig.get_paths()["stdlib"] + os.sep


@dataclasses.dataclass(frozen=True)
class Origin:
    """The user's line (`file:line in function: source`) and op behind a guard, when known."""

    frame: str | None = None
    op: str | None = None

    def __str__(self) -> str:
        parts = [p for p in (self.op, self.frame) if p]
        return ", ".join(parts) if parts else "origin unknown"


@dataclasses.dataclass(frozen=True)
class Guard:
    """A condition on the symbols that the trace relied on, and where it came from."""

    expr: sympy.Basic
    origin: Origin

    def __str__(self) -> str:
        return f"{self.expr}  ({self.origin})"


def _is_library_file(filename: str) -> bool:
    if filename.startswith(_LIBRARY_DIRS) or filename.startswith("<"):
        return True
    return filename.startswith(_STDLIB_DIR) and "site-packages" not in filename


def _describe(code: types.CodeType, lineno: int) -> str:
    line = linecache.getline(code.co_filename, lineno).strip()
    where = f"{os.path.basename(code.co_filename)}:{lineno} in {code.co_name}"
    return f"{where}: {line}" if line else where


def user_frame() -> str | None:
    """`file:line in function: source line` of the innermost non-library frame, if any."""
    frame = sys._getframe(1)
    while frame is not None:
        if not _is_library_file(frame.f_code.co_filename):
            return _describe(frame.f_code, frame.f_lineno)
        frame = frame.f_back
    return None


def user_frame_in(traceback: types.TracebackType | None) -> str | None:
    """The same for the frames an exception unwound: the innermost non-library one."""
    found = None
    while traceback is not None:
        if not _is_library_file(traceback.tb_frame.f_code.co_filename):
            found = _describe(traceback.tb_frame.f_code, traceback.tb_lineno)
        traceback = traceback.tb_next
    return found
