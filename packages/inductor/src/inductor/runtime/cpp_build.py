"""Compile C++ kernels with the system g++ and load them with ctypes, cached by source hash.

Flags: -O3 -march=native for the host's vector units, -fopenmp for threads and `omp simd`,
-fno-math-errno and -fno-trapping-math (we never read errno nor unmask FP exceptions; without
them GCC keeps sqrt calls and the selects of the prelude's math as branches, and the loops do
not vectorize; results are unchanged). Never -ffast-math: NaN and inf must behave as in eager.
"""

from __future__ import annotations

import ctypes
import functools
import os
import pathlib
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

from ..cache import cache_dir, digest, write_atomic
from ..errors import CppCompileError

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


def library_path(source: str):
    key = digest(source, " ".join(FLAGS), _compiler_version())
    folder = cache_dir() / "cpp" / key
    return folder / "kernel.so"


def build(source: str) -> str:
    """Path of the shared library for `source`, compiling it unless the cache has it."""
    so = library_path(source)
    if so.exists():
        return str(so)
    cpp = so.with_name("kernel.cpp")
    write_atomic(cpp, source)
    tmp = so.with_name(f".kernel.{os.getpid()}.{id(source)}.so")
    result = subprocess.run([compiler(), *FLAGS, str(cpp), "-o", str(tmp)], capture_output=True, text=True)
    if result.returncode != 0:
        raise CppCompileError(
            f"g++ failed on generated kernel {cpp}:\n{result.stderr[-4000:]}\n"
            "This is an inductor bug: please report it with the kernel source."
        )
    os.replace(tmp, so)
    return str(so)


def build_all(sources: list[str]) -> list[str]:
    """Compile a graph's kernels concurrently (g++ runs in subprocesses, so threads suffice)."""
    unique = list(dict.fromkeys(sources))  # a layer repeated through a model is one kernel
    if len(unique) <= 1:
        built = {s: build(s) for s in unique}
    else:
        with ThreadPoolExecutor(max_workers=min(len(unique), os.cpu_count() or 1)) as pool:
            built = dict(zip(unique, pool.map(build, unique)))
    return [built[s] for s in sources]


@functools.lru_cache(maxsize=None)
def load_kernel(path: str, name: str, n_pointers: int, n_sizes: int):
    """The kernel as a ctypes function taking data pointers then int64 sizes."""
    fn = getattr(ctypes.CDLL(path), name)
    fn.argtypes = [ctypes.c_void_p] * n_pointers + [ctypes.c_int64] * n_sizes
    fn.restype = ctypes.c_int
    fn.errcheck = functools.partial(_raise_on_error, pathlib.Path(path).with_name("kernel.cpp"))
    return fn


def _raise_on_error(source, status, fn, args):
    """Raise what eager raises for the input the kernel flagged (cpp_prelude.h's error codes)."""
    if status:
        raise KERNEL_ERRORS[status](source)
    return status


# cpp_prelude.h's PTC_ZERO_DIVISION, PTC_INDEX_OUT_OF_BOUNDS -> the error, given the kernel's source file.
KERNEL_ERRORS = {
    1: lambda kernel: ZeroDivisionError(
        f"integer division or modulo by zero in compiled kernel {kernel} (eager raises "
        "RuntimeError: ZeroDivisionError for the same inputs)"
    ),
    2: lambda kernel: IndexError(
        f"index out of bounds in compiled kernel {kernel}: an index tensor (indexing, gather, "
        "embedding...) holds a value outside the dimension it indexes; eager raises for the same inputs"
    ),
}
