"""Runs a conformance case compiled and eagerly, and says how the compiled run compares.

A column is (implementation, backend, fullgraph): implementation "ours" is
`compiler.compile`, "torch" is `torch.compile` (the reference). Each case is called three
times (size n, size n again with fresh values: the cache hit, then another size) on inputs
built twice from the same seed, one copy for eager and one for the compiled function. Compared:
return values (types, tensor values and dtypes), the inputs afterwards (mutations of tensors,
containers, objects and module state), the global state afterwards (grad mode, autocast,
default dtype; put back after each call so that one case cannot skew the next), the grads of
every input leaf for `train` cases (every output that requires grad backpropagated with a
random cotangent; the inputs compared again afterwards, for hooks that write to them), and the
exception type where eager raises. An iterator or generator handed back is compared by what is
left to iterate of it (items, and the exception that ends it early).

Outcomes: "pass"; "wrong" (a different value, dtype, mutation or grad, or no exception where
eager raised one: never acceptable); "refused" (the compiler declined: an Unsupported error,
under fullgraph=True for instance); "error" (the compiled run raised something else eager did
not, or a different exception type); "timeout".
"""

from __future__ import annotations

import collections.abc
import contextlib
import io
import math
import random
import signal
import time
import warnings
import zlib
from dataclasses import dataclass, field

import numpy as np
import torch
from corpus import Case

OUTCOMES = ("pass", "wrong", "refused", "error", "timeout")
CASE_TIMEOUT_S = 20


@dataclass(frozen=True)
class Column:
    impl: str  # "ours" | "torch"
    backend: str  # "eager" | "aot_eager" | "inductor"
    fullgraph: bool

    @property
    def label(self) -> str:
        return f"{self.impl}/{self.backend}/{'fullgraph' if self.fullgraph else 'breaks'}"


@dataclass
class Result:
    case: str
    source: str
    column: str
    outcome: str
    reason: str = ""  # the first line of what went wrong
    graphs_first_call: int = 0  # graphs compiled by the first call
    graphs: int = 0  # graphs compiled over all three calls
    ops: int = 0  # op nodes in those graphs
    seconds: float = 0.0
    details: dict = field(default_factory=dict)


class Mismatch(AssertionError):
    """The compiled run differs from eager (a wrong result)."""


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so the code under test does not swallow it."""


# ---------------------------------------------------------------------------------------------
# Compiling through one column, with a backend that counts graphs and ops.


def counting_backend(inner, stats: dict):
    def backend(gm, example_inputs):
        stats["graphs"] += 1
        stats["ops"] += sum(node.op in ("call_function", "call_method", "call_module") for node in gm.graph.nodes)
        return inner(gm, example_inputs)

    return backend


def compile_with(column: Column, fn, stats: dict):
    if column.impl == "ours":
        import compiler

        compiler.reset()
        inner = compiler.lookup_backend(column.backend)
        return compiler.compile(fn, backend=counting_backend(inner, stats), fullgraph=column.fullgraph)
    import logging

    import torch._dynamo

    # torch.compile logs the fake-tensor errors it then raises; the report records them.
    logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)
    torch._dynamo.reset()
    inner = torch._dynamo.lookup_backend(column.backend)
    return torch.compile(fn, backend=counting_backend(inner, stats), fullgraph=column.fullgraph)


def is_refusal(exc: BaseException) -> bool:
    """The compiler declined to compile, with its documented error (capture.Unsupported,
    torch._dynamo's Unsupported/UserError), as opposed to crashing or raising something else."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"Unsupported", "UserError"})


# ---------------------------------------------------------------------------------------------
# Comparing eager with compiled.


def seed_everything(seed: int) -> None:
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)


def compare(actual, expected, path: str, case: Case, seen: set) -> None:
    if id(expected) in seen:
        return
    if isinstance(expected, (list, dict, set, tuple)) or hasattr(expected, "__dict__"):
        seen.add(id(expected))
    where = path or "result"
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            raise Mismatch(f"{where}: expected a tensor, got {type(actual).__name__}")
        if actual.dtype != expected.dtype:
            raise Mismatch(f"{where}: dtype {actual.dtype} != {expected.dtype}")
        if actual.shape != expected.shape:
            raise Mismatch(f"{where}: shape {tuple(actual.shape)} != {tuple(expected.shape)}")
        if actual.requires_grad != expected.requires_grad:
            raise Mismatch(f"{where}: requires_grad {actual.requires_grad} != {expected.requires_grad}")
        if case.exact_rng:
            try:
                torch.testing.assert_close(actual.detach(), expected.detach(), atol=case.atol, rtol=case.rtol, equal_nan=True)
            except AssertionError as exc:
                raise Mismatch(f"{where}: values differ ({str(exc).splitlines()[0]})") from None
        # Python attributes set on the tensor (`t.tag = ...`), which a compiled call must set too;
        # private ones are compilers' bookkeeping (torch.compile marks parameters it saw).
        public = lambda t: {k: v for k, v in vars(t).items() if not k.startswith("_")}
        if public(actual) or public(expected):
            compare(public(actual), public(expected), f"{where}.__dict__", case, seen)
        return
    if isinstance(expected, torch.nn.Module):
        # torch.nn.utils.parametrize gives each module a class of its own (ParametrizedLinear).
        if _module_class(actual) is not _module_class(expected):
            raise Mismatch(f"{where}: type {type(actual).__name__} != {type(expected).__name__}")
        compare(dict(actual.state_dict(keep_vars=True)), dict(expected.state_dict(keep_vars=True)), f"{where}.state", case, seen)
        plain = lambda m: {k: v for k, v in vars(m).items() if not k.startswith("_") and k != "training"}
        compare(plain(actual), plain(expected), f"{where}.__dict__", case, seen)
        return
    if type(actual) is not type(expected):
        raise Mismatch(f"{where}: type {type(actual).__name__} != {type(expected).__name__} ({actual!r:.60} vs {expected!r:.60})")
    if isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise Mismatch(f"{where}: length {len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            compare(a, e, f"{where}[{i}]", case, seen)
        if hasattr(expected, "__dict__"):
            compare(vars(actual), vars(expected), f"{where}.__dict__", case, seen)
        return
    if isinstance(expected, dict):
        if list(actual.keys()) != list(expected.keys()):
            raise Mismatch(f"{where}: keys {list(actual.keys())!r:.80} != {list(expected.keys())!r:.80}")
        for key in expected:
            compare(actual[key], expected[key], f"{where}[{key!r}]", case, seen)
        if hasattr(expected, "default_factory") and actual.default_factory != expected.default_factory:
            raise Mismatch(f"{where}: default_factory differs")
        return
    if isinstance(expected, float):
        if not (actual == expected or (math.isnan(actual) and math.isnan(expected)) or math.isclose(actual, expected, rel_tol=1e-6, abs_tol=case.atol)):
            raise Mismatch(f"{where}: {actual!r} != {expected!r}")
        return
    if isinstance(expected, (int, bool, str, bytes, complex, type(None), range, slice, set, frozenset, torch.dtype, torch.device)):
        if actual != expected:
            raise Mismatch(f"{where}: {actual!r:.80} != {expected!r:.80}")
        return
    if isinstance(expected, np.ndarray):
        if actual.dtype != expected.dtype or actual.shape != expected.shape or not np.allclose(actual, expected, equal_nan=True, atol=case.atol):
            raise Mismatch(f"{where}: arrays differ")
        return
    if isinstance(expected, np.generic):
        if not np.allclose(actual, expected, equal_nan=True):
            raise Mismatch(f"{where}: {actual!r} != {expected!r}")
        return
    if hasattr(expected, "__dict__") and not callable(expected):
        compare(vars(actual), vars(expected), f"{where}.__dict__", case, seen)
        return
    if isinstance(expected, collections.abc.Iterator):
        # A generator or iterator handed back (half consumed, say): what is left of it.
        compare(_remaining(actual), _remaining(expected), f"{where} (what is left to iterate)", case, seen)
        return
    # Functions and other opaque objects: the type is all we compare.


def _remaining(iterator, limit: int = 1000) -> tuple:
    """(items left, up to `limit`, and the name of the exception type that ended the iteration
    early), so that a generator raising where eager's does not is a mismatch."""
    items = []
    try:
        for item in iterator:
            items.append(item)
            if len(items) == limit:
                break
    except Exception as exc:  # noqa: BLE001  (compared with eager's)
        return items, type(exc).__name__
    return items, None


def _module_class(module) -> type:
    cls = type(module)
    return cls.__bases__[0] if getattr(module, "parametrizations", None) is not None else cls


def leaves(obj, found: list, seen: set) -> list:
    """Tensors that receive .grad: leaf tensors requiring grad in `obj`, parameters of modules."""
    if id(obj) in seen:
        return found
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        if obj.requires_grad and obj.is_leaf:
            found.append(obj)
    elif isinstance(obj, torch.nn.Module):
        found.extend(obj.parameters())
    elif isinstance(obj, (list, tuple, set)):
        for item in obj:
            leaves(item, found, seen)
    elif isinstance(obj, dict):
        for item in obj.values():
            leaves(item, found, seen)
    elif hasattr(obj, "__dict__") and not callable(obj):
        leaves(vars(obj), found, seen)
    return found


def float_outputs(obj, found: list) -> list:
    if isinstance(obj, torch.Tensor):
        if obj.requires_grad:
            found.append(obj)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            float_outputs(item, found)
    elif isinstance(obj, dict):
        for item in obj.values():
            float_outputs(item, found)
    return found


def global_state() -> dict:
    """The global state a call may leave changed: a compiled call must leave it as eager does
    (Python's `random` module included: the draws a compiled call makes must be eager's)."""
    return {
        "random module state": random.getstate(),
        "grad mode": torch.is_grad_enabled(),
        "inference mode": torch.is_inference_mode_enabled(),
        "autocast (cpu)": (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")),
        "default dtype": torch.get_default_dtype(),
    }


def restore_global_state(state: dict) -> None:
    torch._C._set_grad_enabled(state["grad mode"])
    torch.set_autocast_enabled("cpu", state["autocast (cpu)"][0])
    torch.set_autocast_dtype("cpu", state["autocast (cpu)"][1])
    torch.set_default_dtype(state["default dtype"])


def user_warnings(recorded) -> list:
    """The warnings the case's own code issued (its file is `<conformance …>`; capture's entry,
    `<capture …>`, would be a warning attributed to the wrong place), as eager shows them under
    the default filter: once per location."""
    return [(m.category.__name__, str(m.message), m.filename, m.lineno) for m in recorded
            if m.filename.startswith(("<conformance", "<capture entry"))]


def call(fn, args, seed: int):
    """(result, exception, global state afterwards) of fn(*args), with the RNGs seeded and
    printed output swallowed; the global state is put back as it was before the call. The
    state includes the warnings the case issued."""
    seed_everything(seed)
    before = global_state()
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("default")
        try:
            result, exc = fn(*args), None
        except _Timeout:
            raise
        except Exception as error:  # noqa: BLE001  (compared with eager's)
            result, exc = None, error
        finally:
            state = global_state()
            restore_global_state(before)
    state["warnings"] = user_warnings(recorded)
    return result, exc, state


def backward(result, seed: int) -> None:
    """Backpropagates every output that requires grad, each with a random cotangent drawn from
    `seed` (the same for eager and compiled): with ones, a backward that drops or misplaces
    grad_output (a custom Function's, a hook's) would go unnoticed."""
    outputs = float_outputs(result, [])
    if outputs:
        generator = torch.Generator().manual_seed(seed)
        cotangents = [torch.randn(out.shape, generator=generator, dtype=out.dtype, device=out.device) for out in outputs]
        torch.autograd.backward(outputs, cotangents)


def check_call(case: Case, compiled, size: int, seed: int) -> None:
    """One call: raises Mismatch for a wrong result, returns the compiled exception (refusal or
    error) or None."""
    seed_everything(seed)
    expected_args = case.make_args(size)
    seed_everything(seed)
    actual_args = case.make_args(size)
    expected, expected_exc, expected_state = call(case.fn, expected_args, seed + 1)
    actual, actual_exc, actual_state = call(compiled, actual_args, seed + 1)
    if expected_exc is not None:
        if actual_exc is None:
            raise Mismatch(f"eager raised {type(expected_exc).__name__}: {str(expected_exc)[:80]}, compiled returned {actual!r:.80}")
        if type(actual_exc) is not type(expected_exc):
            return actual_exc
    elif actual_exc is not None:
        return actual_exc
    else:
        compare(actual, expected, "result", case, set())
    # Only where both ran to the same end: a refusal may stop the compiled call half-way.
    for what, value in expected_state.items():
        if actual_state[what] != value:
            raise Mismatch(f"{what} after the call: {actual_state[what]!r:.150} != {value!r:.150}")
    compare(actual_args, expected_args, "inputs", case, set())
    if case.train and expected_exc is None:
        backward(expected, seed + 2)
        backward(actual, seed + 2)
        grads_expected = [leaf.grad for leaf in leaves(expected_args, [], set())]
        grads_actual = [leaf.grad for leaf in leaves(actual_args, [], set())]
        compare(grads_actual, grads_expected, "grads", case, set())
        # Hooks run during backward may write to the inputs (a list of grad norms, a counter on
        # a module): compared again once backward has run.
        compare(actual_args, expected_args, "inputs after backward", case, set())
    return None


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:200]


def run_case(case: Case, column: Column, timeout_s: int = CASE_TIMEOUT_S) -> Result:
    stats = {"graphs": 0, "ops": 0}
    result = Result(case.name, case.source, column.label, "pass")
    base_seed = zlib.crc32(case.name.encode()) % 100_000
    start = time.perf_counter()

    def on_alarm(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(timeout_s)
    try:
        compiled = compile_with(column, case.fn, stats)
        sizes = (case.sizes[0], case.sizes[0], case.sizes[1])
        for index, size in enumerate(sizes):
            problem = check_call(case, compiled, size, base_seed + 10 * index)
            if index == 0:
                result.graphs_first_call = stats["graphs"]
            if problem is not None:
                result.outcome = "refused" if is_refusal(problem) else "error"
                result.reason = first_line(problem)
                result.details["call"] = index + 1
                break
    except Mismatch as exc:
        result.outcome = "wrong"
        result.reason = str(exc)[:300]
    except _Timeout:
        result.outcome = "timeout"
        result.reason = f"over {timeout_s} s"
    except Exception as exc:  # noqa: BLE001  (the harness records it: compile-time crash)
        result.outcome = "refused" if is_refusal(exc) else "error"
        result.reason = first_line(exc)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    result.graphs = stats["graphs"]
    result.ops = stats["ops"]
    result.seconds = time.perf_counter() - start
    return result


# ---------------------------------------------------------------------------------------------
# Running many (case, column) pairs in worker processes. A case that times out or kills its
# process can leave the compiler's global state broken (a fake mode left active, say), which
# would make every later case in that process fail for the wrong reason; so the worker stops
# after a timeout and the parent starts a fresh one on the remaining pairs.


def _warm_up(columns) -> None:
    """Compile and run a one-line function on each column once, outside any case's alarm: a
    fresh process's first compile imports the backend's modules (seconds on a busy machine),
    which would time the first case out, and a timeout restarts the process, whose next first
    case would time out in turn."""
    for column in columns:
        compile_with(column, lambda x: x.sin() + 1, {"graphs": 0, "ops": 0})(torch.randn(3))


def _worker(job_path: str, out_path: str) -> int:
    import json
    import os
    from dataclasses import asdict

    from corpus import all_cases

    with open(job_path) as f:
        job = json.load(f)
    by_name = {case.name: case for case in all_cases()}
    parent = os.getppid()
    _warm_up({Column(**column) for _, column in job["pairs"]})
    with open(out_path, "a") as out:
        for name, column in job["pairs"]:
            if os.getppid() != parent:
                return 1  # the parent is gone (killed, or a test run stopped): stop too
            result = run_case(by_name[name], Column(**column), job["timeout_s"])
            out.write(json.dumps(asdict(result)) + "\n")
            out.flush()
            if result.outcome == "timeout":
                return 3
    return 0


def run_pairs(pairs: list[tuple[Case, Column]], *, workers: int = 1, timeout_s: int = CASE_TIMEOUT_S, progress=None) -> list[Result]:
    """Results of every (case, column) pair, computed in `workers` fresh processes (restarted
    after a timeout or a crash), in the order given."""
    import json
    import os
    import subprocess
    import sys
    import tempfile
    from dataclasses import asdict

    chunks = [pairs[i::workers] for i in range(workers)]
    done: dict[tuple[str, str], Result] = {}
    with tempfile.TemporaryDirectory(prefix="conformance-") as tmp:
        pending = {i: list(chunk) for i, chunk in enumerate(chunks) if chunk}
        running: dict[int, tuple] = {}
        while pending or running:
            for i in list(pending):
                if i in running:
                    continue
                todo = pending.pop(i)
                job = os.path.join(tmp, f"job{i}.json")
                out = os.path.join(tmp, f"out{i}.jsonl")
                with open(job, "w") as f:
                    json.dump({"timeout_s": timeout_s, "pairs": [(c.name, asdict(col)) for c, col in todo]}, f)
                open(out, "w").close()
                proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", job, out],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                running[i] = (proc, todo, out, 0, time.monotonic())
            for i, (proc, todo, out, seen, last) in list(running.items()):
                rc = proc.poll()  # before reading: once it has exited, its file is complete
                with open(out) as f:
                    # Only whole lines: the worker may be half-way through writing the next one.
                    lines = f.read().split("\n")[:-1]
                for line in lines[seen:]:
                    result = Result(**json.loads(line))
                    done[(result.case, result.column)] = result
                    if progress:
                        progress(result)
                if len(lines) > seen:
                    last = time.monotonic()
                stuck = rc is None and time.monotonic() - last > timeout_s + 60
                if stuck:
                    proc.kill()
                    proc.wait()
                    rc = -9
                if rc is None:
                    running[i] = (proc, todo, out, len(lines), last)
                    continue
                del running[i]
                remaining = todo[len(lines):]
                if rc not in (0, 3) and remaining:
                    # The process died (or hung past its alarm) on the next pair: record it, skip it.
                    case, column = remaining.pop(0)
                    outcome = "timeout" if stuck else "error"
                    reason = "hung past its alarm" if stuck else f"worker process died (exit status {rc})"
                    done[(case.name, column.label)] = Result(case.name, case.source, column.label, outcome, reason)
                if remaining:
                    pending[i] = remaining
            time.sleep(0.05)
    return [done[(case.name, column.label)] for case, column in pairs]


if __name__ == "__main__":
    import os
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if sys.argv[1:2] == ["--worker"]:
        sys.exit(_worker(sys.argv[2], sys.argv[3]))
