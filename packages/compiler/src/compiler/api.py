"""`compile`, `reset` and the small torch.compiler functions: `is_compiling`,
`is_dynamo_compiling`, `is_exporting`, `mark_unbacked`, `cudagraph_mark_step_begin`."""

from __future__ import annotations

import functools
import inspect
import os
from typing import Callable

import capture
import torch

from .backends import get_default_backend, lookup_backend
from .report import profiled_for_process_report, reported, reporting_backend

def _accepts_keyword(fn: Callable, name: str) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a callable without a signature (a C function)
        return False
    return any((p.name == name and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)) or p.kind == p.VAR_KEYWORD
               for p in parameters)


def with_mode_and_options(backend: Callable, mode: str | None, options: dict | None) -> Callable:
    """`backend` with `mode=`/`options=` bound, for a backend that declares those keyword
    parameters (inductor's compile_fx does); checked now rather than at the first graph.

    As torch.compile: mode and options together are refused; a backend with a
    `parse_options(mode, options)` attribute has them validated by it (unknown modes or
    keys raise, naming the valid ones). Unlike torch.compile, which warns and drops them,
    passing them to a backend that takes none is a TypeError."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode in (None, "default") and not options:
        return backend
    name = getattr(backend, "__name__", repr(backend))
    given = {"mode": mode} if mode is not None else {"options": options}
    for keyword in given:
        if not _accepts_keyword(backend, keyword):
            raise TypeError(
                f"backend {name} takes no {keyword}= (only backends with a {keyword!r} parameter do, such as 'inductor')"
            )
    parse_options = getattr(backend, "parse_options", None)
    if parse_options is not None:
        parse_options(mode, options)
    return functools.partial(backend, **given)


def compile(
    model: Callable | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable | None = None,
    mode: str | None = None,
    options: dict | None = None,
    name: str | None = None,
    disable: bool = False,
    recompile_limit: int | None = None,
    isolate_recompiles: bool = False,
    report: str | os.PathLike | None = None,
):
    """Compile a function or nn.Module (same signature as torch.compile).

    Returns a compiled function, or for an nn.Module a module that keeps `state_dict`,
    attribute access and the original as `_orig_mod`. Used without `model` it is a decorator.
    The first call captures a graph and compiles it with `backend`; later calls with inputs
    that pass the same guards reuse it. Code capture cannot trace breaks the graph (it runs
    natively between two graphs; `compiler.explain` lists where and why); with
    `fullgraph=True` it raises `capture.Unsupported` naming the line instead. `dynamic=None`
    makes a size symbolic once it changes between calls; True/False: always/never. A Python
    int or float argument (such as the value of `.item()`, which breaks the graph as with
    torch.compile's default) is specialized on the first call; once it changes it is kept out
    of the graph, so new values do not recompile. Module instances of the same structure
    share compiled entries (their parameters are graph inputs).

    `backend=None` is the default backend (`set_default_backend`; "inductor" unless changed).
    `name` is accepted as torch.compile's is (its tools may show it on debug metadata); none of
    ours shows it yet. `recompile_limit`: entries per function of this compile call before its
    calls run eagerly (None: `config.recompile_limit`); with `fullgraph=True` reaching it raises
    capture.RecompileError (torch's FailOnRecompileLimitHit). `isolate_recompiles` is accepted:
    every compile call here keeps entries of its own already, as torch's does with it on.

    `report="path.html"` writes a one-file HTML compile report after every call
    (compiler.report); `COMPILER_REPORT=dir` writes one for the whole process;
    `COMPILER_REPORT_PROFILE=1` adds each generated kernel's time to either.
    """
    if model is None:
        return lambda fn: compile(
            fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options, name=name,
            disable=disable, recompile_limit=recompile_limit, isolate_recompiles=isolate_recompiles, report=report,
        )
    if disable:
        return model
    if recompile_limit is not None and (not isinstance(recompile_limit, int) or recompile_limit < 1):
        raise ValueError(f"recompile_limit must be a positive int or None, not {recompile_limit!r}")
    if backend is None:
        backend = get_default_backend()
    compiler_fn = with_mode_and_options(lookup_backend(backend), mode, options)
    backend_name = backend if isinstance(backend, str) else getattr(backend, "__name__", type(backend).__name__)
    compiled = capture.optimize(model, reporting_backend(compiler_fn, backend_name), fullgraph=fullgraph, dynamic=dynamic,
                                recompile_limit=recompile_limit)
    if isinstance(compiled, capture.OptimizedModule):
        # A copy (copy.deepcopy, pickle, torch.save) is compiled again as this one was.
        compiled.__dict__["_compile_again"] = functools.partial(
            compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options, name=name,
            recompile_limit=recompile_limit, report=report,
        )
    return profiled_for_process_report(compiled) if report is None else reported(compiled, report)


def reset() -> None:
    """Forget every compiled entry of every compiled function (their next call recaptures)."""
    capture.reset()


def is_compiling() -> bool:
    """True while capture traces the calling code (as torch.compiler.is_compiling())."""
    return torch.compiler.is_compiling()


def is_dynamo_compiling() -> bool:
    """True while capture traces the calling code, for `compile` or `export` (torch's is True
    while TorchDynamo traces; capture is what plays that part here)."""
    return torch.compiler.is_compiling()


def is_exporting() -> bool:
    """True while `capture.export` traces the calling code (as torch.compiler.is_exporting()
    under torch.export)."""
    return torch.compiler.is_exporting()


def mark_unbacked(t: torch.Tensor, index: int | list[int], *, strict: bool = False) -> None:
    """Trace `t`'s sizes at `index` as unbacked symbols (`u0`): no example value, so sizes 0
    and 1 do not specialize and no guard depends on them; branching on them breaks the graph
    (as torch.compiler.mark_unbacked). `strict` is accepted for torch's signature."""
    capture.mark_unbacked(t, index)


def cudagraph_mark_step_begin() -> None:
    """Nothing to do here, by design: torch's CUDA-graph trees hand out outputs that live in
    the graphs' memory, so a new step must be marked before they may be overwritten; the
    reduce-overhead runner here (inductor.runtime.cuda_graphs) returns copies of its outputs,
    which no later replay overwrites. Kept so that code written for torch.compile runs."""
