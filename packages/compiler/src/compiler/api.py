"""`compile`, `reset`, `is_compiling`: the torch.compile-shaped entry points."""

from __future__ import annotations

import functools
from typing import Any, Callable

import capture
import torch

from .backends import lookup_backend

DEFAULT_BACKEND = "inductor"


def _with_options(backend: Callable, backend_name: Any, mode: str | None, options: dict | None) -> Callable:
    """Bind `mode`/`options` for backends that take them (inductor); others get none."""
    if mode is None and not options:
        return backend
    if backend_name != "inductor":
        raise TypeError(f"mode= and options= are only understood by the inductor backend, not {backend_name!r}")
    return functools.partial(backend, mode=mode, options=options)


def compile(
    model: Callable | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable = DEFAULT_BACKEND,
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
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
    """
    if model is None:
        return lambda fn: compile(
            fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options, disable=disable
        )
    if disable:
        return model
    compiler_fn = _with_options(lookup_backend(backend), backend, mode, options)
    return capture.optimize(model, compiler_fn, fullgraph=fullgraph, dynamic=dynamic)


def reset() -> None:
    """Forget every compiled entry of every compiled function (their next call recaptures)."""
    capture.reset()


def is_compiling() -> bool:
    """True while capture traces the calling code (as torch.compiler.is_compiling())."""
    return torch.compiler.is_compiling()
