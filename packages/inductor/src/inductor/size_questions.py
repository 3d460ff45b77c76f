"""Questions code generation asks about symbolic sizes, answered through the graph's ShapeEnv.

A kernel over symbolic sizes may compute its indices in 32 bits when its extents stay below
2**31 (kernel.py's `_needs_int64_indices`). As torch.compile does (inductor's index dtype with
`guard_leq(numel, int_max)`), the answer comes from the example sizes and becomes a guard of
the capture entry: `s0 <= 2796202` bounds the symbol without specializing it, so every
smaller size reuses the compiled graph and a larger one recompiles (with 64-bit indices).

The guard is taken with the shape env's own question API (`evaluate`, which records what it
answered); capture adds the guards its backend took while compiling to the entry. A backward
compiled lazily (on the first `.backward()`) runs after the entry's guards were built: its
questions take no guard and are answered only where the ranges already decide them (the
forward's guards usually do, as it reads the same sizes).

Every question asked is remembered (`asked`), so that a graph taken from the on-disk cache
asks them again: its guards are recorded as on the first compile, and a graph compiled
under other answers is not reused (compile_fx.py).
"""

from __future__ import annotations

import sympy
import torch
import torch.fx
import torch.utils._pytree as pytree

from fake_tensor.symbolic import FloorDiv, PythonMod


class SizeQuestions:
    """`below(expr, limit)` for expressions over the graph's size symbols (inductor's or the
    shape env's: matched by name). `may_guard`: whether an answer may become a guard."""

    def __init__(self, shape_env=None, *, may_guard: bool = True):
        self.shape_env = shape_env
        self.may_guard = may_guard
        self.asked: list[tuple[str, int, bool]] = []

    @classmethod
    def of_graph(cls, gm: torch.fx.GraphModule, *, may_guard: bool = True) -> SizeQuestions:
        """The questions for `gm`, through the shape env of its inputs' symbolic sizes (none if
        its sizes are all static)."""
        for node in gm.graph.find_nodes(op="placeholder"):
            val = node.meta.get("val", node.meta.get("example_value"))
            values = [*val.shape, *val.stride()] if isinstance(val, torch.Tensor) else [val]
            for value in values:
                env = getattr(getattr(value, "node", None), "shape_env", None)
                if env is not None and hasattr(env, "evaluate"):
                    return cls(env, may_guard=may_guard)
        return cls(may_guard=may_guard)

    def below(self, expr, limit: int) -> bool:
        """Whether `expr < limit` wherever the compiled graph runs: decided by the ranges, or
        true at the example sizes and then guarded. False when it cannot be promised."""
        expr = sympy.expand(expr)
        if not expr.free_symbols:
            return bool(expr < limit)
        answer = self._answer(expr, limit)
        self.asked.append((str(expr), limit, answer))
        return answer

    def answers_again(self, asked: list) -> list[bool]:
        """The answers, now, to questions `asked` on an earlier compile (as `asked` records
        them), taking their guards again."""
        names = {"FloorDiv": FloorDiv, "PythonMod": PythonMod}
        return [self.below(sympy.parse_expr(text, local_dict=names), limit) for text, limit, _ in asked]

    def _answer(self, expr: sympy.Expr, limit: int) -> bool:
        env = self.shape_env
        if env is None:
            return False
        theirs = {s.name: s for s in (*env.hints, *env.unbacked)}
        if any(s.name not in theirs for s in expr.free_symbols):
            return False
        expr = expr.xreplace({s: theirs[s.name] for s in expr.free_symbols})
        condition = sympy.Lt(expr, limit)
        known = env.statically_known(condition)
        if known is not None:
            return known
        if not self.may_guard or not env.has_hint(expr) or env.size_hint(expr) >= limit:
            return False
        with env.attributing_to("inductor: 32-bit index arithmetic"):
            return bool(env.evaluate(condition))


def known_without_hints(node: torch.fx.Node | None, condition: sympy.Basic) -> bool | None:
    """True/False where the tracer's shape env proves `condition` (its ranges and the facts
    torch._check taught it; no guard), None where it does not or none is at hand. For
    conditions over data-dependent sizes, whose hints are guesses."""
    env = _shape_env_near(node)
    if env is None:
        return None
    theirs = {s.name: s for s in (*env.hints, *env.unbacked)}
    if any(s.name not in theirs for s in condition.free_symbols):
        return None
    return env.statically_known(condition.xreplace({s: theirs[s.name] for s in condition.free_symbols}))


def _shape_env_near(node: torch.fx.Node | None):
    """The tracer's shape env, through a symbolic value of `node` or of its arguments."""
    if node is None:
        return None
    nodes = [node, *(a for a in pytree.tree_leaves((node.args, node.kwargs)) if isinstance(a, torch.fx.Node))]
    for value in pytree.tree_leaves([n.meta.get("val") for n in nodes]):
        sizes = [*value.shape, value.storage_offset()] if isinstance(value, torch.Tensor) else [value]
        for size in sizes:
            env = getattr(getattr(size, "node", None), "shape_env", None)
            if env is not None and hasattr(env, "statically_known"):
                return env
    return None
