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

Each set of sizes the wrapper reads from its arguments (its `size_key`) and of non-tensor
arguments gets its own recording; every other property of the inputs (dtypes, static sizes,
strides) is fixed by what the kernels were compiled for, and checked before the compiled
graph is called (capture's guards), as without CUDA graphs. An input read in place that
later moves is copied from then on (one re-recording). If a call cannot be recorded (it
synchronizes with the host, say), the runner logs why and runs the graph without CUDA
graphs from then on.

Host time per replay is the point of this mode, so a replay does only what its recording
needs: one C-level pass over the in-place inputs' addresses, the copies in, the replay,
and the outputs copied out in one `_foreach_copy_`. Outputs are copies, not the graph's
own memory: they survive the next replay (torch.compile's cudagraph trees instead hand out
the graph's memory and fail a read of an output a later replay overwrote).
"""

from __future__ import annotations

import torch

from .. import logs
from .wrapper_support import gather

perf_hints = logs.channel("perf_hints")


class _Recording:
    def __init__(self, graph, static_inputs, outputs, copied, in_place: tuple[int, ...]):
        self.graph, self.static_inputs, self.outputs, self.copied = graph, static_inputs, outputs, copied
        # The tensors read in place, as one C-level gather, and the addresses they were recorded at.
        self.in_place = gather(in_place)
        self.addresses = tuple(static_inputs[k].data_ptr() for k in in_place)
        self.copied_in = [(static_inputs[k], k) for k in sorted(copied)]
        # Outputs copied out with one multi-tensor copy into tensors allocated in one `map`;
        # clone() where autograd must see it. Which outputs are tensors is fixed per recording.
        self.tensor_outputs = [o for o in outputs if isinstance(o, torch.Tensor)]
        self.tensor_positions = [k for k, o in enumerate(outputs) if isinstance(o, torch.Tensor)]
        self.only_tensors = len(self.tensor_outputs) == len(outputs)
        self.copy_out = bool(self.tensor_outputs) and not any(o.requires_grad for o in self.tensor_outputs)


class CudaGraphRunner:
    def __init__(self, fn):
        self.fn = fn
        self.first_pointers: tuple | None = None
        self.moved: set[int] = set()          # inputs once read in place that have since moved
        self.recordings: dict[tuple, _Recording] = {}
        self.disabled = False
        self._numbers = None  # a gather of the non-tensor arguments, set at the first call

    def __getattr__(self, name):
        # `source`, `kernel_sources`, `kernel_count`... of the compiled graph being replayed.
        return getattr(self.fn, name)

    def __call__(self, *args):
        if self.disabled:
            return self.fn(*args)
        if self.first_pointers is None:
            self.first_pointers = _pointers(args)
            self._numbers = gather([k for k, a in enumerate(args) if not isinstance(a, torch.Tensor)])
            return self.fn(*args)
        key = self._key(args)
        recording = self.recordings.get(key)
        if recording is not None:
            if tuple(map(_data_ptr, recording.in_place(args))) == recording.addresses:
                return self._replay(recording, args)
            self._note_moved(recording, args)
        pointers = _pointers(args)
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

    def _key(self, args) -> tuple:
        """What tells recordings apart: the sizes the wrapper reads, and the non-tensor arguments."""
        size_key = getattr(self.fn, "size_key", None)
        if size_key is None:  # a graph without a wrapper of ours: every input's metadata
            return _signature(args)
        return size_key(args), self._numbers(args)

    def _note_moved(self, recording: _Recording, args) -> None:
        self.moved |= {
            k for k, a in enumerate(args)
            if isinstance(a, torch.Tensor) and k not in recording.copied
            and a.data_ptr() != recording.static_inputs[k].data_ptr()
        }

    def _record(self, args, copied) -> _Recording:
        static_inputs = [
            _static_copy(a) if k in copied else a for k, a in enumerate(args)
        ]
        graph, outputs = self._capture(static_inputs)
        # Inputs read in place are held only as their recorded addresses, not kept alive here.
        held = [a if k in copied or not isinstance(a, torch.Tensor) else _AddressOf(a) for k, a in enumerate(static_inputs)]
        in_place = tuple(k for k, a in enumerate(args) if isinstance(a, torch.Tensor) and k not in copied)
        return _Recording(graph, held, outputs, frozenset(copied), in_place)

    def _capture(self, static_inputs):
        """A CUDA graph of one call on `static_inputs`, and the outputs it writes."""
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
        return graph, outputs

    def _replay(self, recording: _Recording, args):
        for static, k in recording.copied_in:
            static.copy_(args[k])
        recording.graph.replay()
        outputs = recording.outputs
        if not recording.copy_out:
            return type(outputs)(o.clone() if isinstance(o, torch.Tensor) else o for o in outputs)
        copies = list(map(_empty_like, recording.tensor_outputs))
        torch._foreach_copy_(copies, recording.tensor_outputs)
        if recording.only_tensors:
            return type(outputs)(copies)
        result = list(outputs)
        for k, tensor in zip(recording.tensor_positions, copies):
            result[k] = tensor
        return type(outputs)(result)


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


def _pointers(args) -> tuple:
    return tuple(a.data_ptr() if isinstance(a, torch.Tensor) else None for a in args)


_data_ptr = torch.Tensor.data_ptr
_empty_like = torch.empty_like
