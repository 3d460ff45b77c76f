"""What happens after a compiled forward ran: the effects the functional graph returned as
values are applied to the real tensors.

- Mutated inputs: the graph returned their new values first; they are copied into the real
  inputs, so that a BatchNorm's running stats or an argument written in place change as in
  eager.
- Inputs the compiled graph wrote in place itself (`written_in_graph`, see
  functionalization/writes_in_graph.py): only their version counters move, as eager's in-place
  ops move them (autograd checks them on saved tensors).
- Aliased outputs: an output that was a view of an input (or of another output, or of a
  base the training graph returns after the outputs: intermediate_bases.py) in eager is
  handed back as a view of the real tensor, with the geometry the trace recorded, so that it
  shares storage (and autograd history) as in eager; one made through `detach` is a view of
  the real tensor's detached alias, with no history, and never the input object itself.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from ..errors import UnsupportedProgramError
from ..functionalization import OutputAlias


@dataclass(frozen=True)
class GraphEffects:
    mutated_inputs: list[int]
    output_aliases: list[OutputAlias | None]
    written_in_graph: tuple[int, ...] = ()
    # Outputs (among the user's) viewing tensors the graph made that stay the views the
    # training Function returns, which refuse writes (intermediate_bases.py).
    kept_views: frozenset[int] = frozenset()

    @functools.cached_property
    def regenerated(self) -> tuple[int, ...]:
        """Positions (among all graph outputs) of the outputs rebuilt as views (or detached).
        Read at every call of a plan: worked out once (a decoder's 25 outputs took a list
        comprehension per call)."""
        first = len(self.mutated_inputs)
        return tuple(first + j for j, alias in enumerate(self.output_aliases) if alias is not None)

    @property
    def views_returned(self) -> frozenset[int]:
        """Positions (among all graph outputs) of `kept_views`."""
        first = len(self.mutated_inputs)
        return frozenset(first + j for j in self.kept_views)

    def apply(self, inputs: Sequence[Any], graph_outputs: Sequence[Any], raw: dict[int, Any]) -> list:
        """The user's outputs, after the mutations are copied into `inputs`.

        `raw` holds the graph's own value of each regenerated output, used for its geometry
        when the trace's was symbolic.
        """
        first = len(self.mutated_inputs)
        last = first + len(self.output_aliases)
        grad_enabled = torch.is_grad_enabled()
        # Copies that record no autograd history go in one foreach call: an optimizer step
        # writes every parameter and state tensor (hundreds of them).
        targets, values = [], []
        for index, value in zip(self.mutated_inputs, graph_outputs[:first]):
            if grad_enabled and value.requires_grad:
                inputs[index].copy_(value)
            else:
                targets.append(inputs[index])
                values.append(value)
        if targets:
            with torch.no_grad():
                torch._foreach_copy_(targets, values)
        if self.written_in_graph:
            torch.autograd.graph.increment_version([inputs[index] for index in self.written_in_graph])
        # After the outputs, a training graph returns the bases `of="intermediate"` aliases view.
        outputs, bases = list(graph_outputs[first:last]), graph_outputs[last:]
        for i in self.regenerated:
            j, alias = i - first, self.output_aliases[i - first]
            if alias.of == "self":
                outputs[j] = raw[i].detach()
            else:
                base = _base_of(alias, inputs, outputs, bases)
                written = None
                if alias.of == "input" and alias.index in self.mutated_inputs:
                    written = graph_outputs[self.mutated_inputs.index(alias.index)]
                outputs[j] = _view_of(base, alias, raw.get(i), written, inputs)
        return outputs


def _base_of(alias: OutputAlias, inputs: Sequence[Any], outputs: list, intermediate_bases: Sequence[Any]) -> torch.Tensor:
    if alias.of == "input":
        return inputs[alias.index]
    if alias.of == "output":
        return outputs[alias.index]
    return intermediate_bases[alias.index]


def _view_of(base: torch.Tensor, alias: OutputAlias, raw: torch.Tensor | None, written: torch.Tensor | None,
             inputs: Sequence[Any]) -> torch.Tensor:
    """The output `alias` describes, as a view of `base`. A symbolic geometry is computed from
    the call's `inputs` where the alias can, else read off `raw`, the graph's own value of the
    output: a view of `base` itself, or of `written`, the new value the graph returned for
    `base` (an input it writes in place), which the epilogue has just copied into `base`."""
    if alias.identity:
        return base
    if alias.detached:
        base = base.detach()
    geometry = alias.geometry
    if geometry is None and alias.geometry_at is not None:
        geometry = alias.geometry_at(inputs, base)
    if geometry is not None:
        size, stride, offset = geometry
    else:
        size, stride, offset = raw.size(), raw.stride(), _offset_from(base, raw, written)
    if alias.detached and alias.dtype == base.dtype and offset == 0 and base.shape == size and base.stride() == tuple(stride):
        return base  # `t.detach()` itself, not a view of it
    view = _view_with(base, alias.dtype, size, stride, offset)
    return view.detach() if alias.detached_last else view


def _view_with(base: torch.Tensor, dtype: torch.dtype, size, stride, offset: int) -> torch.Tensor:
    if dtype != base.dtype:
        return _reinterpreted(base, dtype, size, stride, offset)
    if 0 in stride and offset == 0 and _is_expand_of(base, size, stride):
        # An expanded view gets expand's backward (a sum, accumulated in float32 for bfloat16
        # gradients), as in eager; as_strided's backward adds the overlapping elements one by
        # one in the gradient's own dtype (bfloat16 broadcast gradients a few ulps off).
        return base.expand(size)
    return base.as_strided(size, stride, base.storage_offset() + offset)


def _offset_from(base: torch.Tensor, raw: torch.Tensor, written: torch.Tensor | None) -> int:
    """`raw`'s storage offset from `base`'s first element, in `raw`'s elements."""
    for reference in (base, written):
        if reference is None or not _shares_storage(raw, reference):
            continue
        if reference is base or (reference.shape == base.shape and reference.stride() == base.stride()):
            reference_offset = reference.storage_offset() * reference.element_size() // raw.element_size()
            return raw.storage_offset() - reference_offset
    raise UnsupportedProgramError(
        "returns a view of an input it also writes in place (or of another of its outputs), and "
        "the compiled graph's value of that view does not show where in that tensor it lies",
        "Return a clone of the view, or mark the dimensions static.",
    )


def _shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    # An empty view may have a storage of its own: its offset changes no element.
    return a.numel() == 0 or a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _is_expand_of(base: torch.Tensor, size, stride) -> bool:
    """Whether `base.expand(size)` has exactly these strides."""
    extra = len(size) - base.dim()
    if extra < 0:
        return False
    for i, (n, s) in enumerate(zip(size, stride)):
        if i < extra:
            if s != 0:
                return False
            continue
        own = base.size(i - extra)
        if own == n and (n == 1 or s == base.stride(i - extra)):
            continue
        if own != 1 or s != 0:
            return False
    return True


def _reinterpreted(base: torch.Tensor, dtype: torch.dtype, size, stride, offset: int) -> torch.Tensor:
    """The view of `base` as `dtype` with this geometry (`offset` in `dtype`'s elements, from
    `base`'s first element). Between a real and a complex dtype it goes through view_as_complex
    or view_as_real, which carry gradients as in eager (`Tensor.view(dtype)` does not)."""
    if dtype.is_complex and not base.dtype.is_complex and dtype.to_real() == base.dtype:
        real = base.as_strided((*size, 2), (*(2 * s for s in stride), 1), base.storage_offset() + 2 * offset)
        return torch.view_as_complex(real)
    if base.dtype.is_complex and not dtype.is_complex and base.dtype.to_real() == dtype:
        real = torch.view_as_real(base)
        return real.as_strided(size, stride, real.storage_offset() + offset)
    viewed = base.view(dtype)
    return viewed.as_strided(size, stride, viewed.storage_offset() + offset)
