"""The exceptions aot_autograd raises: one hierarchy, rooted at `AotAutogradError`.

They derive from `RuntimeError` because eager PyTorch raises `RuntimeError` for the same
kinds of failure (an op that cannot run, a second backward it cannot take), so code that
already handles eager failures keeps working, while callers can catch exactly ours.
"""

from __future__ import annotations

from fake_tensor.errors import raised_by_signal_handler


class AotAutogradError(RuntimeError):
    """Base class of every error aot_autograd raises on purpose."""


class UnsupportedProgramError(AotAutogradError):
    """The graph does something this compiler does not turn into functional ATen graphs."""

    def __init__(self, what: str, hint: str):
        self.what = what
        super().__init__(f"aot_autograd cannot compile a graph that {what}. {hint}")


class AliasedInputWriteError(UnsupportedProgramError):
    """A write into an input that shares memory with another input (synthetic_bases.py merges
    such inputs where it can)."""


class TracingError(AotAutogradError):
    """An ATen op failed while the graph was being traced on fake tensors."""

    def __init__(self, op: object, cause: BaseException):
        self.op = op
        super().__init__(
            f"tracing {op} on fake tensors failed: {type(cause).__name__}: {cause}. The same "
            f"graph runs eagerly; run it with backend='eager' to see whether the op itself fails."
        )


# Ends of what the process has, met while an op ran, not the op's failure: Python's stack (the
# trace runs under the compiler's frames, deeper than eager's call) and the host's memory.
_PROCESS_LIMITS = (MemoryError, RecursionError)


def not_the_ops_failure(op: object, error: Exception) -> bool:
    """Whether `error`, raised while `op` ran on fake tensors, goes on as it is rather than as a
    TracingError blaming `op`: one a Python signal handler raised (a harness's SIGALRM
    timeout, a SIGTERM turned into an exception), which is the caller's, or a process limit,
    which gets a note naming the op. KeyboardInterrupt and SystemExit are no `Exception`s:
    nothing catches them. (torch.compile wraps all of these in its own errors.)"""
    if raised_by_signal_handler(error):
        return True
    if isinstance(error, _PROCESS_LIMITS):
        error.add_note(f"(raised while aot_autograd traced {op} on fake tensors)")
        return True
    return False


class DoubleBackwardError(AotAutogradError):
    """A gradient computed by a compiled backward was itself differentiated."""

    def __init__(self) -> None:
        super().__init__(
            "double backward through a graph compiled by aot_autograd is not supported: its "
            "backward graph is compiled without a backward of its own. Compute the "
            "higher-order gradient (torch.autograd.grad(..., create_graph=True)) outside the "
            "compiled region, or compile with backend='eager'."
        )
