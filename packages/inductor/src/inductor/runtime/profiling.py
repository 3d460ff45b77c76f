"""Generated kernels as ranges of torch.profiler.

While a profiler records (`torch.autograd._profiler_enabled()`), a compiled graph runs a copy of
its wrapper in which each kernel call is a `record_function` range named
`inductor <graph>/<kernel> <bytes>B`: the graph's cache key (its first 12 digits, the folder
`COMPILER_LOGS=output_code` names), the kernel's name in the wrapper, and the bytes of the distinct
buffers it takes. C++ kernels, called through ctypes, are invisible to the profiler otherwise;
a Triton kernel's GPU time is attributed to its range. CUDA kernels run one at a time while
profiled (synchronized before and after), so a range's host time bounds its kernel's time too.
Outside a profiler the wrapper runs as generated: the check costs one C call per graph call.
"""

from __future__ import annotations

import re
import sys
import types

import torch

RANGE = re.compile(r"inductor (?P<graph>[0-9a-f]+)/(?P<kernel>\w+) (?P<bytes>\d+)B")
GRAPH_DIGITS = 12


def range_name(graph_key: str, kernel: str, nbytes: int) -> str:
    return f"inductor {graph_key[:GRAPH_DIGITS]}/{kernel} {nbytes}B"


class KernelRange:
    """A kernel callable that runs inside a profiler range naming it and its bytes."""

    def __init__(self, kernel, graph_key: str, name: str):
        self.kernel, self.graph_key, self.name = kernel, graph_key, name

    def __call__(self, *args):
        caller_locals = sys._getframe(1).f_locals
        tensors = _argument_tensors(args, caller_locals)
        if type(caller_locals) is dict:
            # Before Python 3.13 `f_locals` is a snapshot the frame keeps: it would hold every
            # buffer the wrapper deletes before the next kernel, raising the peak the profiler
            # measures. Emptied, it is filled afresh by whoever reads it next (debuggers and
            # tracers refresh it before they read or write it back).
            caller_locals.clear()
        nbytes = sum(t.numel() * t.element_size() for t in tensors)
        cuda = any(t.is_cuda for t in tensors)
        if cuda:
            torch.cuda.synchronize()
        with torch.profiler.record_function(range_name(self.graph_key, self.name, nbytes)):
            result = self.kernel(*args)
            if cuda:
                torch.cuda.synchronize()
        return result


def _argument_tensors(args, caller_locals: dict) -> list[torch.Tensor]:
    """The distinct tensors a kernel takes. C++ kernels take data pointers: those are found
    among the wrapper's local tensors (its inputs and buffers) by address."""
    by_address = None
    found: dict[tuple, torch.Tensor] = {}
    for arg in args:
        if isinstance(arg, torch.Tensor):
            found[(arg.data_ptr(), arg.numel(), arg.dtype)] = arg
        elif isinstance(arg, int) and not isinstance(arg, bool):
            if by_address is None:
                by_address = {v.data_ptr(): v for v in caller_locals.values() if isinstance(v, torch.Tensor)}
            tensor = by_address.get(arg)
            if tensor is not None:
                found[(arg, tensor.numel(), tensor.dtype)] = tensor
    return list(found.values())


def profiled_call(call: types.FunctionType, kernel_names, graph_key: str) -> types.FunctionType:
    """`call` (a wrapper's entry point) with each kernel in `kernel_names` wrapped in its range."""
    namespace = dict(call.__globals__)
    for name in kernel_names:
        namespace[name] = KernelRange(namespace[name], graph_key, name)
    return types.FunctionType(call.__code__, namespace, call.__name__)
