"""`Compilation`: what one `optimize(...)` call shares among the caches it creates.

Compiling a function may create more compiled functions: resume functions (the code after a
graph break) and callees that run as their own frames (a call the outer graph could not
inline because the callee breaks). They all use the same backend and options, and what they
capture is recorded in one place: `graphs` (every graph handed to the backend), `breaks`
(every graph break, with its reason and the user's stack) and `graph_splits` (graphs split at
DDP's gradient buckets), which `compiler.explain` reports.
"""

from __future__ import annotations

import threading
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import torch

from .. import config
from ..distributed import GraphSplit, active_ddp, bucketing_backend
from .hooked_tensors import split_at_observed_tensor

if TYPE_CHECKING:
    from ..bytecode.resume import ResumeCode
    from ..errors import UserLocation
    from .cache import CodeCache


@dataclass
class CapturedGraph:
    function: str  # qualified name of the (resume) function it was captured from
    graph_module: torch.fx.GraphModule
    guard: Callable  # the entry's guard function (.source is readable Python)

    @property
    def op_count(self) -> int:
        return sum(1 for n in self.graph_module.graph.nodes if n.op in ("call_function", "call_method") and not n.meta.get("effect"))


@dataclass
class GraphBreak:
    function: str
    reason: str
    stack: list[UserLocation] = field(default_factory=list)  # outermost first
    hint: str | None = None
    # "resumed" (the graph so far ran, then the rest in a resume function), or "eager" (the
    # function runs eagerly: nothing before the break was worth a graph, or no resume
    # function could start there).
    outcome: str = "resumed"

    def __str__(self) -> str:
        where = "\n".join("  " + str(loc).replace("\n", "\n  ") for loc in self.stack)
        text = f"graph break in {self.function}: {self.reason}"
        if where:
            text += f"\n{where}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        if self.outcome == "eager":
            text += "\n  (the function runs eagerly from there)"
        return text


class Compilation:
    def __init__(self, backend: Callable, *, make_cache: Callable[..., CodeCache], dynamic: bool | None = None,
                 fullgraph: bool = False, recompile_limit: int | None = None):
        """`make_cache`: CodeCache (runtime/cache.py), handed in rather than imported: a cache
        compiles graph breaks, whose resume functions get caches from here. `recompile_limit`:
        entries per function of this compilation (None: capture.config.recompile_limit)."""
        self.backend = backend
        self._make_cache = make_cache
        self.dynamic = dynamic
        self.fullgraph = fullgraph
        self.recompile_limit = recompile_limit
        self.graphs: list[CapturedGraph] = []
        self.breaks: list[GraphBreak] = []
        # Graphs captured inside a DistributedDataParallel forward, split at its gradient
        # buckets (capture.distributed): one record per graph handed to the backend there.
        self.graph_splits: list[GraphSplit] = []
        self._callees: dict[types.FunctionType, CodeCache] = {}
        self._resumes: dict[tuple, CodeCache] = {}
        # Threads compiling functions of this compilation at once must agree on one cache per
        # callee and resume function.
        self._lock = threading.RLock()

    def compile_graph(self, graph_module: torch.fx.GraphModule, example_inputs: list) -> Callable:
        """The backend's compiled graph; inside a DDP forward, split at DDP's buckets; before
        a break that hooks a tensor the graph made, split after that tensor."""
        ddp = active_ddp()
        if ddp is None or not config.optimize_ddp:
            split = split_at_observed_tensor(graph_module, self.backend)
            return split if split is not None else self.backend(graph_module, example_inputs)
        return bucketing_backend(ddp, self.backend, self.graph_splits)(graph_module, example_inputs)

    def adopt(self, cache: CodeCache) -> None:
        """Make `cache` the one calls of its function use (the function the user compiled
        may also be reached as a callee, recursively)."""
        if cache.resume is None:
            self._callees.setdefault(cache.fn, cache)

    def cache(self, fn: types.FunctionType) -> CodeCache:
        """The cache of `fn` compiled as a frame of its own (a callee of compiled code)."""
        with self._lock:
            known = self._callees.get(fn)
            if known is None:
                known = self._callees[fn] = self._make_cache(fn, self)
            return known

    def resume_cache(self, original: types.FunctionType, resume: ResumeCode) -> CodeCache:
        """The cache of the resume function `resume` of `original` (whose globals and closure
        it shares)."""
        key = (original, resume.code)
        with self._lock:
            known = self._resumes.get(key)
            if known is None:
                name = f"{original.__name__}_resume_at_{resume.offset}"
                fn = types.FunctionType(resume.code, original.__globals__, name, None, original.__closure__)
                fn.__qualname__ = resume.code.co_qualname
                known = self._resumes[key] = self._make_cache(fn, self, resume=resume, original=original)
            return known
