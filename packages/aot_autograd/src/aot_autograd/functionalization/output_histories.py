"""Outputs aliasing a graph input, another output or an intermediate whose autograd history
a view rebuilt after the graph would not have.

The epilogue hands back such an output as a view of the real tensor it aliases (as_strided,
expand, view_as_complex: runtime/epilogue.py), so it shares storage as in eager; its gradient
is then the view's, through the base's history. That is eager's history only when the trace's
output reached its base through view ops alone. It is not:

- through a custom autograd.Function returning its input or a view of it (`return x`,
  `return x[1:]`, not marked dirty): eager's output is a view of the input whose grad_fn is the
  Function's backward (x.grad 1 where eager's is 5, skipping a `g * 5` backward), or a view
  of such an output (`Identity.apply(x).view(-1)`); torch.compile's `custom_function_view`;
- where the output has no grad_fn and the view would have one, or the other way round: a
  Function marking its view of the input non-differentiable, a view taken under
  `torch.no_grad()`.

Those outputs are returned as the graph computes them, through the compiled autograd.Function
(whose backward is the joint graph's, the custom backward included), still views where the
graph's value views the input: autograd then refuses writes into them, as eager does for a
view a custom Function returns.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

from .functionalize import OutputAlias


def outputs_with_their_own_history(outputs: Sequence[Any], traced_inputs: Sequence[Any],
                                   aliases: Sequence[OutputAlias | None], grad_enabled: bool) -> frozenset[int]:
    """Positions among `outputs` (the trace's fakes, called with `traced_inputs`, in grad mode
    `grad_enabled`) of the aliasing outputs a rebuilt view would give another history.
    `aliases` are functionalization's; an output it leaves alone that views an intermediate
    (`_base`) is one intermediate_bases.py would rebuild."""
    own = set()
    for j, (output, alias) in enumerate(zip(outputs, aliases)):
        if not isinstance(output, torch.Tensor):
            continue
        if alias is None:
            base = output._base
        elif alias.of == "input":
            base = traced_inputs[alias.index]
        elif alias.of == "output":
            base = outputs[alias.index]
        else:  # "self": a detached view, with no history in eager either
            continue
        if base is None:
            continue
        if _through_custom_function(output, base) or (alias is not None and not alias.identity and _history_differs(
                output, base, alias, grad_enabled)):
            own.add(j)
    return frozenset(own)


def _history_differs(view: torch.Tensor, base: torch.Tensor, alias: OutputAlias, grad_enabled: bool) -> bool:
    """Whether `view` has a grad_fn where the view rebuilt (after the graph, in grad mode
    `grad_enabled`) would have none, or the other way round. (A traced input that requires
    grad is a non-leaf copy: its views have a grad_fn unless made under no_grad, or marked
    non-differentiable by a Function, whose output then requires grad without one.)"""
    rebuilt_has_history = grad_enabled and base.requires_grad and not alias.detached
    return (view.grad_fn is not None) != rebuilt_has_history


def _through_custom_function(view: torch.Tensor, base: torch.Tensor) -> bool:
    """Whether `view`'s history meets a custom autograd.Function's node before `base`'s.
    A view's grad_fn leads to its base's by each node's first edge (a view op has one input,
    and a view made after its base was written in place is regenerated from the base's
    current node); a Function returning an input it did not mark dirty gets its own node
    instead."""
    stop = base.grad_fn
    node = view.grad_fn
    while node is not None and node is not stop:
        if _is_custom_function_node(node):
            return True
        edges = node.next_functions
        node = edges[0][0] if edges else None
    return False


def _is_custom_function_node(node: Any) -> bool:
    # Python Functions' nodes subclass BackwardCFunction; C++ torch::autograd::Function's are CppFunction.
    return isinstance(node, torch.autograd.function.BackwardCFunction) or type(node).__name__ == "CppFunction"
