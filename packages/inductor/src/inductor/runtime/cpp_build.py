"""Compile C++ kernels with the system g++ and load them with ctypes, cached by the hash of their
source and of what else decides the code (toolchain_key: flags, compiler, CPU, prelude).

Flags: -O3 -march=native for the host's vector units, -fopenmp for threads and `omp simd`,
-fno-math-errno and -fno-trapping-math (we never read errno nor unmask FP exceptions; without
them GCC keeps sqrt calls and the selects of the prelude's math as branches, and the loops do
not vectorize; results are unchanged). Never -ffast-math: NaN and inf must behave as in eager.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import itertools
import os
import pathlib
import queue
import shutil
import subprocess
import tempfile
import threading

import _ctypes

from .. import cache, logs
from ..errors import CppCompileError, InductorError
from .kernel_errors import kernel_error

# Every kernel includes it by name (`build` passes its folder with -I, and `toolchain_key` puts its
# text in each kernel's cache key), so a kernel's source names no cache path.
PRELUDE = pathlib.Path(__file__).with_name("cpp_prelude.h")
FLAGS = ["-O3", "-march=native", "-fopenmp", "-fno-math-errno", "-fno-trapping-math", "-std=gnu++17", "-shared", "-fPIC", "-w"]


@functools.lru_cache(maxsize=None)
def compiler() -> str:
    found = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not found:
        raise CppCompileError("no C++ compiler found: install g++ (e.g. `apt-get install g++`) or set CXX")
    return found


@functools.lru_cache(maxsize=None)
def _compiler_version() -> str:
    return subprocess.run([compiler(), "--version"], capture_output=True, text=True).stdout


@functools.lru_cache(maxsize=None)
def cpu_target() -> str:
    """What -march=native compiles for here: the CPU's model and feature flags. A library built
    for one CPU may use instructions another lacks (SIGILL), so they are part of every key."""
    try:
        with open("/proc/cpuinfo") as info:
            lines = info.read().splitlines()
        wanted = [line for line in lines if line.split(":")[0].strip() in ("model name", "flags", "Features")]
        if wanted:
            return "\n".join(dict.fromkeys(wanted))
    except OSError:
        pass
    # No /proc (macOS...): ask the compiler what -march=native resolves to.
    return subprocess.run([compiler(), "-march=native", "-Q", "--help=target"], capture_output=True, text=True).stdout


@functools.lru_cache(maxsize=None)
def toolchain_key() -> str:
    """Everything besides a kernel's source that decides its library's code."""
    return cache.digest(" ".join(FLAGS), _compiler_version(), cpu_target(), PRELUDE.read_text())


def library_key(source: str) -> str:
    return cache.digest(source, toolchain_key())


def build(source: str) -> str:
    """The cache key of the library for `source`, compiling it unless the cache has it intact."""
    key = library_key(source)
    if cache.entry("cpp", key) is None:
        cache.store("cpp", key, functools.partial(_compile, source))
    return key


def _compile(source: str, folder: pathlib.Path) -> None:
    (folder / "kernel.cpp").write_text(source)
    # Relative names, run inside the folder: the library's bytes do not depend on where it is
    # built. g++'s own temporary files go there too: TMPDIR may name a folder it cannot write.
    result = subprocess.run([compiler(), *FLAGS, f"-I{PRELUDE.parent}", "kernel.cpp", "-o", "kernel.so"],
                            capture_output=True, text=True, cwd=folder, env={**os.environ, "TMPDIR": str(folder)})
    if result.returncode == 0:
        return
    if not folder.is_dir():  # removed while g++ ran: the cache folder was deleted (cache.store builds again)
        raise FileNotFoundError(errno.ENOENT, "the folder g++ was building in was removed", str(folder))
    for code in (errno.ENOSPC, errno.EDQUOT):
        if os.strerror(code) in result.stderr:  # the disk refused g++'s output, not the source
            raise OSError(code, f"{os.strerror(code)} (g++ writing into {folder}):\n{result.stderr[-2000:]}")
    if "File size limit exceeded" in result.stderr:  # SIGXFSZ: the process's RLIMIT_FSIZE, in any folder
        raise OSError(errno.EFBIG, f"the file size limit (`ulimit -f`) stopped g++ writing into {folder}; raise it "
                                   f"to compile C++ kernels:\n{result.stderr[-2000:]}")
    raise CppCompileError(
        f"g++ failed on generated kernel {_kept_for_report(source)}:\n{result.stderr[-4000:]}\n"
        "This is an inductor bug: please report it with the kernel source."
    )


def _kept_for_report(source: str) -> str:
    """A copy of a kernel g++ refused, outside the cache (whose staging folder goes)."""
    try:
        with tempfile.NamedTemporaryFile("w", prefix="ptc_failed_kernel_", suffix=".cpp", delete=False) as f:
            f.write(source)
        return f.name
    except OSError:
        return "(its source could not be saved)"


def build_all(sources: list[str]) -> list[str]:
    """Compile a graph's kernels concurrently (g++ runs in subprocesses, so threads suffice)."""
    unique = list(dict.fromkeys(sources))  # a layer repeated through a model is one kernel
    done = itertools.count(1)

    def build_counted(source: str) -> str:
        key = build(source)
        logs.phase_step("kernel builds", next(done), len(unique))
        return key

    with logs.phase("kernel builds", f"{len(unique)} C++ kernels"):
        if len(unique) <= 1:
            built = {s: build_counted(s) for s in unique}
        else:
            built = dict(zip(unique, _in_threads(build_counted, unique, os.cpu_count() or 1)))
    return [built[s] for s in sources]


def _in_threads(fn, items: list, workers: int) -> list:
    """`[fn(item) for item in items]`, `workers` at a time; the first failing item's error.

    Not a ThreadPoolExecutor: Ctrl-C in the calling thread can be raised inside the Python-level
    locks it shares with its workers (`threading.Condition.__enter__` takes the lock and is
    interrupted before anything can release it: CPython's bpo-29988), and its shutdown then
    waited forever for a worker blocked on that lock. Here the threads share only C-level
    objects, are daemons (nothing waits for them once the caller is interrupted), and start no
    new build after an interrupt."""
    results, errors, todo, interrupted = [None] * len(items), [], queue.SimpleQueue(), []
    for k in range(len(items)):
        todo.put(k)

    def work() -> None:
        while not interrupted:
            try:
                k = todo.get_nowait()
            except queue.Empty:
                return
            try:
                results[k] = fn(items[k])
            except BaseException as error:  # noqa: BLE001  (raised by the caller)
                errors.append((k, error))

    threads = [threading.Thread(target=work, name="inductor-cpp-build", daemon=True)
               for _ in range(min(workers, len(items)))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    except BaseException:
        interrupted.append(True)
        raise
    if errors:
        raise min(errors, key=lambda pair: pair[0])[1]
    return results


@functools.lru_cache(maxsize=None)
def load_kernel(key: str, name: str, n_pointers: int, n_sizes: int):
    """The kernel of library `key` as a ctypes function taking data pointers then int64 sizes.
    The library's hash is checked first (cache.entry): a damaged file is never mapped."""
    folder = cache.entry("cpp", key)
    if folder is None:
        raise InductorError(
            f"inductor: kernel library cpp/{key} is missing or damaged in the cache {cache.cache_dir()}; "
            "the graph using it is compiled again on its next compile"
        )
    try:
        fn = _open(folder, name)
    except OSError as error:
        # Intact, yet refused here: built where other libraries were found (a cache folder
        # shared between machines or containers), or a library made elsewhere. Build it again.
        source = (folder / "kernel.cpp").read_text()
        cache.discard(folder, f"the loader refuses kernel.so here: {error}")
        build(source)
        folder = cache.entry("cpp", key)
        try:
            fn = _open(folder, name)
        except OSError as again:
            raise InductorError(
                f"inductor: cannot load the kernel library {folder / 'kernel.so'}, even rebuilt: {again}. If "
                "the cache folder is on a file system mounted noexec, point PTC_INDUCTOR_CACHE_DIR elsewhere."
            ) from again
    fn.argtypes = [ctypes.c_void_p] * n_pointers + [ctypes.c_int64] * n_sizes
    fn.restype = ctypes.c_int
    fn.errcheck = functools.partial(_raise_on_error, folder / "kernel.cpp")
    return fn


def _open(folder: pathlib.Path, name: str):
    library = ctypes.CDLL(str(folder / "kernel.so"))
    try:
        return getattr(library, name)
    except AttributeError as error:
        # Unmapped, so that a library rebuilt at this path is mapped anew: the loader hands
        # back the library it holds for a path it has open.
        _ctypes.dlclose(library._handle)
        raise OSError(str(error)) from error


def _raise_on_error(source, status, fn, args):
    """Raise what eager raises for the input the kernel flagged (runtime/kernel_errors.py)."""
    if status:
        raise kernel_error(status, source)
    return status
