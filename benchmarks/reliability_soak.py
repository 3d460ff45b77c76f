"""Reliability soak: the CI tests' adverse conditions (tests/test_reliability_*.py,
tests/test_threads.py, tests/test_disk_cache_faults.py), run for longer and at random.
Each scenario reports its runs and failures as one JSON line; the exit code is 1 if any
scenario saw a wrong result, an unexpected error or a hang.

    threads     threads calling shared compiled functions and modules (graph breaks, new
                sizes, grad modes) beside threads that compile afresh, reset every cache
                or have their backend fail mid-compile
    interrupts  KeyboardInterrupt raised inside a cold compile, at a random call of our own code
                or (as a signal can) at a random entry or exit of any context manager, torch's
                and the standard library's locks included; then nothing may hang, the same
                function must compile and match eager, and no global state (grad mode,
                is_compiling, dispatch modes) may be left changed
    processes   forked processes sharing one cache folder, one SIGKILLed at a random moment;
                a later process must find the cache whole (no damaged entry reported)
    kills       a process SIGKILLed at a random one of its file-system writes (before or after
                it: tests/cache_processes.py counts them) in a cold cache folder; the next
                process must find no damaged entry and match eager
    wipes       the cache folder deleted at random while a process compiles; compiles may fail
                while it happens (reported, not counted), none after

    python benchmarks/reliability_soak.py                       # about 2 minutes a scenario
    python benchmarks/reliability_soak.py --minutes 10 --only threads --backend aot_eager
    python benchmarks/reliability_soak.py --only threads --backend inductor-triton   # Triton's interpreter
"""

from __future__ import annotations

import argparse
import faulthandler
import functools
import importlib.util
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import warnings

# Run as a script, this folder comes first on sys.path, and benchmarks/guards.py would shadow
# the `guards` package that capture imports.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import torch  # noqa: E402
from torch import nn  # noqa: E402

os.environ.setdefault("PTC_INDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="ptc_reliability_soak_"))
import compiler  # noqa: E402
import capture.session  # noqa: E402

HANG_S = 300


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(6, 6), nn.Linear(6, 3)

    def forward(self, x):
        h = torch.tanh(self.a(x))
        if h.mean() > 0:  # data-dependent: a graph break
            h = h + 1
        return self.b(h).softmax(-1)


def layer(x, k: int):
    y = torch.cos(x) * k
    if y.sum() > 0:
        y = y + 1
    return (y - y.mean(0)).abs().amax(-1), x.shape[0]


def _compile(fn, backend: str):
    """`compiler.compile(fn, backend=backend)`; "inductor-triton": inductor's Triton kernels,
    run on CPU tensors by Triton's interpreter (whose state is global: launches from threads)."""
    if backend == "inductor-triton":
        return compiler.compile(fn, backend="inductor", options={"cpu_backend": "triton"})
    return compiler.compile(fn, backend=backend)


def _same(actual, expected) -> None:
    if isinstance(expected, tuple):
        torch.testing.assert_close(actual[0], expected[0], rtol=1e-4, atol=1e-4)
        assert actual[1:] == expected[1:]
    else:
        torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)


class BackendFailed(Exception):
    pass


def threads(seconds: float, backend: str, rng: random.Random) -> dict:
    torch.manual_seed(0)
    net = Net()
    shared_net, shared_layer = _compile(net, backend), _compile(layer, backend)

    def flaky(gm, example_inputs):
        if random.random() < 0.3:
            raise BackendFailed("a backend failing mid-compile")
        return gm.forward

    failures, calls, deadline = [], [0], time.monotonic() + seconds

    def work(seed: int) -> None:
        r = random.Random(seed)
        while time.monotonic() < deadline:
            # (No `with compiler.set_stance(...)` here: blocks entered and left by several threads at
            # once can leave the stance of the one left last for good, as torch's can.)
            op, n = r.choice(["net", "net", "layer", "layer", "fresh", "reset", "flaky"]), r.choice([2, 3, 5, 8, 13])
            try:
                if op == "net":
                    x = torch.randn(n, 6, requires_grad=r.random() < 0.5)
                    with torch.no_grad() if r.random() < 0.3 else torch.enable_grad():
                        _same(shared_net(x), net(x))
                elif op == "layer":
                    x, k = torch.randn(n, 4), r.choice([1, 2, 3])
                    _same(shared_layer(x, k), layer(x, k))
                elif op == "fresh":
                    x = torch.randn(n, 6)
                    _same(_compile(net, backend)(x), net(x))
                elif op == "reset":
                    compiler.reset()
                else:
                    x = torch.randn(n, 4)
                    try:
                        _same(compiler.compile(layer, backend=flaky)(x, 2), layer(x, 2))
                    except BackendFailed:
                        pass
                calls[0] += 1
            except Exception:  # noqa: BLE001  (reported)
                failures.append(f"{op}: {traceback.format_exc()[-1500:]}")

    workers = [threading.Thread(target=work, args=(rng.random(),), daemon=True) for _ in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(seconds + HANG_S)
    return {"calls": calls[0], "failures": len(failures), "hung_threads": sum(w.is_alive() for w in workers),
            "first_failure": failures[0] if failures else None}


def _global_state() -> dict:
    return {
        "is_compiling": torch.compiler.is_compiling(), "capturing": capture.session.capturing_on_this_thread(),
        "grad": torch.is_grad_enabled(), "autocast": torch.is_autocast_enabled("cpu"),
        "dispatch_modes": len(torch.utils._python_dispatch._get_current_dispatch_mode_stack()),
        "function_modes": torch._C._len_torch_function_stack(),
        "tls_include": str(torch._C._dispatch_tls_local_include_set()),
        "tls_exclude": str(torch._C._dispatch_tls_local_exclude_set()),
    }


class _InterruptAt:
    """A trace function raising KeyboardInterrupt at the `at`-th call of our packages' code."""

    PACKAGES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "packages")

    def __init__(self, at: int):
        self.at, self.calls, self.where = at, 0, None

    def counts(self, code, event: str) -> bool:
        return event == "call" and code.co_filename.startswith(self.PACKAGES)

    def __call__(self, frame, event, arg):
        if self.counts(frame.f_code, event):
            self.calls += 1
            if self.calls == self.at:
                sys.settrace(None)
                self.where = f"{event} {frame.f_code.co_filename.split('/')[-1]}:{frame.f_lineno} {frame.f_code.co_name}"
                raise KeyboardInterrupt(self.where)
        if event != "call":
            return self
        # Return events reach only a frame's local trace function: given where they count.
        return self if self.counts(frame.f_code, "return") else None


class _InterruptInContextManager(_InterruptAt):
    """Raising KeyboardInterrupt at the `at`-th entry or exit of a context manager anywhere (or
    of a contextlib or threading function): where a signal's exception leaves a mode pushed or
    a lock held (CPython's bpo-29988), which our own code must survive."""

    def counts(self, code, event: str) -> bool:
        return event in ("call", "return") and (
            code.co_name in ("__enter__", "__exit__") or code.co_filename.endswith(("contextlib.py", "threading.py")))


def interrupts(seconds: float, backend: str, rng: random.Random) -> dict:
    torch.manual_seed(0)
    net = Net()

    def run(x):
        return net(x).sum(-1) + layer(x[:, :4], 2)[0]

    def compile_and_call(interrupt=None):
        os.environ["PTC_INDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="ptc_soak_interrupts_")  # a cold compile
        compiler.reset()
        compiled = _compile(run, backend)
        sys.settrace(interrupt)
        try:
            x = torch.randn(5, 6, requires_grad=True)
            _same(compiled(x), run(x))
        finally:
            sys.settrace(None)
        return compiled

    totals = {}
    for kind in (_InterruptAt, _InterruptInContextManager):
        counting = kind(at=-1)
        compile_and_call(counting)
        totals[kind] = counting.calls
    baseline = _global_state()
    if totals[_InterruptAt] < 2:
        raise RuntimeError(f"a cold compile made {totals[_InterruptAt]} calls into our packages: nothing compiled")
    trials, failures, turned, deadline = 0, [], [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        trials += 1
        kind = rng.choice(list(totals))
        interrupt = kind(rng.randrange(1, totals[kind]))
        compiled = None
        # A hang (a lock left held) dumps every thread's stack and fails the soak.
        faulthandler.dump_traceback_later(HANG_S, exit=True)
        try:
            compiled = compile_and_call(interrupt)
        except KeyboardInterrupt:
            pass
        except Exception as error:  # noqa: BLE001  (counted: torch's own cleanup failing on what the interrupt left)
            if not isinstance(error.__context__, KeyboardInterrupt):
                raise
            turned.append(f"at {interrupt.where}: {type(error).__name__}: {error}"[:500])
        try:
            if _global_state() != baseline:
                raise AssertionError(f"state left changed: {_global_state()} != {baseline}")
            if compiled is None:  # interrupted: the same function compiles and runs again
                compiled = _compile(run, backend)
            for n, grad in ((5, True), (5, False), (9, True)):
                x = torch.randn(n, 6, requires_grad=grad)
                _same(compiled(x), run(x))
        except Exception:  # noqa: BLE001  (reported)
            failures.append(f"after an interrupt at {interrupt.where}: {traceback.format_exc()[-1500:]}")
        finally:
            faulthandler.cancel_dump_traceback_later()
    return {"sites_in_a_cold_compile": {kind.__name__: total for kind, total in totals.items()}, "trials": trials,
            "interrupts_raised_as_other_errors": len(turned), "first_other_error": turned[0] if turned else None,
            "failures": len(failures), "first_failure": failures[0] if failures else None}


def _workload(k: float):
    def fn(x, y):
        return torch.sigmoid(x * y + k).sum(-1) + (x @ y.T).relu().mean(), torch.exp(y) - x * k
    return fn


@functools.lru_cache(maxsize=None)
def _cache_processes():
    """tests/cache_processes.py, which counts a process's file-system writes (`_count_writes`)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "cache_processes.py")
    spec = importlib.util.spec_from_file_location("cache_processes", path)
    module = sys.modules["cache_processes"] = importlib.util.module_from_spec(spec)  # its dataclass looks itself up
    spec.loader.exec_module(module)
    return module


def _child(folder: str, ks: list, write_fd: int, kill_at: int | None) -> None:
    """Reports "ok" (then " writes=<n>" when counting them), "wrong", or what was raised or warned."""
    os.environ["PTC_INDUCTOR_CACHE_DIR"] = folder
    writes = _cache_processes()._count_writes(kill_at) if kill_at is not None else None
    ok = True
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for k in ks:
                fn = _workload(k)
                compiled = compiler.compile(fn, backend="inductor")
                for n in (5, 6, 9):
                    x, y = torch.randn(n, 7), torch.randn(n, 7)
                    ok &= all(torch.allclose(a, e, atol=1e-5) for a, e in zip(compiled(x, y), fn(x, y)))
        # An entry is written whole or not at all: no process ever finds a damaged one.
        damaged = [str(w.message) for w in caught if "damaged" in str(w.message)]
        if damaged:
            ok = False
            os.write(write_fd, damaged[0][:1500].encode() + b"\n")
    except Exception:  # noqa: BLE001  (reported)
        ok = False
        os.write(write_fd, traceback.format_exc()[-1500:].encode())
    os.write(write_fd, (b"ok" if ok else b"wrong") + (f" writes={writes[0]}".encode() if writes else b""))
    os._exit(0)


def _fork(folder: str, ks: list, kill_at: int | None = None) -> tuple[int, int]:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(folder, ks, write_fd, kill_at)
    os.close(write_fd)
    return pid, read_fd


def _collect(pid: int, read_fd: int) -> str:
    chunks = []
    while chunk := os.read(read_fd, 65536):
        chunks.append(chunk)
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return b"".join(chunks).decode() if code == 0 else f"exit {code}"


def processes(seconds: float, backend: str, rng: random.Random) -> dict:
    """Forks before any kernel ran in this process (an OpenMP pool does not survive a fork)."""
    folder = tempfile.mkdtemp(prefix="ptc_soak_processes_")
    rounds, killed, failures, deadline = 0, 0, [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        rounds += 1
        new = round(rng.uniform(2, 3), 3)
        children = [_fork(folder, [1.0, 2.0]) for _ in range(2)] + [_fork(folder, [new, 1.0]) for _ in range(2)]
        victim = rng.randrange(len(children))
        time.sleep(rng.uniform(0.2, 4.0))
        os.kill(children[victim][0], signal.SIGKILL)
        for i, child in enumerate(children):
            outcome = _collect(*child)
            killed += outcome == f"exit {-signal.SIGKILL}"
            if outcome != "ok" and not (i == victim and outcome == f"exit {-signal.SIGKILL}"):
                failures.append(f"round {rounds}, child {i}: {outcome}")
        after = _collect(*_fork(folder, [1.0, 2.0, new]))
        if after != "ok":
            failures.append(f"round {rounds}, the process after: {after}")
    shutil.rmtree(folder, ignore_errors=True)
    return {"rounds": rounds, "killed_mid_run": killed, "failures": len(failures),
            "first_failure": failures[0] if failures else None}


def kills(seconds: float, backend: str, rng: random.Random) -> dict:
    """Forks before any kernel ran in this process, as `processes`."""
    folder = tempfile.mkdtemp(prefix="ptc_soak_kills_")
    _cache_processes()  # imported once, before the forks
    counted = _collect(*_fork(os.path.join(folder, "counted"), [1.0, 2.0], kill_at=0))
    if not counted.startswith("ok writes="):
        raise RuntimeError(f"the counting run failed: {counted}")
    total = int(counted.split("writes=")[1])
    rounds, failures, deadline = 0, [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        rounds += 1
        site = rng.randrange(1, total + 1)
        cold = os.path.join(folder, f"site_{site}")
        killed = _collect(*_fork(cold, [1.0, 2.0], kill_at=site))
        if killed != f"exit {-signal.SIGKILL}":
            failures.append(f"site {site}: the run to be killed ended otherwise: {killed}")
        after = _collect(*_fork(cold, [1.0, 2.0]))
        if after != "ok":
            failures.append(f"site {site}: the process after: {after}")
        shutil.rmtree(cold, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)
    return {"write_sites": total, "rounds": rounds, "failures": len(failures),
            "first_failure": failures[0] if failures else None}


def wipes(seconds: float, backend: str, rng: random.Random) -> dict:
    folder = tempfile.mkdtemp(prefix="ptc_soak_wipes_")
    os.environ["PTC_INDUCTOR_CACHE_DIR"] = folder
    stop = threading.Event()

    def wipe():
        while not stop.wait(rng.uniform(1.0, 3.0)):
            shutil.rmtree(folder, ignore_errors=True)

    wiper = threading.Thread(target=wipe, daemon=True)
    wiper.start()
    during, failed_during, deadline = 0, 0, time.monotonic() + seconds
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while time.monotonic() < deadline:
            during += 1
            fn = _workload(rng.choice([0.25, 0.5, 0.75, 1.25]))
            try:
                n = rng.choice([5, 9])
                x, y = torch.randn(n, 7), torch.randn(n, 7)
                for a, e in zip(compiler.compile(fn, backend="inductor")(x, y), fn(x, y)):
                    torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)
            except Exception:  # noqa: BLE001  (transient while the folder vanishes)
                failed_during += 1
        stop.set()
        wiper.join()
        failures = []
        for k in (0.25, 0.5, 0.75, 1.25, 3.5):
            fn = _workload(k)
            try:
                x, y = torch.randn(5, 7), torch.randn(5, 7)
                for a, e in zip(compiler.compile(fn, backend="inductor")(x, y), fn(x, y)):
                    torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)
            except Exception:  # noqa: BLE001  (reported)
                failures.append(traceback.format_exc()[-1500:])
    shutil.rmtree(folder, ignore_errors=True)
    return {"compiles_during_wipes": during, "failed_during_wipes": failed_during, "failures": len(failures),
            "first_failure": failures[0] if failures else None}


SCENARIOS = {"processes": processes, "kills": kills, "threads": threads, "interrupts": interrupts, "wipes": wipes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=2.0, help="per scenario")
    parser.add_argument("--only", choices=sorted(SCENARIOS), action="append")
    parser.add_argument("--backend", default="inductor", help="for threads and interrupts (or inductor-triton)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.backend == "inductor-triton":
        os.environ.setdefault("TRITON_INTERPRET", "1")  # read when triton is imported (at the first compile)
    bad = False
    # processes and kills first: they fork, which must happen before this process runs any kernel.
    for name in args.only or list(SCENARIOS):
        start = time.monotonic()
        result = SCENARIOS[name](args.minutes * 60, args.backend, random.Random(args.seed))
        bad |= bool(result["failures"] or result.get("hung_threads"))
        print(json.dumps({"scenario": name, "backend": args.backend, "seconds": round(time.monotonic() - start),
                          **result}), flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
