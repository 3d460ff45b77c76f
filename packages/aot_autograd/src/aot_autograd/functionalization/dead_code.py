"""Dead-code removal that keeps the random stream as eager consumes it, and runtime checks.

A random op whose result is unused still advanced the generator in eager; dropping it
would shift every later random draw (dropout masks would differ from eager's). A runtime
assertion (`aten._assert_scalar`, what `torch._check` on a data-dependent value becomes; a
linalg op's check of its `info`) has no result anyone uses: it is there to fail.
"""

from __future__ import annotations

import torch
import torch.fx as fx


def consumes_randomness(node: fx.Node) -> bool:
    target = node.target
    return isinstance(target, torch._ops.OpOverload) and torch.Tag.nondeterministic_seeded in target.tags


# Ops that only check and raise. `_linalg_check_errors` is how linalg.cholesky, inv, solve...
# raise on a matrix they cannot factor (their `_ex` op returns `info`; this raises on it).
_CHECKS = frozenset({
    torch.ops.aten._assert_scalar.default,
    torch.ops.aten._assert_async.default,
    torch.ops.aten._assert_async.msg,
    torch.ops.aten._linalg_check_errors.default,
})


def asserts(node: fx.Node) -> bool:
    return node.target in _CHECKS


def remove_dead_code(graph: fx.Graph) -> None:
    for node in reversed(list(graph.nodes)):
        if node.op in ("placeholder", "output") or node.users or consumes_randomness(node) or asserts(node):
            continue
        graph.erase_node(node)
