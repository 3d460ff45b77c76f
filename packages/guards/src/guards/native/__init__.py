"""The compiled helper behind TensorGroup checks and the storage-sharing check of graphs that
write their inputs (tensor_group.cpp), built on this machine.

A large module's guard function spends most of its time reading its parameters' metadata
through torch's Python getters (~600 ns a tensor); the helper reads the same fields from
each tensor's TensorImpl in one C++ loop (~15 ns a tensor). torch ships no such function
outside the compiler we rebuild, so it is compiled here, once per machine, torch and Python:
against torch's headers with the C++ compiler (`CXX`, else g++ or c++), into
`PTC_GUARDS_CACHE_DIR` (default `~/.cache/ptc_guards`), ~15 s on one core.

The build runs in a background thread started by the first guard set that groups tensors,
so no compile waits for it. Until it has loaded, and wherever it cannot be built (no
compiler, no Python headers, not Linux), group checks run their Python code; each group's
`GroupCheck` switches itself to the helper once it is ready, so a guard function compiled
before then speeds up too. `PTC_GUARDS_NATIVE=0` turns the helper off.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import importlib.util
import logging
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import weakref

import torch

log = logging.getLogger("compiler.guards")

_SOURCE = pathlib.Path(__file__).with_name("tensor_group.cpp")
_lock = threading.Lock()
_state: dict = {"module": None, "thread": None, "failed": None, "compiling": None}
_waiting: weakref.WeakSet = weakref.WeakSet()  # GroupChecks to switch once the module loads


def enabled() -> bool:
    return os.environ.get("PTC_GUARDS_NATIVE", "1") != "0"


def module():
    """The loaded helper module, or None (not built yet, being built, or unavailable). The
    first call starts the build in the background."""
    if _state["module"] is None and enabled():
        _start()
    return _state["module"]


def wait(timeout: float | None = None):
    """Block until the background build has finished (tests, benchmarks); the module or None."""
    module()
    thread = _state["thread"]
    if thread is not None:
        thread.join(timeout)
    return _state["module"]


def failure() -> str | None:
    """Why the helper could not be built or loaded, once that is known."""
    return _state["failed"]


class NativeSwitch:
    """A check as a guard function calls it: `switch.check(...)`. It runs `python_check` until
    the helper has loaded, then `bind(helper)`, the same test in C++ (the attribute is
    replaced, so a call costs one C call after that)."""

    def __init__(self, python_check, bind):
        self.check = python_check
        self._bind = bind
        if not enabled() or (module() is None and _state["failed"] is not None):
            return
        with _lock:
            if _state["module"] is None:
                _waiting.add(self)
                return
        self._switch(_state["module"])

    def _switch(self, native) -> None:
        self.check = self._bind(native)


class GroupCheck(NativeSwitch):
    """A TensorGroup's check: `group.check(tensors)`, on the group's expectations `entries`."""

    def __init__(self, python_check, entries: tuple):
        super().__init__(python_check, lambda native: functools.partial(native.check, native.make_spec(entries)))


def _storages_apart(written: tuple, others: tuple) -> bool:
    """Python's `storages_apart` (tensor_group.cpp): no tensor of `written` shares its storage's
    memory with another tensor of either tuple. Empty storages, and tensors without one (a
    wrapper subclass), hold nothing to share."""
    seen = set()
    for tensors, is_written in ((written, True), (others, False)):
        for tensor in tensors:
            try:
                memory = tensor.untyped_storage().data_ptr()
            except AttributeError:
                return False  # not a tensor: the guard expects tensors
            except (RuntimeError, NotImplementedError):
                continue
            if memory == 0:
                continue
            if memory in seen:
                return False
            if is_written:
                seen.add(memory)
        if not seen:
            return True
    return True


@functools.cache
def storages_apart() -> NativeSwitch:
    """The one `storages_apart(written, others)` check guard functions share."""
    return NativeSwitch(_storages_apart, lambda native: native.storages_apart)


def _start() -> None:
    with _lock:
        if _state["thread"] is not None or _state["module"] is not None:
            return
        _state["thread"] = threading.Thread(target=_build_and_load, name="ptc-guards-native", daemon=True)
        _state["thread"].start()


def _stop_compiling() -> None:
    compiling = _state["compiling"]
    if compiling is not None:
        try:
            os.killpg(compiling.pid, signal.SIGKILL)
        except OSError:
            pass  # it has just finished


def _forget_parent_build() -> None:
    # A forked child does not own the parent's compiler (nor its build thread): exiting, it
    # must not stop it. The lock may have been held by that thread.
    _state["compiling"] = None
    _lock._at_fork_reinit()


atexit.register(_stop_compiling)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_parent_build)


def _build_and_load() -> None:
    try:
        loaded = _load_or_rebuild(_target())
    except Exception as error:  # noqa: BLE001  (any failure leaves the Python checks in place)
        _state["failed"] = f"{type(error).__name__}: {error}"
        log.info("guards: the native tensor-group helper is unavailable, group checks stay in Python (%s)",
                 _state["failed"])
        return
    with _lock:
        _state["module"] = loaded
        waiting = list(_waiting)
        _waiting.clear()
    for group in waiting:
        group._switch(loaded)


def _load_or_rebuild(target: pathlib.Path):
    """The helper at `target`, compiled first if missing. A cached file is loaded only if it
    is byte for byte what was built (its digest, stored beside it): loading a damaged shared
    library can crash the process (a truncated one raises SIGBUS), so one that differs is
    compiled again instead of failing every later process."""
    if target.exists():
        digest = _digest_file(target)
        if digest.exists() and digest.read_text() == _digest(target):
            return _load(target)
        log.info("guards: rebuilding the native tensor-group helper %s (it differs from what was built)", target)
        target.unlink(missing_ok=True)
    _compile(target)
    return _load(target)


def _digest(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _digest_file(target: pathlib.Path) -> pathlib.Path:
    return target.parent / "sha256"


def _target() -> pathlib.Path:
    """Where the helper for this torch, Python, compiler and source lives."""
    if not sys.platform.startswith("linux"):
        raise OSError(f"built only on Linux, not {sys.platform}")
    cxx = _compiler()
    key = hashlib.sha256(b"\0".join(
        [_SOURCE.read_bytes(), torch.__version__.encode(), os.path.dirname(torch.__file__).encode(),
         sys.version.encode(), cxx.encode()]
    )).hexdigest()[:20]
    return _cache_dir() / key / f"_tensor_group{sysconfig.get_config_var('EXT_SUFFIX')}"


def _compiler() -> str:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        raise OSError("no C++ compiler (set CXX, or install g++)")
    return cxx


def _compile(target: pathlib.Path) -> None:
    python_include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(python_include, "Python.h")):
        raise OSError(f"no Python headers in {python_include}")
    torch_dir = os.path.dirname(torch.__file__)
    lib = os.path.join(torch_dir, "lib")
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        built = os.path.join(scratch, target.name)
        command = [
            _compiler(), "-O2", "-std=c++17", "-shared", "-fPIC", "-w", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
            "-I", os.path.join(torch_dir, "include"), "-I", os.path.join(torch_dir, "include", "torch", "csrc", "api", "include"),
            "-I", python_include, str(_SOURCE), "-o", built,
            "-L", lib, f"-Wl,-rpath,{lib}", "-lc10", "-ltorch_cpu", "-ltorch_python",
        ]
        # Stopped, with the cc1plus it runs (its own process group), when this process exits:
        # a process that ends before the build does (a short script, a test worker) left the
        # compiler running on for ~15 s of CPU, writing into a scratch folder already deleted.
        with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              start_new_session=True) as compiling:
            _state["compiling"] = compiling
            try:
                _, stderr = compiling.communicate()
            finally:
                _state["compiling"] = None
        if compiling.returncode != 0:
            raise OSError(f"{command[0]} failed: {stderr.strip()[-2000:]}")
        digest = os.path.join(scratch, "sha256")
        pathlib.Path(digest).write_text(_digest(pathlib.Path(built)))
        # Each os.replace is atomic: a process building beside this one sees whole files.
        os.replace(digest, _digest_file(target))
        os.replace(built, target)


def _load(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location("guards.native._tensor_group", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def _cache_dir() -> pathlib.Path:
    configured = os.environ.get("PTC_GUARDS_CACHE_DIR")
    return pathlib.Path(configured) if configured else pathlib.Path.home() / ".cache" / "ptc_guards"
