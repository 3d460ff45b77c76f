"""TensorMatch: a tensor argument still has the metadata the compiled graph was built for.

A compiled graph depends on its input tensors' exact type, dtype, device, sizes and strides
(static ones; dynamic dims are left to shape guards), requires_grad, and the dispatch flags
that change what a kernel reading the raw memory must do (inference tensors, and the lazy
negation / conjugation bits of views such as `z.conj().imag`).

Speed: on the hit path every check runs, so each is the cheapest pure-Python spelling we
measured (benchmarks/guards.py): `type(x) is T` (no isinstance walk), `x.shape == (8, 3)`
(a property, no method call), `x.dtype is float32` (dtypes are singletons), `x.is_cpu`
rather than building a `torch.device` to compare. Flags are only tested where they can be
set: the conj bit exists only on complex tensors, the neg bit only on floating/complex ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import torch

from ..codegen import Check, EmitContext, check, must_be, must_be_true, must_be_truth, must_equal, must_hold, type_spelling
from ..errors import GuardError
from ..sources import ItemSource, ShapeSource, Source, StrideSource
from .base import PRIORITY_TENSOR, Guard, emits
from .values import TypeMatch


def _static(values: Sequence[object]) -> tuple[int | None, ...]:
    # SymInts (and None) mark dims that shape guards check instead.
    return tuple(v if type(v) is int else None for v in values)


@dataclasses.dataclass(frozen=True)
class TensorMatch(Guard):
    """Exact tensor metadata. `sizes`/`strides` entries that are None are dynamic."""

    source: Source
    kind: type
    dtype: torch.dtype
    device: torch.device
    sizes: tuple[int | None, ...]
    strides: tuple[int | None, ...]
    requires_grad: bool
    is_inference: bool = False
    is_neg: bool = False
    is_conj: bool = False
    priority = PRIORITY_TENSOR

    @classmethod
    def of(
        cls,
        source: Source,
        tensor: torch.Tensor,
        *,
        sizes: Sequence[object] | None = None,
        strides: Sequence[object] | None = None,
    ) -> TensorMatch:
        """The guard `tensor` satisfies. Pass `sizes`/`strides` of its fake counterpart to
        leave symbolic (SymInt) entries unchecked here."""
        if tensor.layout is not torch.strided:
            raise GuardError(
                f"{source}: tensors with layout {tensor.layout} are not supported by guards "
                "(only strided tensors)"
            )
        return cls(
            source=source,
            kind=type(tensor),
            dtype=tensor.dtype,
            device=tensor.device,
            sizes=_static(tensor.shape if sizes is None else sizes),
            strides=_static(tensor.stride() if strides is None else strides),
            requires_grad=tensor.requires_grad,
            is_inference=tensor.is_inference(),
            is_neg=tensor.is_neg(),
            is_conj=tensor.is_conj(),
        )

    def __str__(self) -> str:
        parts = [
            str(self.dtype).removeprefix("torch."),
            str(self.device),
            f"size={_dims(self.sizes)}",
            f"stride={_dims(self.strides)}",
            f"requires_grad={self.requires_grad}",
        ]
        parts += [flag for flag in ("is_inference", "is_neg", "is_conj") if getattr(self, flag)]
        return f"{self.source}: {self.kind.__name__}({', '.join(parts)})"

    def implies(self) -> tuple[Guard, ...]:
        return (TypeMatch(self.source, self.kind),)


def _dims(values: tuple[int | None, ...]) -> str:
    return "(" + ", ".join("?" if v is None else str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


@emits(TensorMatch)
def _tensor_match(guard: TensorMatch, ctx: EmitContext) -> list[Check]:
    source = guard.source
    x = ctx.read(source)
    type_of = f"{ctx.builtin('type')}({x})"
    kind = ctx.type_name(guard.kind)
    dtype = ctx.constant(guard.dtype, str(guard.dtype).removeprefix("torch."), str(guard.dtype))
    checks = [check(must_be(type_of, kind), f"type({source}) is {type_spelling(guard.kind)}", type_of)]
    checks += _dims_checks(ShapeSource(source), guard.sizes, ctx, f"{source}.dim()")
    checks.append(check(must_be(f"{x}.dtype", dtype), f"{source}.dtype == {guard.dtype}", f"{x}.dtype"))
    grad = f"{x}.requires_grad"
    checks.append(check(must_be_truth(grad, guard.requires_grad), f"{source}.requires_grad == {guard.requires_grad}", grad))
    checks += _dims_checks(StrideSource(source), guard.strides, ctx, f"len({source}.stride())", x if strides_are_contiguous(guard) else "")
    checks.append(_device_check(guard, x, ctx))
    for flag, applies in DISPATCH_FLAGS.items():
        if applies(guard.dtype) or getattr(guard, flag):
            call = f"{x}.{flag}()"
            expected = getattr(guard, flag)
            checks.append(check(must_be_truth(call, expected), f"{source}.{flag}() == {expected}", call))
    return checks


# The dispatch flags a tensor match covers, and the dtypes for which each can be set.
DISPATCH_FLAGS: dict[str, Callable[[torch.dtype], bool]] = {
    "is_inference": lambda dtype: True,
    "is_neg": lambda dtype: dtype.is_floating_point or dtype.is_complex,
    "is_conj": lambda dtype: dtype.is_complex,
}


def strides_are_contiguous(guard: TensorMatch) -> bool:
    """Whether `x.is_contiguous()` is exactly the stride check, once the sizes matched.

    It is when the expected strides are the contiguous ones and every size is at least 2:
    `is_contiguous` ignores the stride of a size-1 dim and of an empty tensor, which the
    exact check does not. One call instead of building and comparing a stride tuple.
    """
    sizes = guard.sizes
    if None in sizes or None in guard.strides or any(size < 2 for size in sizes):
        return False
    if getattr(guard.kind, "is_contiguous", None) is not torch.Tensor.is_contiguous:
        return False  # a subclass's own is_contiguous() may answer something else
    expected, running = [], 1
    for size in reversed(sizes):
        expected.append(running)
        running *= size
    return tuple(reversed(expected)) == guard.strides


def _dims_checks(
    whole: Source, values: tuple[int | None, ...], ctx: EmitContext, rank_text: str, contiguous_tensor: str = ""
) -> list[Check]:
    """`x.shape == (8, 3)` when all dims are static; else the rank and each static dim.

    `contiguous_tensor` (the tensor's expression) replaces the whole-stride comparison with
    `is_contiguous()` where `strides_are_contiguous` says that is the same test.
    """
    read = ctx.read(whole)
    length = f"{ctx.builtin('len')}({read})"
    rank = check(must_equal(length, str(len(values))), f"{rank_text} == {len(values)}", length)
    per_dim = [
        check(must_equal(ctx.read(ItemSource(whole, dim)), str(value)), f"{whole}[{dim}] == {value}", ctx.read(ItemSource(whole, dim)))
        for dim, value in enumerate(values)
        if value is not None
    ]
    if None in values:
        return [rank, *per_dim]
    expected = tuple(values)
    fails = must_be_true(f"{contiguous_tensor}.is_contiguous()") if contiguous_tensor else must_equal(read, repr(expected))
    return [check(fails, f"{whole} == {expected!r}", read, details=[rank, *per_dim])]


# How to test a device cheaply, by device type: a bool property beats building a
# torch.device per call (`x.device` allocates one) and comparing it.
_DEVICE_TESTS: dict[str, Callable[[str, torch.device], str]] = {
    "cpu": lambda x, device: must_be_true(f"{x}.is_cpu"),
    "meta": lambda x, device: must_be_true(f"{x}.is_meta"),
    "cuda": lambda x, device: must_hold(f"{x}.is_cuda and {x}.get_device() == {device.index or 0}"),
}


def _device_check(guard: TensorMatch, x: str, ctx: EmitContext) -> Check:
    test = _DEVICE_TESTS.get(guard.device.type)
    if test is None:
        expected = ctx.constant(guard.device, f"{guard.device.type}_device", repr(guard.device))
        fails = must_equal(f"{x}.device", expected)
    else:
        fails = test(x, guard.device)
    return check(fails, f"{guard.source}.device == {str(guard.device)!r}", f"{x}.device")
