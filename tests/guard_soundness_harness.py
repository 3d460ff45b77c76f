"""The differential harness of the guard-soundness tests: a compiled function must notice every
change of the state it read between calls (recompile, or run something that reads the new
state), never silently reuse an entry built for the old state.

A `Case` is a function built from a fresh state (`make(state)`), the changes applied to that
state between calls (`mutations`), and what to compare besides the results (`observe`). A
scenario calls the function twice (fresh inputs each time: the first call, then the cache
hit), then for each mutation applies it and calls twice again. It runs once eagerly and once
compiled, each on its own state built by `setup()` (which also resets any module globals the
case uses), with the same random inputs; every call's result, the arguments afterwards and
`observe(state)` must agree. An exception must be of the same type in both runs.

Run as a script for the reference table (ours and torch.compile, eager backend):
    python tests/guard_soundness_harness.py
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import os
import sys
import types
import zlib
from collections.abc import Callable
from typing import Any

import torch

FULL = os.environ.get("GUARD_SOUNDNESS_FULL") == "1"


def _fresh_tensor(state: Any, call: int) -> tuple:
    return (torch.randn(3),)


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[Any], Callable]  # the function to compile, reading `state`
    mutations: tuple[Callable[[Any], None], ...]
    setup: Callable[[], Any] = lambda: None  # a fresh state; resets the globals it uses
    args: Callable[[Any, int], tuple] = _fresh_tensor  # fresh inputs for call number `call`
    observe: Callable[[Any], Any] = lambda state: None  # state to compare after each call
    # The context each call runs in (a mutation cannot leave a `with` block open).
    context: Callable[[Any], Any] = lambda state: contextlib.nullcontext()
    # Backends beyond "eager" that CI runs it on (all three under GUARD_SOUNDNESS_FULL=1).
    backends: tuple[str, ...] = ()
    # Backends that cannot run it at all (said why where the case is made).
    unsupported: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.name


def case(name: str, make, *mutations, **options) -> Case:
    return Case(name, make, tuple(mutations), **options)


def backends_of(case: Case) -> list[str]:
    chosen = ["eager", "aot_eager", "inductor"] if FULL else ["eager", *case.backends]
    return [backend for backend in chosen if backend not in case.unsupported]


# ---------------------------------------------------------------------------------------------
# Running a scenario.


def set_cudnn_allow_tf32(value: bool) -> None:
    """cudnn's flag, also where torch.testing's common_utils (imported by the op_db tests that
    may share this pytest worker) has called torch.backends.disable_global_flags(), after which
    only this context manager lets it change."""
    with torch.backends.__allow_nonbracketed_mutation():
        torch.backends.cudnn.allow_tf32 = value


@contextlib.contextmanager
def torch_state_restored():
    """Puts back every piece of torch's global state a mutation may change, so one case cannot
    skew the next."""
    saved = (
        torch.is_grad_enabled(),
        torch.get_default_dtype(),
        torch.get_default_device(),
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
        torch.get_float32_matmul_precision(),
        torch.is_autocast_enabled("cpu"),
        torch.get_autocast_dtype("cpu"),
    )
    try:
        yield
    finally:
        grad, dtype, device, deterministic, warn_only, tf32, cudnn_tf32, precision, autocast, autocast_dtype = saved
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)
        torch.set_default_device(None if device == torch.device("cpu") else device)
        torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
        torch.backends.cuda.matmul.allow_tf32 = tf32
        set_cudnn_allow_tf32(cudnn_tf32)
        torch.set_float32_matmul_precision(precision)
        torch.set_autocast_enabled("cpu", autocast)
        torch.set_autocast_dtype("cpu", autocast_dtype)


def compile_with(fn: Callable, impl: str, backend: str) -> Callable:
    if impl == "ours":
        import compiler

        compiler.reset()
        return compiler.compile(fn, backend=backend)
    import torch._dynamo

    torch._dynamo.reset()
    return torch.compile(fn, backend=backend)


def run_scenario(case: Case, compile_fn: Callable | None) -> list:
    """Every call's (result, arguments after it, observed state); `compile_fn` None runs eagerly."""
    with torch_state_restored():
        state = case.setup()
        fn = case.make(state)
        if compile_fn is not None:
            fn = compile_fn(fn)
        record = []
        for step, mutation in enumerate((None, *case.mutations)):
            if mutation is not None:
                mutation(state)
            for repeat in range(2):
                call = 2 * step + repeat
                torch.manual_seed(zlib.crc32(f"{case.name}/{call}".encode()))
                args = case.args(state, call)
                try:
                    with case.context(state):
                        out = ("returned", fn(*args))
                except Exception as exc:  # noqa: BLE001 - the exception type is compared
                    out = ("raised", type(exc))
                record.append((f"call {call} (after mutation {step})" if step else f"call {call}", out, args, case.observe(state)))
        return record


def check_case(case: Case, impl: str = "ours", backend: str = "eager") -> None:
    expected = run_scenario(case, None)
    actual = run_scenario(case, lambda fn: compile_with(fn, impl, backend))
    for (where, *got), (_, *want) in zip(actual, expected):
        assert_same(got, want, where)


# ---------------------------------------------------------------------------------------------
# Comparing.


def assert_same(actual: Any, expected: Any, path: str, seen: set | None = None) -> None:
    seen = set() if seen is None else seen
    if id(expected) in seen:
        return
    seen.add(id(expected))
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"{path}: expected a tensor, got {actual!r:.80}"
        assert type(actual) is type(expected), f"{path}: {type(actual).__name__} != {type(expected).__name__}"
        for attr in ("dtype", "shape", "requires_grad", "device"):
            assert getattr(actual, attr) == getattr(expected, attr), f"{path}.{attr}: {getattr(actual, attr)} != {getattr(expected, attr)}"
        # A stale entry is off by far more; fused kernels round otherwise (a batch norm's sums).
        torch.testing.assert_close(actual.detach(), expected.detach(), atol=1e-4, rtol=1e-4, equal_nan=True, msg=lambda m: f"{path}: {m}")
        if expected.is_leaf and (expected.grad is not None or actual.grad is not None):
            assert_same(actual.grad, expected.grad, f"{path}.grad", seen)
        return
    assert type(actual) is type(expected), f"{path}: {type(actual).__name__} != {type(expected).__name__} ({actual!r:.60} vs {expected!r:.60})"
    if isinstance(expected, torch.nn.Module):
        assert_same(dict(actual.state_dict(keep_vars=True)), dict(expected.state_dict(keep_vars=True)), f"{path}.state_dict", seen)
        assert actual.training == expected.training, f"{path}.training"
        plain = lambda m: {k: v for k, v in vars(m).items() if not k.startswith("_")}  # noqa: E731
        assert_same(plain(actual), plain(expected), f"{path}.__dict__", seen)
    elif isinstance(expected, dict):
        assert_same(list(actual.keys()), list(expected.keys()), f"{path}.keys()", seen)
        for key, (a, e) in enumerate(zip(actual.values(), expected.values())):
            assert_same(a, e, f"{path}[{list(expected)[key]!r}]", seen)
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected), f"{path}: length {len(actual)} != {len(expected)}"
        for index, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{path}[{index}]", seen)
    elif isinstance(expected, functools.partial):
        assert_same((actual.func, actual.args, actual.keywords), (expected.func, expected.args, expected.keywords), f"{path}(partial)", seen)
    elif isinstance(expected, types.MethodType):
        assert_same(actual.__func__, expected.__func__, f"{path}.__func__", seen)
        assert type(actual.__self__) is type(expected.__self__), f"{path}.__self__: {type(actual.__self__)} != {type(expected.__self__)}"
    elif isinstance(expected, types.FunctionType):
        # Each run makes its own (a lambda a mutation stores): the same code is the same function.
        assert actual.__code__ is expected.__code__, f"{path}: {actual!r} runs other code than {expected!r}"
    elif isinstance(expected, float):
        same = (math.isnan(actual) and math.isnan(expected)) or (actual == expected and math.copysign(1, actual) == math.copysign(1, expected))
        assert same, f"{path}: {actual!r} != {expected!r}"
    elif hasattr(expected, "__dict__") and not isinstance(expected, type) and not callable(expected):
        assert_same(vars(actual), vars(expected), f"{path}.__dict__", seen)
    else:
        assert actual == expected, f"{path}: {actual!r:.80} != {expected!r:.80}"


# ---------------------------------------------------------------------------------------------
# The reference table: which cases torch.compile gets wrong too (informational).


def outcome(case: Case, impl: str, backend: str) -> str:
    try:
        check_case(case, impl, backend)
    except AssertionError as exc:
        return "wrong: " + str(exc).splitlines()[0][:150]
    except Exception as exc:  # noqa: BLE001 - a crash is reported, not raised
        return f"error: {type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"
    return "pass"


def main() -> None:
    import importlib
    import pathlib

    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    cases = []
    for path in sorted(pathlib.Path(__file__).parent.glob("test_guard_soundness*.py")):
        cases += importlib.import_module(path.stem).CASES
    wrong = {"ours": 0, "torch": 0}
    for c in cases:
        results = {impl: outcome(c, impl, "eager") for impl in ("ours", "torch")}
        for impl, result in results.items():
            wrong[impl] += result != "pass"
        if any(r != "pass" for r in results.values()):
            print(f"{c.name}:\n  ours:  {results['ours']}\n  torch: {results['torch']}")
    print(f"{len(cases)} cases; not passing: ours {wrong['ours']}, torch.compile {wrong['torch']}")


if __name__ == "__main__":
    main()
