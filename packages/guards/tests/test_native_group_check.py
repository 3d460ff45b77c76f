"""The compiled TensorGroup check (guards.native): built in the background, switched to by
guard functions compiled before it loaded, and never a reason for a guard to differ from
its Python check (test_tensor_groups.py runs every group test both ways)."""

from __future__ import annotations

import functools
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import threading
import time

import pytest
import torch

from guards import GuardSet, LocalSource, TensorMatch, native
from guards.kinds import tensor_groups


def _group_guard(tensors: dict):
    saved = tensor_groups.MIN_GROUP
    tensor_groups.MIN_GROUP = 2
    try:
        return GuardSet(TensorMatch.of(LocalSource(name), t) for name, t in tensors.items()).compile(parameters=list(tensors))
    finally:
        tensor_groups.MIN_GROUP = saved


def _group_check(guard) -> native.GroupCheck:
    return next(c for c in guard.__globals__.values() if isinstance(c, native.GroupCheck))


def _compiled_helper():
    loaded = native.wait()
    if loaded is None:
        pytest.skip(f"the compiled helper is unavailable here: {native.failure()}")
    return loaded


def test_builds_where_a_compiler_and_python_headers_are():
    headers = os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))
    if not headers or not (os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")):
        pytest.skip("no C++ compiler or Python headers")
    assert native.wait() is not None, native.failure()


def test_guard_compiled_before_the_helper_loads_switches_to_it(monkeypatch):
    loaded = _compiled_helper()
    finished = threading.Thread(target=lambda: None)
    finished.start()
    finished.join()
    # As if the build were still running: no module yet, a build thread already started.
    monkeypatch.setattr(native, "_state", {"module": None, "thread": finished, "failed": None})
    tensors = {f"t{i}": torch.randn(3, 2) for i in range(3)}
    guard = _group_guard(tensors)
    assert not isinstance(_group_check(guard).check, functools.partial)
    assert guard(**tensors)

    monkeypatch.setattr(native, "_target", lambda: pathlib.Path(loaded.__file__))
    native._build_and_load()
    assert isinstance(_group_check(guard).check, functools.partial)
    assert guard(**tensors)
    assert not guard(**{**tensors, "t1": torch.randn(2, 3)})
    assert guard.why(**{**tensors, "t1": torch.randn(2, 3)}) == "L['t1'].size()[0] == 3 failed: got 2"


def test_a_failed_build_leaves_the_python_check(monkeypatch, tmp_path):
    monkeypatch.setenv("CXX", "false")  # a compiler that always fails
    monkeypatch.setenv("PTC_GUARDS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(native, "_state", {"module": None, "thread": None, "failed": None})
    assert native.wait() is None
    assert "failed" in native.failure()
    tensors = {f"t{i}": torch.randn(4) for i in range(3)}
    guard = _group_guard(tensors)
    assert not isinstance(_group_check(guard).check, functools.partial)
    assert guard(**tensors) and not guard(**{**tensors, "t0": torch.randn(4).double()})


def test_a_damaged_cached_helper_is_compiled_again(monkeypatch, tmp_path):
    good = pathlib.Path(_compiled_helper().__file__)
    target = tmp_path / "key" / good.name
    target.parent.mkdir()
    target.write_bytes(good.read_bytes()[:1000])  # truncated: loading it would crash the process
    (target.parent / "sha256").write_text(native._digest(good))
    compiled = []

    def compile_(path):
        compiled.append(path)
        shutil.copyfile(good, path)

    monkeypatch.setattr(native, "_compile", compile_)
    monkeypatch.setattr(native, "_state", {"module": None, "thread": None, "failed": None})
    monkeypatch.setattr(native, "_target", lambda: target)
    assert native.wait() is not None, native.failure()
    assert compiled == [target] and target.read_bytes() == good.read_bytes()


@pytest.mark.parametrize("other", [
    [1.0, 2.0, 3.0, 4.0],                         # not a tensor
    torch.randn(4).to_sparse(),                   # strides() throws in C++, as .stride() raises in Python
    torch.randn(8)[::2],                          # same sizes, not contiguous
    torch.randn(4, dtype=torch.float64),
    torch.randn(4).requires_grad_(),
    torch._neg_view(torch.randn(4)),
    torch.randn(4, device="meta"),
    torch.nn.Parameter(torch.randn(4)),
])
def test_compiled_check_fails_where_the_python_check_fails(other):
    _compiled_helper()
    tensors = {f"t{i}": torch.randn(4) for i in range(3)}
    guard = _group_guard(tensors)
    assert isinstance(_group_check(guard).check, functools.partial)
    assert guard(**tensors)
    assert guard(**{**tensors, "t2": other}) is False


@pytest.mark.gpu
def test_compiled_check_of_cuda_tensors():
    _compiled_helper()
    tensors = {f"t{i}": torch.randn(4, 2, device="cuda") for i in range(3)}
    guard = _group_guard(tensors)
    assert isinstance(_group_check(guard).check, functools.partial)
    assert guard(**tensors) and guard(**{**tensors, "t1": torch.randn(4, 2, device="cuda")})
    assert guard(**{**tensors, "t1": torch.randn(4, 2)}) is False
    assert guard.why(**{**tensors, "t1": torch.randn(4, 2)}) == "L['t1'].device == 'cuda:0' failed: got device(type='cpu')"


def _storage_cases():
    buffer = torch.randn(8)
    other = torch.randn(4)
    return {
        "apart": ((other,), (torch.randn(4), torch.randn(2, 2))),
        "written view of another input": ((buffer[:4],), (buffer[2:6],)),
        "two written sharing": ((buffer[:4], buffer[4:]), ()),
        "the same tensor twice": ((other,), (other,)),
        "empty storages": ((torch.empty(0),), (torch.empty(0),)),
        "nothing written": ((), (buffer, buffer)),
        "not a tensor": ((other,), (1,)),
    }


@pytest.mark.parametrize("case", _storage_cases())
def test_storages_apart_answers_as_its_python_twin(case):
    written, others = _storage_cases()[case]
    expected = case in ("apart", "empty storages", "nothing written")
    assert native._storages_apart(written, others) is expected
    assert _compiled_helper().storages_apart(written, others) is expected


_START_BUILD_AND_EXIT = """
import os, sys, time
from guards import native

def building():
    return any(sys.argv[1] in open(f"/proc/{p}/cmdline", errors="replace").read()
               for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid() and os.path.exists(f"/proc/{p}/cmdline"))

native.module()
deadline = time.monotonic() + 60
while native.failure() is None and time.monotonic() < deadline and not building():
    time.sleep(0.05)
if building():
    child = os.fork()
    if child == 0:
        sys.exit(0)  # a forked child exiting (atexit runs) leaves the parent's build alone
    os.waitpid(child, 0)
    time.sleep(0.2)
    print("building" if building() else "stopped by a child", flush=True)
"""


def _processes_naming(text: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in command:
            found.append(command)
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="lists processes through /proc")
def test_a_process_exiting_mid_build_leaves_no_compiler_running(tmp_path):
    """A short process starts the ~15 s build in the background and ends first: its compiler
    (g++ and the cc1plus it runs) stops with it instead of running on, orphaned; a child it
    forked meanwhile does not stop it when that child exits."""
    env = {**os.environ, "PTC_GUARDS_CACHE_DIR": str(tmp_path), "PTC_GUARDS_NATIVE": "1"}
    done = subprocess.run([sys.executable, "-c", _START_BUILD_AND_EXIT, str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=120)
    if not done.stdout.strip():
        pytest.skip(f"the helper does not build here: {done.stderr[-500:]}")
    assert done.stdout.strip() == "building"
    deadline = time.monotonic() + 10
    while _processes_naming(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_naming(str(tmp_path)) == []
