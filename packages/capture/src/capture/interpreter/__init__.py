"""The symbolic interpreter loop: a `Frame` walks one code object's instructions, running each
through the handler registered for its opname (`capture.instructions`).

Exports `Frame`, `handles` (the registration decorator) and `UserException`.
"""

from .frame import Frame, StackSnapshot, UserException
from .registry import handles

__all__ = ["Frame", "StackSnapshot", "UserException", "handles"]
