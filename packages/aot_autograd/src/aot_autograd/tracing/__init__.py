"""Tracing to ATen: `AtenRecorder` (a dispatch mode writing ATen calls into an FX graph),
graph nodes for symbolic sizes, and the `Emitter` passes use to add ops with metadata."""

from .emitter import Emitter
from .recorder import AtenRecorder
from .symbolic import SymbolicValues

__all__ = ["AtenRecorder", "Emitter", "SymbolicValues"]
