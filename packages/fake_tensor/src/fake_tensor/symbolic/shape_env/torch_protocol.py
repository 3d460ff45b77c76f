"""The methods torch's own Python shape code calls on a shape env, by torch's names.

torch._refs and torch._decomp call helpers such as `guard_or_false(a)` and
`statically_known_true(a)` from torch.fx.experimental.symbolic_shapes; those reach through
`a.node.shape_env` to these methods.
"""

from __future__ import annotations

import sympy

from fake_tensor.symbolic.shape_env.symbols import is_constant
from fake_tensor.symbolic.sym_node import SymNode
from fake_tensor.symbolic.value_ranges import ValueRange


class TorchShapeProtocol:
    """ShapeEnv's side of torch's shape-env protocol (a mixin over ShapeEnv's questions)."""

    def evaluate_sym_node(self, node: SymNode, size_oblivious: bool = False, fallback_value=None):
        if node.hint is None and node.constant is None:
            # guard_or_false/true pass their default as `fallback_value`: answer it, no guard.
            answer = self.maybe_decide_without_hint(node.expr, size_oblivious=size_oblivious)
            if answer is not None:
                return answer
            if fallback_value is not None:
                return fallback_value
            return self.decide_without_hint(node.expr, size_oblivious=size_oblivious)
        return node.guard_bool() if node.pytype is bool else node.guard_int()

    def _maybe_evaluate_static(self, expr: sympy.Basic, **_):
        simplified = self.simplify(expr)
        return simplified if is_constant(simplified) else None

    def bound_sympy(self, expr: sympy.Basic, **_) -> ValueRange:
        return self.bound(expr)

    def optimization_hint(self, expr: sympy.Basic, fallback=None):
        return self.size_hint(expr)
