"""Fresh processes sharing an inductor cache folder, for tests of the on-disk cache.

Importing torch and the compiler costs seconds of CPU per process, so one server process
imports them once and forks a new process per run (before any kernel ran, so no OpenMP pool
is inherited). Each run is a whole process: it starts with empty in-memory caches, and a
damaged library mapped by it (SIGBUS) kills that run only. A run compiles `WORKLOAD` with the
inductor backend, calls it on fresh random inputs and compares with eager.

    with ProcessServer() as server:
        result = server.run(cache_folder)            # one process
        results = server.run_many(cache_folder, 3)   # three at once
        killed = server.run(cache_folder, kill_at=5) # SIGKILLed at its 5th file-system write
        result.exit_code, result.matches_eager, result.cache_hits, result.graphs_compiled, result.cache_warnings
        result.writes                                # the writes a run made (the sites kill_at counts)

A write is each call that changes the cache folder (`WRITES`: renames, new folders and files,
the C++ compiler's run), counted twice: just before and just after it, so `kill_at` reaches
every point between two writes a killed writer can leave behind.

Run as a script it is the server: one command per stdin line (`run <n> <folder> [<kill_at>]`,
`readonly <folder>`), one JSON line of results per command on stdout.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys

_SERVER = [sys.executable, "-u", __file__]


def workload(x, y):
    """Pointwise kernels, a reduction and an extern matmul."""
    import torch

    return torch.sigmoid(x * y + 1).sum(-1) + (x @ y.T).relu().mean(), torch.exp(y) - x


@dataclasses.dataclass
class RunResult:
    exit_code: int            # negative: killed by that signal
    matches_eager: bool = False
    cache_hits: int = 0       # graphs loaded from the cache folder
    graphs_compiled: int = 0  # graphs generated from scratch
    cache_warnings: list = dataclasses.field(default_factory=list)
    error: str = ""
    writes: int = 0           # write sites passed (before and after each write call)


class ProcessServer:
    """The server, in a mount namespace of its own when root can make one (`readonly` then
    bind-mounts a folder read-only: root ignores file permissions)."""

    def __init__(self):
        self.can_remount = os.geteuid() == 0 and _unshare_works()
        command = ["unshare", "-m", *_SERVER] if self.can_remount else _SERVER
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.process.stdin.close()
        self.process.wait(timeout=60)

    def _ask(self, line: str):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the cache process server died (exit code {self.process.poll()})")
        return json.loads(answer)

    def run(self, folder, kill_at: int = 0) -> RunResult:
        """One process; `kill_at` > 0: it SIGKILLs itself at that write site (exit code -9)."""
        return self.run_many(folder, 1, kill_at)[0]

    def run_many(self, folder, count: int, kill_at: int = 0) -> list[RunResult]:
        return [RunResult(**r) for r in self._ask(f"run {count} {folder} {kill_at}")]

    def make_read_only(self, folder) -> bool:
        """Make `folder` read-only for later runs; False when this machine cannot."""
        if os.geteuid() != 0:
            for root, dirs, files in os.walk(folder):
                for name in [*dirs, *files]:
                    os.chmod(os.path.join(root, name), 0o555 if name in dirs else 0o444)
            os.chmod(folder, 0o555)
            return True
        return self.can_remount and self._ask(f"readonly {folder}")


def make_writable(folder) -> None:
    """Undo a chmod-made read-only folder (a bind mount ends with the server), so it can be deleted."""
    if os.geteuid() != 0 and os.path.isdir(folder):
        os.chmod(folder, 0o755)
        for root, dirs, files in os.walk(folder):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)


def _unshare_works() -> bool:
    if not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


# --- the server side ---------------------------------------------------------------------------


def _writes():
    import pathlib
    import tempfile

    return [(os, "replace"), (os, "rename"), (os, "mkdir"), (tempfile, "mkdtemp"), (tempfile, "mkstemp"),
            (pathlib.Path, "write_text"), (pathlib.Path, "write_bytes"), (subprocess, "run")]


def _count_writes(kill_at: int) -> list:
    """Count write sites in this process, and SIGKILL it at the `kill_at`-th (0: never)."""
    passed = [0]

    def site() -> None:
        passed[0] += 1
        if passed[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    for owner, name in _writes():
        def counted(*args, _real=getattr(owner, name), **kwargs):
            site()
            result = _real(*args, **kwargs)
            site()
            return result

        setattr(owner, name, counted)
    return passed


def _one_run(folder: str, kill_at: int, out_fd: int) -> None:
    """In the forked process: compile and run the workload against `folder`, report, exit."""
    import warnings

    import torch

    import compiler
    import inductor
    from inductor import metrics

    os.environ["PTC_INDUCTOR_CACHE_DIR"] = folder
    writes = _count_writes(kill_at)
    result = {"exit_code": 0}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            compiled = compiler.compile(workload, backend="inductor")
            x, y = torch.randn(6, 7), torch.randn(6, 7)
            actual, expected = compiled(x, y), workload(x, y)
        result["matches_eager"] = all(torch.allclose(a, e, atol=1e-5) for a, e in zip(actual, expected))
        result["cache_warnings"] = [str(w.message) for w in caught if issubclass(w.category, inductor.CacheWarning)]
    except Exception as error:  # noqa: BLE001  (reported to the test)
        result["error"] = f"{type(error).__name__}: {error}"
    result["cache_hits"] = metrics.counters.graph_cache_hits
    result["graphs_compiled"] = metrics.counters.graphs_compiled
    result["writes"] = writes[0]
    os.write(out_fd, json.dumps(result).encode())
    os._exit(0)


def _run(count: int, folder: str, kill_at: int) -> list[dict]:
    children = []
    for _ in range(count):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _one_run(folder, kill_at, write)
        os.close(write)
        children.append((pid, read))
    results = []
    for pid, read in children:
        chunks = []
        while chunk := os.read(read, 65536):
            chunks.append(chunk)
        os.close(read)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        result = json.loads(b"".join(chunks)) if chunks else {}
        results.append({**result, "exit_code": code})
    return results


def _serve() -> None:
    # Imported before any fork, so each run pays only for its compile.
    import torch  # noqa: F401

    import compiler  # noqa: F401
    import inductor  # noqa: F401

    for line in sys.stdin:
        command, *args = line.split()
        if command == "run":
            answer = _run(int(args[0]), args[1], int(args[2]) if len(args) > 2 else 0)
        elif command == "readonly":
            done = subprocess.run(["mount", "--bind", "-o", "ro", args[0], args[0]], capture_output=True)
            answer = done.returncode == 0
        else:
            raise ValueError(f"unknown command {command!r}")
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _serve()
