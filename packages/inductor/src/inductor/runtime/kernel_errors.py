"""The errors a generated kernel reports instead of faulting, raised as eager raises them.

A kernel meeting an integer division by zero (x86 traps on it and kills the process) or an
index tensor's value outside the dimension it indexes (the load would read foreign memory)
sets an error code and carries on safely; its caller raises the exception eager raises for
the same inputs. C++ kernels return the code (runtime/cpp_prelude.h); Triton kernels run by the
interpreter on CPU tensors store it through a flag pointer (codegen/triton, triton_launch.py).
Triton kernels on a GPU stop at a device-side assert on an out-of-range index, as eager's CUDA
kernels (and torch.compile's) do; a division by zero is not checked there, as in eager. Where
eager raises on the host instead (a take from an empty dimension), so does the wrapper
(`check_take`).
"""

from __future__ import annotations

ZERO_DIVISION = 1             # eager: RuntimeError("ZeroDivisionError")
INDEX_OUT_OF_BOUNDS = 2       # indexing, index_select, embedding: eager raises IndexError
INDEX_OUT_OF_BOUNDS_RUNTIME = 3  # gather: eager raises RuntimeError
OUT_OF_MEMORY = 4             # a kernel's per-thread scratch rows could not be allocated: MemoryError

# The code an out-of-range index sets, by the type eager raises for the op (ops.indirect_indexing).
BOUNDS_ERROR_CODES = {IndexError: INDEX_OUT_OF_BOUNDS, RuntimeError: INDEX_OUT_OF_BOUNDS_RUNTIME}


def kernel_error(code: int, kernel) -> Exception:
    """The exception for error `code` of the kernel whose source is `kernel` (a path)."""
    if code == OUT_OF_MEMORY:
        return MemoryError(f"out of memory allocating the scratch rows of compiled kernel {kernel}")
    if code == ZERO_DIVISION:
        return RuntimeError(f"ZeroDivisionError (integer division or modulo by zero in compiled kernel {kernel})")
    error_type = IndexError if code == INDEX_OUT_OF_BOUNDS else RuntimeError
    return error_type(
        f"index out of bounds in compiled kernel {kernel}: an index tensor (indexing, gather, "
        "embedding...) holds a value outside the dimension it indexes"
    )


def check_take(size: int, count: int, code: int, message: str) -> None:
    """Raise what eager raises, on the host, for `count` elements taken from a dimension of
    `size` 0: error `code`, eager's `message`. The wrapper calls this before a kernel indexing
    a dimension that may be empty (lowering/indexing.py): such a kernel has no position to
    read, and on a GPU it could only stop at a device-side assert, which leaves the device
    unusable."""
    if size == 0 and count:
        raise (IndexError if code == INDEX_OUT_OF_BOUNDS else RuntimeError)(message)
