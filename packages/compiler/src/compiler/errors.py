"""Errors of the `compiler` package (capture's own errors, such as `capture.Unsupported`,
reach users unchanged)."""


class CompilerError(Exception):
    """Base class of the compiler package's errors."""


class InvalidBackend(CompilerError):
    """A backend name that is not registered, or registered twice."""
