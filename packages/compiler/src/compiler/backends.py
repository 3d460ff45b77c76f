"""The backend registry: names users pass as `backend=` and the callables behind them.

A backend is `backend(gm, example_inputs) -> callable` (torch.compile's custom-backend
contract). Built-in entries are resolved lazily, so importing `compiler` does not import
`inductor` until a graph is compiled with it.
"""

from __future__ import annotations

import importlib
from typing import Callable

from .errors import InvalidBackend

# name -> "module:attribute" of a built-in backend, or the registered callable.
_BUILTIN = {
    "eager": "capture.backends:eager",
    "aot_eager": "aot_autograd:aot_eager",
    "aot_eager_decomp_partition": "aot_autograd:aot_eager_decomp_partition",
    "inductor": "inductor:compile_fx",
}
_REGISTERED: dict[str, Callable] = {}
# What `compile` uses when no `backend=` is given (torch.compiler.set_default_backend).
_DEFAULT = "inductor"
_default: list = [_DEFAULT]


def set_default_backend(backend: str | Callable | None) -> None:
    """Make `backend` (a name or a callable) what `compile` uses when given no `backend=`;
    None restores "inductor". A name is checked when `compile` looks it up, as torch's is."""
    if backend is not None and not isinstance(backend, str) and not callable(backend):
        raise TypeError(f"backend must be a string or callable, got {type(backend)}")
    _default[0] = _DEFAULT if backend is None else backend


def get_default_backend() -> str | Callable:
    """The backend `compile` uses when given no `backend=` (initially "inductor")."""
    return _default[0]


def register_backend(compiler_fn: Callable | None = None, name: str | None = None):
    """Register `compiler_fn` under `name` (default: its `__name__`); usable as a decorator,
    with or without arguments. Returns `compiler_fn`."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name)
    key = name or compiler_fn.__name__
    if key in _BUILTIN or key in _REGISTERED:
        raise InvalidBackend(f"a backend named {key!r} is already registered")
    _REGISTERED[key] = compiler_fn
    return compiler_fn


def list_backends() -> list[str]:
    """Names of every available backend, sorted."""
    return sorted([*_BUILTIN, *_REGISTERED])


def lookup_backend(backend: str | Callable) -> Callable:
    """The callable for a backend name (or the callable itself)."""
    if callable(backend):
        return backend
    if backend in _REGISTERED:
        return _REGISTERED[backend]
    target = _BUILTIN.get(backend)
    if target is None:
        raise InvalidBackend(f"unknown backend {backend!r}; available: {', '.join(list_backends())}")
    module_name, attribute = target.split(":")
    return getattr(importlib.import_module(module_name), attribute)
