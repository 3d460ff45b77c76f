"""TensorGroup: many TensorMatch guards checked together, in one call.

A model's guard set holds one TensorMatch per parameter and buffer it reads (GPT-2: 148).
One by one, each tensor costs eight `if`s, each an attribute read or method call in
bytecode. Grouped, the generated function builds the tuple of all of them once and makes
one call:

    tensors = (wte_parameters['weight'], wpe_parameters['weight'], ...)
    if not tensor_group.check(tensors): return False

`tensor_group` is a `native.GroupCheck`: the compiled helper (native/tensor_group.cpp, one
C++ loop over the tensors' TensorImpls, ~15 ns a tensor) once it is built on this machine,
and until then, or where it cannot be built, the same test in Python (`_python_check`: each
property of every tensor read with one C-level `map`, ~600 ns a tensor). Either way the
group's check is exactly the conjunction of its members' checks (the same properties with
the same expected values, the unbound `torch.Tensor` methods only for kinds that do not
override them), so it passes and fails on the same frames; `why` runs the members' own
checks to name the first tensor and property that differ. Only tensors whose check is that
simple are grouped: static sizes and strides, no dispatch flag set. Strides are tested by
`is_contiguous()` where that is exact (tensors.strides_are_contiguous), else compared
whole for the members that need it (a 1x1 convolution's weight, whose size-1 dims
`is_contiguous()` ignores). Others keep their own TensorMatch code.

Why every property is still read on every call (no identity or version shortcut): a
parameter's metadata can change while it stays the same Python object. Tried on torch 2.13
(what each operation changes among the cheap signals `id`, `_cdata`, `_version`):

    p.requires_grad_(False)                   requires_grad only
    with no_grad: p.t_() / transpose_ /       shape, stride, and `_version` is bumped
      unsqueeze_ / squeeze_ / swapdims_ /
      as_strided_ / set_ / resize_ (buffers)
    p.data = other (also module.half()/.to(),  shape, stride, dtype, data_ptr, neg/conj and
      which assign .data)                     inference bits; `_version` and `_cdata` kept
    p.data = p.data.t() / .view(new shape)    shape, stride only: same storage, same data_ptr
    torch.utils.swap_tensors(p, q)            everything, `_cdata` changes, `_version` may not
    p.__class__ = torch.Tensor                type only

`.data =` (torch's `set_data`) swaps the tensor's metadata in place and bumps no counter,
so no cheap fingerprint (identity, version counter, data pointer) proves that shape, stride
or dtype are unchanged: only reading them does. Skipping those reads when a parameter is
the same object, as torch.compile's C++ guards do when a module's dict tag matches, would
run a graph compiled for the old metadata on the new one.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterable

import torch

from .. import native
from ..codegen import Check, EmitContext
from ..sources import TupleSource
from .base import EMITTERS, PRIORITY_TENSOR, Guard, emits
from .tensors import DISPATCH_FLAGS, TensorMatch, strides_are_contiguous

# Fewer tensors than this are checked one by one. The compiled check pays from a few tensors
# on (8 parameters: 1.1 us grouped vs 6.4 alone, guard call included); the Python check,
# where the helper cannot be built, only from ~32 (8 tensors 6.6 us grouped vs 5.7 alone,
# 32: 22.5 vs 22.9), a small loss below that. Large sets also compile much faster grouped.
MIN_GROUP = 8

# How the group reads each tensor's device: a bool property where the device type has one
# (as TensorMatch does), else the device itself, compared with ==.
_DEVICE_ATTRIBUTES = {"cpu": "is_cpu", "meta": "is_meta"}


@dataclasses.dataclass(frozen=True)
class TensorGroup(Guard):
    """Every member TensorMatch holds; built by `with_tensor_groups`, not by capture."""

    members: tuple[TensorMatch, ...]
    device_attribute: str  # read from every member: "is_cpu", "is_meta" or "device"
    flags: tuple[str, ...]  # dispatch flags (all False in every member) the group checks
    priority = PRIORITY_TENSOR

    def __str__(self) -> str:
        return "\n".join([f"{len(self.members)} tensors, each as at capture:", *(f"  {member}" for member in self.members)])


class _FlagsByDtype(dict):
    """dtype -> the dispatch flags TensorMatch checks for it (DISPATCH_FLAGS), computed once."""

    def __missing__(self, dtype: torch.dtype) -> tuple[str, ...]:
        flags = self[dtype] = tuple(flag for flag, applies in DISPATCH_FLAGS.items() if applies(dtype))
        return flags


_FLAGS = _FlagsByDtype()


def _group_key(guard: Guard) -> tuple[str, tuple[str, ...]] | None:
    """(device attribute, flags) of the group `guard` can join, or None if it checks alone."""
    if type(guard) is not TensorMatch or None in guard.sizes or None in guard.strides:
        return None
    if guard.is_inference or guard.is_neg or guard.is_conj:
        return None
    device_attribute, flags = _DEVICE_ATTRIBUTES.get(guard.device.type, "device"), _FLAGS[guard.dtype]
    # The group calls torch.Tensor's own getters and methods; a subclass's override would
    # make that a different test from the member's `x.is_contiguous()`.
    kind = guard.kind
    if kind is not torch.Tensor and any(
        getattr(kind, name, None) is not getattr(torch.Tensor, name)
        for name in ("shape", "dtype", "requires_grad", "is_contiguous", "stride", device_attribute, *flags)
    ):
        return None
    return device_attribute, flags


def with_tensor_groups(guards: Iterable[Guard]) -> list[Guard]:
    """`guards` with the TensorMatch guards that can be grouped replaced by TensorGroups (one
    per device reading and set of flags, at the place of its first member), where a group
    would have at least MIN_GROUP members."""
    guards = list(guards)
    by_key: dict[tuple, list[TensorMatch]] = {}
    for guard in guards:
        key = _group_key(guard)
        if key is not None and not guard.reads_with_effects():  # read at its own place, last
            by_key.setdefault(key, []).append(guard)
    first: dict[Guard, TensorGroup] = {}
    grouped: set[Guard] = set()
    for (device_attribute, flags), members in by_key.items():
        if len(members) >= MIN_GROUP:
            first[members[0]] = TensorGroup(tuple(members), device_attribute, flags)
            grouped.update(members)
    return [first.get(guard, guard) for guard in guards if guard not in grouped or guard in first]


def _expected(member: TensorMatch, device_attribute: str) -> tuple:
    device = member.device if device_attribute == "device" else True
    return (member.sizes, member.dtype, member.requires_grad, device)


@emits(TensorGroup)
def _tensor_group(group: TensorGroup, ctx: EmitContext) -> list[Check]:
    members = group.members
    tensors = ctx.read(TupleSource(tuple(member.source for member in members), "tensors"))
    flag_bits = sum(_FLAG_BITS[flag] for flag in group.flags)
    entries = tuple(_native_entry(member, flag_bits) for member in members)
    checker = native.GroupCheck(_python_check(members, group.device_attribute, group.flags), entries)
    name = ctx.constant(checker, "tensor_group", f"<check of {len(members)} tensors: compiled (guards.native) once built, else Python>")
    fields = ("shape", "dtype", "requires_grad", group.device_attribute)
    getter = ctx.constant(operator.attrgetter(*fields), "tensor_metadata", f"operator.attrgetter{fields!r}")

    def member_checks() -> list[Check]:
        return [_member_check(member, ctx) for member in members]

    text = f"{len(members)} tensors have the type, sizes, strides, dtype, device, requires_grad and flags seen at capture"
    actual = ((None, f"{ctx.builtin('list')}({ctx.builtin('map')}({getter}, {tensors}))"),)
    return [Check(f"not {name}.check({tensors})", text, actual, member_checks)]


def _python_check(members: tuple[TensorMatch, ...], device_attribute: str, flags: tuple[str, ...]):
    """The group's check in Python, one C-level `map` per property: true when every member's
    TensorMatch holds. Strides are tested by `is_contiguous()` where that is exact
    (tensors.strides_are_contiguous), else compared whole."""
    types = [member.kind for member in members]
    metadata = operator.attrgetter("shape", "dtype", "requires_grad", device_attribute)
    expected = [_expected(member, device_attribute) for member in members]
    contiguous = [k for k, member in enumerate(members) if strides_are_contiguous(member)]
    strided = sorted(set(range(len(members))) - set(contiguous))
    pick_contiguous, pick_strided = _picker(contiguous, len(members)), _picker(strided, len(members))
    strides = [members[k].strides for k in strided]
    flag_methods = [getattr(torch.Tensor, flag) for flag in flags]
    is_contiguous, stride = torch.Tensor.is_contiguous, torch.Tensor.stride

    def check(tensors: tuple) -> bool:
        return (
            list(map(type, tensors)) == types
            and list(map(metadata, tensors)) == expected
            and all(map(is_contiguous, pick_contiguous(tensors)))
            and list(map(stride, pick_strided(tensors))) == strides
            and not any(any(map(method, tensors)) for method in flag_methods)
        )

    return check


def _picker(positions: list[int], count: int):
    """A function from the group's tuple to the members at `positions` (C-level unless it
    picks one or none)."""
    if len(positions) == count:
        return tuple
    if len(positions) > 1:
        return operator.itemgetter(*positions)
    return lambda tensors: tuple(tensors[k] for k in positions)


# The flags the compiled check tests, as bits (native/tensor_group.cpp's Flags).
_FLAG_BITS = {"is_inference": 1, "is_neg": 2, "is_conj": 4}


def _native_entry(member: TensorMatch, flag_bits: int) -> tuple:
    """What the compiled check expects of one member (make_spec's entry)."""
    strides = None if strides_are_contiguous(member) else tuple(member.strides)
    return (member.kind, tuple(member.sizes), strides, member.dtype, member.device, member.requires_grad, flag_bits)


def _member_check(member: TensorMatch, ctx: EmitContext) -> Check:
    """One member's TensorMatch checks as one check (to find the failing member), with those
    checks as its details (to find the failing property)."""
    checks = EMITTERS[TensorMatch](member, ctx)
    type_of = f"{ctx.builtin('type')}({ctx.read(member.source)})"
    return Check(" or ".join(f"({chk.fails})" for chk in checks), str(member), ((None, type_of),), tuple(checks))
