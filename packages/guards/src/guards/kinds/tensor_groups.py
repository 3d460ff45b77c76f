"""TensorGroup: many TensorMatch guards checked together, one C-level loop per property.

A model's guard set holds one TensorMatch per parameter and buffer it reads (GPT-2: 148).
One by one, each tensor costs eight `if`s, each an attribute read or method call in
bytecode. Grouped, the generated function builds the tuple of all of them once and reads
each property of every tensor with `map` (the loop runs in C), comparing whole lists:

    tensors = (wte_parameters['weight'], wpe_parameters['weight'], ...)
    if list(map(type, tensors)) != tensor_types or list(map(tensor_metadata, tensors)) != tensors_expected
       or not all(map(is_contiguous, tensors)) or any(map(is_inference, tensors)) or ...: return False

`tensor_metadata` is `operator.attrgetter('shape', 'dtype', 'requires_grad', 'is_cpu')`. The
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

from ..codegen import Check, EmitContext, type_spelling
from ..sources import TupleSource
from .base import EMITTERS, PRIORITY_TENSOR, Guard, emits
from .tensors import DISPATCH_FLAGS, TensorMatch, strides_are_contiguous

# Fewer tensors than this are checked one by one: each `map` pass and list comparison has a
# fixed cost, and per tensor the passes save little over the `if`s (the reads dominate).
# Measured on small CPU tensors: 8 tensors 6.6 us grouped vs 5.7 us alone, 32 tensors 22.5
# vs 22.9; GPT-2's 148 parameters 195 vs 209 us. Large sets also compile much faster grouped.
MIN_GROUP = 32

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
        if key is not None:
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
    map_, list_ = ctx.builtin("map"), ctx.builtin("list")
    types = ctx.constant([member.kind for member in members], "tensor_types", f"[{', '.join(type_spelling(m.kind) for m in members[:2])}, ...]")
    fields = ("shape", "dtype", "requires_grad", group.device_attribute)
    getter = ctx.constant(operator.attrgetter(*fields), "tensor_metadata", f"operator.attrgetter{fields!r}")
    expected = [_expected(member, group.device_attribute) for member in members]
    expected_name = ctx.constant(expected, "tensors_expected", f"[{expected[0]!r}, ...] (one per tensor, in order)")
    parts = [
        f"{list_}({map_}({ctx.builtin('type')}, {tensors})) != {types}",
        f"{list_}({map_}({getter}, {tensors})) != {expected_name}",
        *_stride_parts(members, tensors, ctx),
    ]
    for flag in group.flags:
        method = ctx.constant(getattr(torch.Tensor, flag), flag, f"torch.Tensor.{flag}")
        parts.append(f"{ctx.builtin('any')}({map_}({method}, {tensors}))")

    def member_checks() -> list[Check]:
        return [_member_check(member, ctx) for member in members]

    text = f"{len(members)} tensors have the type, sizes, strides, dtype, device, requires_grad and flags seen at capture"
    actual = ((None, f"{list_}({map_}({getter}, {tensors}))"),)
    return [Check(" or ".join(parts), text, actual, member_checks)]


def _subset(tensors: str, picked: list[int], members, name: str, ctx: EmitContext) -> str:
    """The expression for the `picked` members' tensors out of `tensors`: all of it, or one itemgetter."""
    return tensors if len(picked) == len(members) else f"{_picker(picked, name, ctx)}({tensors})"


def _stride_parts(members: tuple[TensorMatch, ...], tensors: str, ctx: EmitContext) -> list[str]:
    """Failing conditions for the members' strides: `is_contiguous()` for those it tests
    exactly, the whole stride tuples of the others (each subset taken out of `tensors` by one
    itemgetter, or read alone when it has one member)."""
    contiguous = [k for k, member in enumerate(members) if strides_are_contiguous(member)]
    strided = [k for k, member in enumerate(members) if k not in set(contiguous)]
    map_, parts = ctx.builtin("map"), []
    if contiguous:
        is_contiguous = ctx.constant(torch.Tensor.is_contiguous, "is_contiguous", "torch.Tensor.is_contiguous")
        if len(contiguous) == 1:
            parts.append(f"not {is_contiguous}({tensors}[{contiguous[0]}])")
        else:
            subset = _subset(tensors, contiguous, members, "contiguous_tensors", ctx)
            parts.append(f"not {ctx.builtin('all')}({map_}({is_contiguous}, {subset}))")
    if strided:
        stride = ctx.constant(torch.Tensor.stride, "stride", "torch.Tensor.stride")
        if len(strided) == 1:
            parts.append(f"{stride}({tensors}[{strided[0]}]) != {members[strided[0]].strides!r}")
        else:
            subset = _subset(tensors, strided, members, "strided_tensors", ctx)
            expected = [members[k].strides for k in strided]
            expected_name = ctx.constant(expected, "strides_expected", f"[{expected[0]!r}, ...] (one per tensor not tested by is_contiguous)")
            parts.append(f"{ctx.builtin('list')}({map_}({stride}, {subset})) != {expected_name}")
    return parts


def _picker(positions: list[int], name: str, ctx: EmitContext) -> str:
    return ctx.constant(operator.itemgetter(*positions), name, f"operator.itemgetter(<{len(positions)} positions>)")


def _member_check(member: TensorMatch, ctx: EmitContext) -> Check:
    """One member's TensorMatch checks as one check (to find the failing member), with those
    checks as its details (to find the failing property)."""
    checks = EMITTERS[TensorMatch](member, ctx)
    type_of = f"{ctx.builtin('type')}({ctx.read(member.source)})"
    return Check(" or ".join(f"({chk.fails})" for chk in checks), str(member), ((None, type_of),), tuple(checks))
