"""mode="reduce-overhead": replay a compiled graph's launches as one recorded CUDA graph.

A CUDA graph replays the kernel launches of one recorded call at fixed device addresses,
so a call costs one launch instead of one per kernel. `CudaGraphRunner` wraps a compiled
graph's callable:

    call 1     runs normally: kernels compile and autotune, lazy CUDA state is created
    call 2     inputs whose address did not change since call 1 (parameters, buffers) are
               read in place; the others are copied into static tensors the runner owns.
               The call is recorded with those inputs into a `torch.cuda.CUDAGraph`.
    later      copy the changing inputs in, replay, return copies of the outputs (the next
               replay overwrites the graph's own output memory)

Each input signature (sizes, strides, dtypes, non-tensor arguments) gets its own recording.
An input read in place that later moves is copied from then on (one re-recording). If a
call cannot be recorded (it synchronizes with the host, say), the runner logs why and runs
the graph without CUDA graphs from then on.
"""

from __future__ import annotations


import torch

from .. import logs

perf_hints = logs.channel("perf_hints")


class _Recording:
    def __init__(self, graph, static_inputs, outputs, copied):
        self.graph, self.static_inputs, self.outputs, self.copied = graph, static_inputs, outputs, copied


class CudaGraphRunner:
    def __init__(self, fn):
        self.fn = fn
        self.first_pointers: tuple | None = None
        self.moved: set[int] = set()          # inputs once read in place that have since moved
        self.recordings: dict[tuple, _Recording] = {}
        self.disabled = False

    def __getattr__(self, name):
        # `source`, `kernel_sources`, `kernel_count`... of the compiled graph being replayed.
        return getattr(self.fn, name)

    def __call__(self, *args):
        if self.disabled:
            return self.fn(*args)
        pointers = tuple(a.data_ptr() if isinstance(a, torch.Tensor) else None for a in args)
        if self.first_pointers is None:
            self.first_pointers = pointers
            return self.fn(*args)
        key = _signature(args)
        recording = self.recordings.get(key)
        if recording is not None and not self._in_place_inputs_moved(recording, args, pointers):
            return self._replay(recording, args)
        copied = {
            k for k, a in enumerate(args)
            if isinstance(a, torch.Tensor) and (pointers[k] != self.first_pointers[k] or k in self.moved)
        }
        try:
            recording = self._record(args, copied)
        except Exception as error:  # noqa: BLE001  (any failure to record means: run without graphs)
            self.disabled = True
            perf_hints.warning("inductor: mode='reduce-overhead' could not record a CUDA graph (%s: %s); "
                               "running without CUDA graphs", type(error).__name__, error)
            return self.fn(*args)
        self.recordings[key] = recording
        return self._replay(recording, args)

    def _in_place_inputs_moved(self, recording, args, pointers) -> bool:
        moved = {
            k for k, a in enumerate(args)
            if isinstance(a, torch.Tensor) and k not in recording.copied
            and pointers[k] != recording.static_inputs[k].data_ptr()
        }
        self.moved |= moved
        return bool(moved)

    def _record(self, args, copied) -> _Recording:
        static_inputs = [
            _static_copy(a) if k in copied else a for k, a in enumerate(args)
        ]
        # Warm up on a side stream first, as torch.cuda.graphs asks: libraries (cuBLAS) set up
        # per-stream state on first use, which must not happen during capture.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            self.fn(*static_inputs)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outputs = self.fn(*static_inputs)
        # Inputs read in place are held only as their recorded addresses, not kept alive here.
        held = [a if k in copied or not isinstance(a, torch.Tensor) else _AddressOf(a) for k, a in enumerate(static_inputs)]
        return _Recording(graph, held, outputs, frozenset(copied))

    def _replay(self, recording: _Recording, args):
        for k in recording.copied:
            recording.static_inputs[k].copy_(args[k])
        recording.graph.replay()
        return type(recording.outputs)(o.clone() if isinstance(o, torch.Tensor) else o for o in recording.outputs)


class _AddressOf:
    """The device address an in-place input had when its graph was recorded."""

    def __init__(self, tensor: torch.Tensor):
        self.address = tensor.data_ptr()

    def data_ptr(self) -> int:
        return self.address


def _static_copy(tensor: torch.Tensor) -> torch.Tensor:
    static = torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype, device=tensor.device)
    static.copy_(tensor)
    return static


def _signature(args) -> tuple:
    parts = []
    for a in args:
        if isinstance(a, torch.Tensor):
            parts.append((tuple(a.shape), a.stride(), a.dtype, a.device))
        else:
            parts.append(a)
    return tuple(parts)
