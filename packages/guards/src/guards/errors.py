"""The guards package's exceptions: one hierarchy, so callers can catch `GuardError`."""

from __future__ import annotations


class GuardError(Exception):
    """Base of every error raised by the guards package."""


class SourceError(GuardError, TypeError):
    """A source was built from parts that cannot name a value (e.g. an unprintable item key)."""


class GuardCompileError(GuardError):
    """A guard set cannot be turned into a Python function; the message says which guard and why."""
