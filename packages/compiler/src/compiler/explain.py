"""`explain(fn)(*args, **kwargs)`: what compiling `fn` makes of one call, as a report.

It compiles `fn` afresh with the eager backend, calls it once, and collects what capture
recorded: each graph (with its operations and guards) and each graph break (the reason, the
user's stack, a hint, and whether a resume function took over or the function ran eagerly);
for a DistributedDataParallel module, how each graph was split at DDP's gradient buckets.
`print(explanation)` gives a short report; the fields are there for tests and tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import capture
import torch


@dataclass
class ExplainOutput:
    """What `explain` found: the graphs, their operations and guards, and each graph break."""

    graphs: list[torch.fx.GraphModule] = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)  # capture GraphBreak records
    ops_per_graph: list[list[str]] = field(default_factory=list)
    out_guards: list[Callable] = field(default_factory=list)  # guard functions; .source is Python
    compiled_functions: list[str] = field(default_factory=list)  # who each graph came from
    # For a DistributedDataParallel module: how each graph was split at DDP's gradient
    # buckets (capture.distributed.GraphSplit: `.buckets`, and `.pieces` the backend compiled).
    graph_splits: list = field(default_factory=list)

    @property
    def compiled_graph_count(self) -> int:
        """Graphs the backend compiled: the captured ones, after DDP bucket splits."""
        return self.graph_count - len(self.graph_splits) + sum(len(s.pieces) for s in self.graph_splits)

    def __str__(self) -> str:
        lines = [f"Graph count: {self.graph_count}", f"Graph break count: {self.graph_break_count}"]
        if self.break_reasons:
            lines.append("Break reasons:")
            for i, record in enumerate(self.break_reasons, 1):
                lines.append(f"  {i}. " + str(record).replace("\n", "\n     "))
        for i, (name, ops) in enumerate(zip(self.compiled_functions, self.ops_per_graph), 1):
            lines.append(f"Graph {i} ({name}): {len(ops)} ops: {', '.join(ops)}")
        if self.graph_splits:
            lines.append(f"Graphs compiled by the backend after DDP bucket splits: {self.compiled_graph_count}")
        for i, split in enumerate(self.graph_splits, 1):
            lines.append(f"DDP graph {i}: " + str(split).replace("\n", "\n  "))
        lines.append(f"Guards: {sum(len(g.guards) for g in self.out_guards)} in {len(self.out_guards)} guard functions")
        return "\n".join(lines)


def _op_name(node: torch.fx.Node) -> str:
    target = node.target
    return target if isinstance(target, str) else getattr(target, "__name__", str(target))


def explain(fn: Any, *, dynamic: bool | None = None) -> Callable[..., ExplainOutput]:
    """Returns a function that runs `fn(*args, **kwargs)` compiled and explains it."""

    def run(*args, **kwargs) -> ExplainOutput:
        compiled = capture.optimize(fn, capture.backends.eager, dynamic=dynamic)
        cache = compiled._cache if isinstance(compiled, capture.OptimizedModule) else compiled._capture_cache
        compiled(*args, **kwargs)
        compilation = cache.compilation
        graphs = [g.graph_module for g in compilation.graphs]
        return ExplainOutput(
            graphs=graphs,
            graph_count=len(graphs),
            graph_break_count=len(compilation.breaks),
            break_reasons=list(compilation.breaks),
            ops_per_graph=[
                [_op_name(n) for n in g.graph.nodes if n.op in ("call_function", "call_method") and not n.meta.get("effect")]
                for g in graphs
            ],
            out_guards=[g.guard for g in compilation.graphs],
            compiled_functions=[g.function for g in compilation.graphs],
            graph_splits=list(compilation.graph_splits),
        )

    return run
