"""Input-free subgraphs: values that depend on no graph input, evaluated once at compile time.

A node is constant when it is a `get_attr` tensor or a call in `FOLDABLE_FUNCTIONS` /
`FOLDABLE_METHODS` whose node arguments are all constant. The tables hold deterministic,
out-of-place ops only (factories, comparisons, logic, arithmetic, views, casts): evaluating one
early gives the value the graph would compute at run time, and consumes no random numbers.
A size read from an input (`x.size(1)`, a symbolic size) is not constant, so a mask built from
it is never folded.
"""

from __future__ import annotations

import operator

import torch
import torch.fx
from torch.utils._python_dispatch import _disable_current_modes

from .. import logs

log = logs.channel("inductor")

# Results larger than this are not materialized: an all-true mask for BERT-base at 32x512 is an
# expand of a 512-element tensor, a causal one a 512x512 comparison, both far below it.
MAX_CONSTANT_BYTES = 64 << 20

FOLDABLE_FUNCTIONS = {
    torch.arange, torch.ones, torch.zeros, torch.full, torch.eye, torch.tensor, torch.scalar_tensor,
    torch.ones_like, torch.zeros_like, torch.full_like,
    torch.tril, torch.triu, torch.where, torch.logical_and, torch.logical_or, torch.logical_not,
    torch.eq, torch.ne, torch.ge, torch.gt, torch.le, torch.lt,
    torch.add, torch.sub, torch.mul, torch.neg, torch.masked_fill,
    torch.unsqueeze, torch.reshape, torch.transpose, torch.permute, torch.broadcast_to,
    operator.add, operator.sub, operator.mul, operator.neg, operator.invert,
    operator.and_, operator.or_, operator.xor,
    operator.eq, operator.ne, operator.ge, operator.gt, operator.le, operator.lt,
    operator.getitem,
}

FOLDABLE_METHODS = {
    "expand", "expand_as", "view", "reshape", "unsqueeze", "squeeze", "transpose", "permute", "t",
    "contiguous", "clone", "to", "type", "bool", "float", "half", "bfloat16", "long", "int",
    "eq", "ne", "ge", "gt", "le", "lt", "logical_and", "logical_or", "logical_not",
    "add", "sub", "mul", "neg", "masked_fill", "tril", "triu", "where",
    "__and__", "__or__", "__xor__", "__invert__",
}


def _is_foldable_call(node: torch.fx.Node) -> bool:
    if node.op == "call_function":
        return node.target in FOLDABLE_FUNCTIONS
    return node.op == "call_method" and node.target in FOLDABLE_METHODS


def _fits(value) -> bool:
    """Small, and readable: a fake or meta tensor (a module built on the meta device) has no
    contents to decide anything from."""
    if isinstance(value, torch.Tensor):
        real = type(value) in (torch.Tensor, torch.nn.Parameter) and value.device.type != "meta"
        return real and value.untyped_storage().nbytes() <= MAX_CONSTANT_BYTES
    if isinstance(value, (tuple, list)):
        return all(_fits(v) for v in value)
    return isinstance(value, (bool, int, float, torch.dtype, torch.device, type(None), slice))


def _attribute(gm: torch.fx.GraphModule, target: str):
    value = gm
    for part in target.split("."):
        value = getattr(value, part)
    return value


class ConstantValues:
    """`values.get(node)`: the node's compile-time value, or None when it depends on an input (or
    on an op outside the tables, or is too large). Evaluated lazily and memoized.

    `get_attr` tensors count as constants: capture's graphs have none (parameters and buffers
    are inputs), a symbolic_trace graph stores there the tensors its tracer computed."""

    def __init__(self, gm: torch.fx.GraphModule):
        self.gm = gm
        self._memo: dict[torch.fx.Node, object] = {}
        self._unknown: set[torch.fx.Node] = set()

    def get(self, node: torch.fx.Node):
        if node in self._memo:
            return self._memo[node]
        if node in self._unknown:
            return None
        value = self._evaluate(node)
        if value is None:
            self._unknown.add(node)
        else:
            self._memo[node] = value
        return value

    def _evaluate(self, node: torch.fx.Node):
        if node.op == "get_attr":
            value = _attribute(self.gm, node.target)
            return value if isinstance(value, torch.Tensor) and _fits(value) else None
        if not _is_foldable_call(node):
            return None
        inputs = node.all_input_nodes
        known = [self.get(n) for n in inputs]
        if any(v is None for v in known):
            return None
        env = dict(zip(inputs, known))
        args = torch.fx.node.map_arg(node.args, env.__getitem__)
        kwargs = torch.fx.node.map_arg(node.kwargs, env.__getitem__)
        # The backend may be called while capture's fake mode is still installed: these values
        # must be real tensors, so that their contents can be inspected.
        try:
            with _disable_current_modes():
                if node.op == "call_method":
                    value = getattr(args[0], node.target)(*args[1:], **kwargs)
                else:
                    value = node.target(*args, **kwargs)
        except (RuntimeError, TypeError, ValueError, IndexError) as error:
            # The same call fails at run time too, where the user sees eager's error; here it
            # only means the value is not known.
            log.debug("inductor: constant %s not evaluated at compile time: %s", node.name, error)
            return None
        return value if _fits(value) else None
