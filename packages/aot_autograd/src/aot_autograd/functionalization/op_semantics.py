"""What an ATen op does to storage: makes a view, writes an argument, or neither.

Almost all of it is read off the op's schema: `Tensor(a) self -> Tensor(a)` is a view,
`Tensor(a!) self` is written in place. The functional op that computes the same values
without writing is found by name and matching arguments (`add_.Tensor` -> `add.Tensor`,
`bernoulli_.float` -> `bernoulli.p`, `add.out` -> `add.Tensor`, `_native_batch_norm_legit`
-> `_native_batch_norm_legit_functional`). The exceptions are tables below.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Callable

import torch
import torch.fx as fx

from ..errors import UnsupportedProgramError

aten = torch.ops.aten
OpOverload = torch._ops.OpOverload

# What a factory (`eye`, `arange`, `full`...) takes that its `.out` form reads off `out`.
TENSOR_OPTIONS = frozenset({"dtype", "layout", "device", "pin_memory"})

# Ops that return their argument under a new tensor object and nothing else: the value is the
# argument's, with no storage of its own. `detach` and `lift_fresh` are what autograd and
# `torch.tensor(...)` leave in a trace.
ALIAS_ONLY = frozenset({aten.detach.default, aten.alias.default, aten.lift_fresh.default, aten.detach_.default})
# Those whose result is another tensor object (detach_ changes its argument itself).
NEW_OBJECT_ALIASES = ALIAS_ONLY - {aten.detach_.default}

# In-place ops that change a tensor's size, strides or storage rather than its values.
_METADATA_MUTATIONS = frozenset(
    {
        aten.resize_.default,
        aten.resize_as_.default,
        aten.set_.source_Tensor,
        aten.set_.source_Storage,
        aten.set_.source_Storage_storage_offset,
        aten.set_.default,
        aten.t_.default,
        aten.transpose_.default,
        aten.squeeze_.default,
        aten.squeeze_.dim,
        aten.squeeze_.dims,
        aten.unsqueeze_.default,
        aten.as_strided_.default,
        aten.swapdims_.default,
        aten.swapaxes_.default,
    }
)


@dataclass(frozen=True)
class FunctionalVariant:
    """How to compute a mutating op's effects with a functional op.

    `op` is called with the mutating op's arguments minus `dropped_args`; `new_values` maps
    each written argument to the index of `op`'s output holding its new value; `returns`
    says, for each return of the mutating op, either ("arg", name): it is that written
    argument, or ("output", index): it is that output of `op`.
    """

    op: OpOverload
    dropped_args: frozenset[str]
    new_values: dict[str, int]
    returns: tuple[tuple[str, str | int], ...]
    # A factory's `.out` form (`eye.m_out(n, m, *, out)`): the written argument whose dtype,
    # layout and device `op` (`eye.m(n, m, *, dtype, layout, device, pin_memory)`) is given.
    options_from: str | None = None


def restrides_in_place_only(func: object, args: tuple) -> bool:
    """Whether `func(*args)` is `x.as_strided_(size, stride)` that keeps every element where
    it is and only changes the strides of size-1 dimensions: torch's composite
    adaptive_avg_pool2d does this to give a pooled channels-last output channels-last strides.
    Asked before the op runs (it changes x's metadata); the tracer records the answer in the
    node's meta["restride_only"], and functionalization treats such a node as x itself."""
    if func is not aten.as_strided_.default:
        return False
    base, size, stride = args[0], list(args[1]), list(args[2])
    offset = args[3] if len(args) > 3 else None
    if size != list(base.shape) or (offset is not None and offset != base.storage_offset()):
        return False
    return all(n == 1 or new == old for n, new, old in zip(size, stride, base.stride()))


def is_view(op: object) -> bool:
    if not isinstance(op, OpOverload) or op in ALIAS_ONLY:
        return False
    schema = op._schema
    if schema.is_mutable or not schema.arguments or not schema.returns:
        return False
    first = schema.arguments[0].alias_info
    returns = schema.returns[0].alias_info
    return first is not None and not first.is_write and returns is not None


def out_of_place_view(op: object) -> OpOverload | None:
    """For an in-place view op (`squeeze_.dim`, `t_`, `transpose_`...), the view op computing
    the same geometry out of place (`squeeze.dim`); else None."""
    if not isinstance(op, OpOverload) or torch.Tag.inplace_view not in op.tags:
        return None
    name = op._schema.name.split("::")[1]
    packet = getattr(torch.ops.aten, name[:-1], None) if name.endswith("_") else None
    arguments = [(a.name, str(a.type)) for a in op._schema.arguments]
    for overload in packet.overloads() if packet is not None else ():
        view = getattr(packet, overload)  # matched by arguments: `transpose_.default` is `transpose.int`
        if [(a.name, str(a.type)) for a in view._schema.arguments] == arguments and is_view(view):
            return view
    return None


def written_args(op: object) -> list[str]:
    if not isinstance(op, OpOverload):
        return []
    return [a.name for a in op._schema.arguments if a.alias_info is not None and a.alias_info.is_write]


def functional_variant(node: fx.Node) -> FunctionalVariant | None:
    """The functional form of `node`'s op, or None when the op writes nothing."""
    op = node.target
    hidden = _HIDDEN_MUTATIONS.get(op)
    if hidden is not None:
        return hidden(node)
    if not written_args(op):
        return None
    if op in _METADATA_MUTATIONS:
        raise UnsupportedProgramError(
            f"changes a tensor's shape or storage in place ({op})",
            "Use the out-of-place form (e.g. `x = x.t()` rather than `x.t_()`).",
        )
    return _derived_variant(op)


@functools.cache
def _derived_variant(op: OpOverload) -> FunctionalVariant:
    schema = op._schema
    written = written_args(op)
    name = schema.name.split("::")[1]
    out_form = all(a.kwarg_only for a in schema.arguments if a.name in written)
    if out_form:
        # `foo.out(..., *, out)`: the functional overload of `foo` without the outs.
        candidates = [(name, frozenset(written))]
    elif name.startswith("__i") and name.endswith("__"):
        # Python's in-place operators kept as aten ops (`t <<= 2` is `__ilshift__.Scalar`).
        candidates = [("__" + name[3:], frozenset())]
    elif name.endswith("_"):
        # `foo_(self, ...)`: `foo(self, ...)`, or torch's generated `foo_functional`.
        candidates = [(name[:-1], frozenset()), (name[:-1] + "_functional", frozenset())]
    else:
        # Written arguments that are not returned (`_native_batch_norm_legit`'s running stats).
        candidates = [(name + "_functional", frozenset())]
    for candidate, dropped in candidates:
        functional = _matching_overload(candidate, schema, dropped)
        if functional is not None:
            return _output_mapping(functional, schema, written, dropped)
    if out_form and len(written) == 1:
        functional = _matching_overload(name, schema, frozenset(written), also_taking=TENSOR_OPTIONS)
        if functional is not None:
            return dataclasses.replace(_output_mapping(functional, schema, written, frozenset(written)),
                                       options_from=written[0])
    raise UnsupportedProgramError(
        f"uses {op}, an op that writes its arguments and has no functional counterpart "
        f"aot_autograd can find",
        "Use the out-of-place form of the op.",
    )


def _output_mapping(functional: OpOverload, schema, written: list[str], dropped: frozenset[str]) -> FunctionalVariant:
    """The functional op returns one value per return of the mutating op (a return that
    aliases a written argument becomes that argument's new value), then the new values of
    written arguments the mutating op does not return."""
    by_alias_set = {
        frozenset(a.alias_info.before_set): a.name for a in schema.arguments if a.name in written
    }
    new_values: dict[str, int] = {}
    returns = []
    for index, ret in enumerate(schema.returns):
        argument = by_alias_set.get(frozenset(ret.alias_info.before_set)) if ret.alias_info else None
        if argument is None:
            returns.append(("output", index))
        else:
            new_values[argument] = index
            returns.append(("arg", argument))
    next_output = len(schema.returns)
    for argument in written:
        if argument not in new_values:
            new_values[argument] = next_output
            next_output += 1
    if len(functional._schema.returns) != next_output:
        raise UnsupportedProgramError(
            f"uses {schema.name}.{schema.overload_name}, whose functional form {functional} returns "
            f"values aot_autograd cannot match to the arguments it writes",
            "Use the out-of-place form of the op.",
        )
    return FunctionalVariant(functional, dropped, new_values, tuple(returns))


def _matching_overload(name: str, schema, dropped: frozenset[str], also_taking=frozenset()) -> OpOverload | None:
    """The non-mutating overload of `aten.<name>` taking the arguments of `schema` (minus
    `dropped`), in any order (`polygamma_(self, n)` but `polygamma(n, self)`), and besides
    them keyword-only arguments named in `also_taking`."""
    wanted = sorted((a.name, str(a.type)) for a in schema.arguments if a.name not in dropped)
    packet = getattr(aten, name, None)
    for overload_name in packet.overloads() if packet is not None else ():
        candidate = getattr(packet, overload_name)
        if candidate._schema.is_mutable:
            continue
        taken = [a for a in candidate._schema.arguments if not (a.kwarg_only and a.name in also_taking)]
        if sorted((a.name, str(a.type)) for a in taken) == wanted:
            return candidate
    return None


def _native_batch_norm(node: fx.Node) -> FunctionalVariant | None:
    # `native_batch_norm` updates running_mean/running_var in place (training with running
    # stats) although its schema does not say so. Its functional twin returns the new stats.
    running_mean, running_var, training = (_arg(node, i, name) for i, name in
                                           ((3, "running_mean"), (4, "running_var"), (5, "training")))
    if running_mean is None or running_var is None or not training:
        return None
    return FunctionalVariant(
        aten._native_batch_norm_legit_functional.default,
        frozenset(),
        {"running_mean": 3, "running_var": 4},
        (("output", 0), ("output", 1), ("output", 2)),
    )


def _arg(node: fx.Node, index: int, name: str):
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name)


_HIDDEN_MUTATIONS: dict[OpOverload, Callable[[fx.Node], FunctionalVariant | None]] = {
    aten.native_batch_norm.default: _native_batch_norm,
}


def viewed_placeholder(node: fx.Node) -> fx.Node | None:
    """The graph input `node` is a chain of views (or aliases: `alias`, `detach`) of, or None."""
    while node.op == "call_function" and (is_view(node.target) or node.target in NEW_OBJECT_ALIASES):
        node = node.args[0]
    return node if node.op == "placeholder" else None
