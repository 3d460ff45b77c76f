"""Inductor's exceptions: one hierarchy, each message naming the op or kernel and what to do."""


class InductorError(Exception):
    """Base class for every error inductor raises."""


class LoweringError(InductorError):
    """An ATen node could not be lowered nor run through its aten fallback."""


class CppCompileError(InductorError):
    """g++ rejected a generated kernel; the message carries the source path and the compiler output."""


class UnsupportedDevice(InductorError):
    """A graph's tensors live on a device no backend here generates code for."""


class CacheWarning(UserWarning):
    """The on-disk cache had a damaged entry (removed and compiled again) or is read-only."""
