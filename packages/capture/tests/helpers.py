"""Shared checks of the capture tests: compile with the eager backend, compare with eager on
fresh inputs, and count cache entries (captures)."""

from __future__ import annotations

import collections
import dataclasses
import math

import capture
import torch


def compile_eager(fn, **options):
    return capture.optimize(fn, capture.backends.eager, **options)


def cache_of(compiled) -> capture.runtime.CodeCache:
    return compiled._cache if isinstance(compiled, capture.OptimizedModule) else compiled._capture_cache


def captures(compiled) -> int:
    """How many entries (captures) the compiled function's cache holds."""
    return len(cache_of(compiled).entries)


def graph_of(compiled, index: int = -1) -> torch.fx.GraphModule:
    return cache_of(compiled).entries[index].graph_module


def assert_same(actual, expected, path="result"):
    """Equal structure, equal constants, tensors close with equal dtype/shape/requires_grad."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"{path}: expected a tensor, got {type(actual).__name__}"
        torch.testing.assert_close(actual, expected, equal_nan=True, msg=lambda m: f"{path}: {m}")
        assert actual.requires_grad == expected.requires_grad, f"{path}: requires_grad differs"
        return
    assert type(actual) is type(expected), f"{path}: {type(actual).__name__} != {type(expected).__name__}"
    if isinstance(expected, dict):
        # Keys compared like values: tensors (hashed by identity) may be keys.
        assert_same(list(actual.keys()), list(expected.keys()), f"{path}.keys()")
        for index, (value, expected_value) in enumerate(zip(actual.values(), expected.values())):
            assert_same(value, expected_value, f"{path}.values()[{index}]")
    elif isinstance(expected, (list, tuple, collections.deque)):
        assert len(actual) == len(expected), f"{path}: length {len(actual)} != {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{path}[{i}]")
    elif dataclasses.is_dataclass(expected):
        for field in dataclasses.fields(expected):
            assert_same(getattr(actual, field.name), getattr(expected, field.name), f"{path}.{field.name}")
    elif isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(actual), f"{path}: {actual!r} is not nan"
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


def check(fn, make_args, *, calls: int = 2, **options):
    """Compile `fn`; on `calls` fresh argument sets from `make_args()` (a tuple, or (args,
    kwargs)) compare with eager; every call after the first must hit the cache. Returns the
    compiled function."""
    compiled = compile_eager(fn, **options)
    for _ in range(calls):
        run_and_compare(compiled, fn, make_args())
    assert captures(compiled) == 1, f"expected one capture, got {captures(compiled)}"
    return compiled


def run_and_compare(compiled, fn, arguments):
    args, kwargs = arguments if _is_args_kwargs(arguments) else (arguments, {})
    eager_args, eager_kwargs = clone_inputs((args, kwargs))
    expected = fn(*eager_args, **eager_kwargs)
    actual = compiled(*args, **kwargs)
    assert_same(actual, expected)
    assert_same(list(args), list(eager_args), "arguments after the call")
    return actual


def clone_inputs(obj, memo=None):
    """Copies of the tensors, with their Python attributes (and of the lists/dicts holding
    them); other objects are shared. A tensor reached twice (a dict key that is also an
    argument) is copied once."""
    memo = {} if memo is None else memo
    if isinstance(obj, torch.Tensor):
        if id(obj) not in memo:
            copy = obj.detach().clone().requires_grad_(obj.requires_grad) if obj.is_leaf else obj.clone()
            copy.__dict__.update(obj.__dict__)
            memo[id(obj)] = copy
        return memo[id(obj)]
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return type(obj)(clone_inputs(x, memo) for x in obj)
    if type(obj) is dict:
        return {clone_inputs(k, memo): clone_inputs(v, memo) for k, v in obj.items()}
    return obj


def _is_args_kwargs(arguments) -> bool:
    return isinstance(arguments, tuple) and len(arguments) == 2 and isinstance(arguments[1], dict) and isinstance(arguments[0], tuple)


def check_across_sizes(fn, make_args, sizes=(4, 4, 7), **options):
    """Compile `fn` (fullgraph=True unless told otherwise) and compare it with eager on fresh
    arguments `make_args(size)` for each size: the first call captures, a second of the same
    size hits the cache, each new size captures once more. Every capture is one graph handed
    to the backend (no graph breaks). Returns the compiled function."""
    options.setdefault("fullgraph", True)
    compiled = compile_eager(fn, **options)
    for size in sizes:
        run_and_compare(compiled, fn, make_args(size))
    distinct = len(dict.fromkeys(sizes))
    assert captures(compiled) == distinct, f"expected {distinct} captures, got {captures(compiled)}"
    compilation = cache_of(compiled).compilation
    assert not compilation.breaks, [str(b) for b in compilation.breaks]
    assert len(compilation.graphs) <= distinct
    return compiled
