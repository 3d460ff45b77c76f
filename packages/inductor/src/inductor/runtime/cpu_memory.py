"""Large CPU buffers on transparent huge pages.

glibc serves every allocation above 32 MiB with a fresh mmap, so each call of a compiled
graph faults in its large outputs again, one 4 KiB page at a time. On the VMs we measure on a
fault costs about 9 us: a 256 MiB softmax output spent ~0.6 s in page faults, more than the
kernel itself. `madvise(MADV_HUGEPAGE)` lets the kernel back the buffer with 2 MiB pages
(512x fewer faults) where transparent huge pages are in "madvise" mode, the common default;
elsewhere the call is a harmless no-op. PyTorch's own allocator does the same when
THP_MEM_ALLOC_ENABLE=1 is set.
"""

from __future__ import annotations

import ctypes
import sys

import torch

HUGE_PAGE = 2 << 20
MIN_BYTES = 4 * HUGE_PAGE  # smaller buffers come from glibc's heap, usually already faulted in
_MADV_HUGEPAGE = 14


def _madvise():
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


_MADVISE = _madvise()


def empty_strided_cpu(size, stride, dtype: torch.dtype) -> torch.Tensor:
    """`torch.empty_strided` on the CPU, asking for huge pages when the buffer is large."""
    tensor = torch.empty_strided(size, stride, dtype=dtype)
    nbytes = tensor.untyped_storage().nbytes()
    if nbytes >= MIN_BYTES and _MADVISE is not None:
        start = tensor.data_ptr()
        # Only whole 2 MiB pages inside the buffer can become huge pages.
        first = (start + HUGE_PAGE - 1) // HUGE_PAGE * HUGE_PAGE
        last = (start + nbytes) // HUGE_PAGE * HUGE_PAGE
        if last > first:
            _MADVISE(first, last - first, _MADV_HUGEPAGE)
    return tensor


def allocation_peak(fn) -> tuple[int, int]:
    """(peak, end): the most bytes the CPU allocator had handed out during `fn()` above what was
    allocated before it, and what is still allocated when it returns (its result included: dropped after the
    profiler stopped).

    Read off torch.profiler's raw allocator events, which see every allocation whoever makes it
    (a wrapper's buffers, extern ops, autograd); the per-op events it reports fold an op's
    allocations into the op. How benchmarks and tests compare a compiled graph's peak with eager's."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn()
    del result
    events = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events() if e.name() == "[memory]")
    live = peak = 0
    for _, nbytes in events:
        live += nbytes
        peak = max(peak, live)
    return peak, live
