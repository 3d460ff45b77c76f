"""Training outputs that view a tensor the graph made, which the functional graph returns as
its own values: handed back so that writes into them after the call work as in eager.

Autograd refuses in-place ops on a view an autograd.Function returns ("Output 0 of
_CompiledFunction is a view and is being modified inplace"), where eager allows them (HF
wav2vec2 zeroes padded frames of its feature projection, a 3-d `nn.Linear` whose result views
its matmul). As torch.compile does:

- a lone view (no other output shares its storage) is returned detached, a plain tensor over
  the same storage and version counter (runtime/training.py): nothing else sees a write
  through it;
- outputs with gradients sharing one base that is not an output (`t = x * 2; return t[:2],
  t[1:]`, or a view beside a detached alias of its base) are rebuilt after the Function as
  views of that base, which the training graph returns after the outputs (torch.compile's
  `alias_of_intermediate`): a write through one shows in the other's values and autograd
  history, and the base's gradient sums theirs. Outputs that all come from one multi-output
  view op (`unbind`, `split`) need no base: eager refuses writes into them;
- an output whose base is another output the graph returns as its own value is rebuilt as a
  view of that output (a view of a factory's tensor written in place: the trace lifts the
  factory's result as a detached alias, so functionalization does not see the view's root).

A view whose place in its base is symbolic gets that place computed from each call's inputs
(a small FX graph over their sizes, as the trace's expressions say), since the graph's own
value of it need not share the base's memory (inductor lays such outputs out on their own at
symbolic sizes). Where no input carries a size it needs (a data-dependent size), the output is
left as the Function returns it, a view: autograd refuses writes into it, rather than
gradients going wrong.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import torch
import torch.fx as fx

from .errors import UnsupportedProgramError
from .functionalization import OutputAlias, view_geometry
from .runtime import GraphEffects
from .tracing.symbolic import SymbolicValues

_MULTI_OUTPUT_VIEW = torch._C._autograd.CreationMeta.MULTI_OUTPUT_NODE


@dataclass(frozen=True)
class IntermediateBases:
    # Output positions viewing each base, in the order the graph returns the bases.
    groups: tuple[tuple[int, ...], ...]
    # (output position, how it is rebuilt)
    aliases: tuple[tuple[int, OutputAlias], ...]
    # Outputs left as the views the Function returns.
    kept_views: frozenset[int]

    @staticmethod
    def of(inputs: Sequence[Any], outputs: Sequence[Any], effects: GraphEffects) -> IntermediateBases:
        """Read off the traced `outputs` of fake `inputs`; `effects` rebuilds no other alias
        of them."""
        own = {id(output): j for j, (output, alias) in enumerate(zip(outputs, effects.output_aliases))
               if alias is None and isinstance(output, torch.Tensor)}
        kept = set(effects.kept_views)  # views returned as computed (functionalization/output_histories.py)
        storages = Counter(_storage(o) for o in outputs if isinstance(o, torch.Tensor))
        by_base: dict[int, list[int]] = {}
        aliases = []
        for j in own.values():
            base = outputs[j]._base
            if base is None or j in kept:
                continue
            if id(base) in own:
                alias = _view_alias(inputs, outputs[j], base, "output", own[id(base)])
                if alias is None:
                    kept.add(j)
                else:
                    aliases.append((j, alias))
            elif _views_a_tensor_with_gradient(outputs[j]) and storages[_storage(base)] > 1:
                by_base.setdefault(id(base), []).append(j)
        groups = []
        for group in by_base.values():
            if all(_from_multi_output_view(outputs[j]) for j in group):
                continue
            rebuilt = [_view_alias(inputs, outputs[j], outputs[j]._base, "intermediate", len(groups)) for j in group]
            if None in rebuilt:
                kept.update(group)
                continue
            aliases += zip(group, rebuilt)
            groups.append(tuple(group))
        return IntermediateBases(tuple(groups), tuple(aliases), frozenset(kept))

    def bases(self, outputs: Sequence[Any]) -> list[torch.Tensor]:
        """The bases, in a trace whose outputs are `outputs`."""
        return [outputs[group[0]]._base for group in self.groups]

    def returned_by(self, fn: Callable[..., list]) -> Callable[..., list]:
        """`fn` returning the bases after its outputs."""
        if not self.groups:
            return fn

        def with_bases(*inputs) -> list:
            outputs = fn(*inputs)
            return [*outputs, *self.bases(outputs)]

        return with_bases

    def rebuilding(self, effects: GraphEffects) -> GraphEffects:
        """`effects` rebuilding these outputs as views, and keeping the views it cannot."""
        if not self.aliases and not self.kept_views:
            return effects
        aliases = list(effects.output_aliases)
        for j, alias in self.aliases:
            aliases[j] = alias
        return replace(effects, output_aliases=aliases, kept_views=self.kept_views)


def reading_geometry_of_written_inputs_views(effects: GraphEffects, inputs: Sequence[Any], outputs: Sequence[Any],
                                            traced_inputs: Sequence[Any]) -> GraphEffects:
    """`effects` computing the symbolic place of each output viewing an input the graph writes
    in place from the call's inputs (`OutputAlias.geometry_at`). The epilogue otherwise reads
    it off the graph's own value of the view, which shares the new value's memory only where
    the graph computes the view from it: a training graph computes `x[1:].mul_(w)`'s view on
    its own, and the compile failed at the first new size."""
    aliases, changed = list(effects.output_aliases), False
    for j, alias in enumerate(aliases):
        if (alias is None or alias.of != "input" or alias.geometry is not None or alias.geometry_at is not None
                or alias.index not in effects.mutated_inputs):
            continue
        geometry_at = _geometry_reader(inputs, outputs[j], traced_inputs[alias.index])
        if geometry_at is not None:
            aliases[j], changed = replace(alias, geometry_at=geometry_at), True
    return replace(effects, output_aliases=aliases) if changed else effects


def _view_alias(inputs: Sequence[Any], view: torch.Tensor, base: torch.Tensor, of: str, index: int) -> OutputAlias | None:
    geometry, dtype = view_geometry(view, base)
    geometry_at = None
    if geometry is None:
        geometry_at = _geometry_reader(inputs, view, base)
        if geometry_at is None:
            return None
    return OutputAlias(of, index, False, geometry, dtype, geometry_at=geometry_at)


def _geometry_reader(inputs: Sequence[Any], view: torch.Tensor, base: torch.Tensor) -> Callable | None:
    """`OutputAlias.geometry_at` for a `view` of `base` with a symbolic geometry: a graph
    computing it, and `base`'s strides, from the sizes of the inputs; None if it needs a size
    no input carries."""
    graph = fx.Graph()
    symbols = SymbolicValues(graph)
    for index, value in enumerate(inputs):
        node = graph.placeholder(f"input_{index}")
        node.meta["val"] = value
        symbols.bind_input(node, value)
    base_offset = base.storage_offset() * base.element_size() // view.element_size()
    values = [*view.shape, *view.stride(), view.storage_offset() - base_offset, *base.stride()]
    try:
        graph.output([symbols.node_for(v) if isinstance(v, torch.SymInt) else v for v in values])
    except UnsupportedProgramError:
        return None
    compute = fx.GraphModule(torch.nn.Module(), graph)
    rank = view.dim()

    def geometry_at(call_inputs: Sequence[Any], runtime_base: torch.Tensor) -> tuple | None:
        values = compute(*call_inputs)
        if tuple(values[2 * rank + 1 :]) != runtime_base.stride():
            return None  # the compiler laid the base out otherwise than eager
        return tuple(values[:rank]), tuple(values[rank : 2 * rank]), values[2 * rank]

    return geometry_at


def _views_a_tensor_with_gradient(output: torch.Tensor) -> bool:
    return output.requires_grad and output._base.requires_grad


def _storage(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage()._cdata


def _from_multi_output_view(output: torch.Tensor) -> bool:
    return torch._C._autograd._get_creation_meta(output) == _MULTI_OUTPUT_VIEW
