"""The exceptions fake_tensor raises: one hierarchy, rooted at `FakeTensorError`.

They derive from `RuntimeError` because eager PyTorch raises `RuntimeError` for the same
situations (a device mismatch, `.item()` on a meta tensor), so code that already handles
eager failures keeps working, while callers such as capture can catch exactly ours.
"""

from __future__ import annotations

import signal


class FakeTensorError(RuntimeError):
    """Base class of every error fake_tensor raises on purpose."""


class DataDependentError(FakeTensorError):
    """The op's result (a Python value, or an output shape) depends on tensor data, which fakes lack.

    `op` names the op (e.g. `aten.nonzero.default`); capture turns this into a graph break.
    """

    def __init__(self, op: object, why: str):
        self.op = op
        super().__init__(
            f"{op} depends on the values inside a tensor ({why}); fake tensors carry only "
            f"metadata. Run this part eagerly, or rewrite it without the data-dependent op."
        )


class UnsupportedTensorKindError(FakeTensorError):
    """A tensor fake tensors cannot stand for: a sparse, nested or other non-strided layout,
    or a quantized dtype (torch's meta kernels describe a quantized result as float32)."""

    def __init__(self, what: str, hint: str):
        super().__init__(f"fake tensors do not support {what}. {hint}")


class StaticSizesRequiredError(FakeTensorError):
    """A torch kernel reads sizes as plain ints, so it cannot run on symbolic sizes."""

    def __init__(self, op: object):
        self.op = op
        super().__init__(
            f"{op}: torch's C++ kernel for this call reads tensor sizes as plain ints, so it "
            f"cannot run on fakes with symbolic sizes. Make those dimensions static (leave them "
            f"out of dynamic_dims / the Dims), or move the call out of the analysed code."
        )


class UnsupportedFakeOpError(FakeTensorError):
    """The op has no meta kernel and no decomposition, so its output metadata is unknown."""

    def __init__(self, op: object, cause: BaseException | None = None):
        self.op = op
        detail = f": {cause}" if cause is not None else ""
        super().__init__(
            f"{op} cannot run on fake tensors: it has no meta kernel and no decomposition"
            f"{detail}. Register a meta kernel (torch.library.register_fake) or avoid the op."
        )


class RealTensorInputError(FakeTensorError):
    """A real (non-fake) tensor reached an op together with, or inside the mode of, fake tensors."""

    def __init__(self, op: object, tensor: object):
        self.op = op
        super().__init__(
            f"{op} received a real tensor ({_describe(tensor)}) under fake tensor mode. Only "
            f"0-dim CPU tensors may mix with fakes (as in eager PyTorch). Convert the tensor "
            f"with mode.from_real(t) (or the module with mode.from_module(m)) first."
        )


class DeviceMismatchError(FakeTensorError):
    """Tensors on different devices met in one op, which eager PyTorch would also reject."""

    def __init__(self, op: object, devices: list):
        self.op = op
        names = ", ".join(str(d) for d in devices)
        super().__init__(
            f"{op}: expected all tensors to be on the same device, but found {names} "
            f"(only 0-dim CPU tensors may mix with tensors on another device)."
        )


class FakeModeMismatchError(FakeTensorError):
    """Fakes created by two different FakeTensorModes met in one op."""

    def __init__(self, op: object):
        self.op = op
        super().__init__(
            f"{op} received fake tensors from two different FakeTensorModes; convert every "
            f"input with the same mode."
        )


class OverlappingWriteError(FakeTensorError):
    """An op eager lets write into memory it also reads, in a way a graph that reads every
    argument before writing cannot reproduce (`torch.mm(a, b, out=a)`, `fill_` of an expanded
    tensor): the op has to run as eager runs it. Capture breaks the graph here."""

    def __init__(self, op: object, why: str):
        self.op, self.why = op, why
        super().__init__(
            f"{op} writes into memory that its arguments share, and {why}. Eager runs it in place; "
            f"clone() the overlapping argument to compile it."
        )


def _describe(tensor: object) -> str:
    if not hasattr(tensor, "shape"):  # an UntypedStorage
        return f"a storage of {tensor.nbytes()} bytes on {tensor.device}"
    shape = tuple(getattr(tensor, "shape", ()))
    return f"shape {shape}, dtype {getattr(tensor, 'dtype', '?')}, device {getattr(tensor, 'device', '?')}"


class GuardOnDataDependentError(DataDependentError):
    """A question about a size or value that only the data decides (an unbacked symbol such
    as the row count of `nonzero`), which its known range cannot answer: tracing cannot go
    on without guessing. `expr` is the question; capture breaks the graph here."""

    def __init__(self, expr: object, origins: list):
        self.expr = expr
        self.op = None
        made = "; ".join(f"{symbol} comes from {origin}" for symbol, origin in origins)
        RuntimeError.__init__(
            self,
            f"could not decide `{expr}`: it depends on data-dependent values ({made or 'unbacked symbols'}) "
            f"that are unknown while tracing. Branching on them (or using them as a Python int) "
            f"needs the real data; use torch._check(...) to state what holds, or compute it in tensors.",
        )


def raised_by_signal_handler(error: BaseException) -> bool:
    """Whether `error` left a Python signal handler (a SIGALRM timeout, a SIGTERM turned into
    an exception). Such a handler runs between any two bytecodes of the main thread, a
    tracer's own and an op's Python included: its exception is the user's, never a failure of
    the op or a bug of the tracer, and goes on unchanged (capture, aot_autograd)."""
    handlers = set()
    for signum in signal.valid_signals():
        try:
            code = getattr(signal.getsignal(signum), "__code__", None)
        except (OSError, ValueError):
            continue
        if code is not None:
            handlers.add(code)
    frame = error.__traceback__
    while frame is not None:
        if frame.tb_frame.f_code in handlers:
            return True
        frame = frame.tb_next
    return False
