"""CPU values that CUDA kernels read, moved to the device once per call and without waiting.

Eager lets a CPU 0-d tensor join CUDA ops as a scalar: an optimizer's step counts live on the
CPU (`capturable=False`), and the bias corrections computed from them are read by every
parameter's update kernel. A kernel can only read device memory, so the launcher copies such
arguments itself, but each copy from pageable memory blocks the host until the GPU is idle: a
compiled AdamW step over 48 parameters made 73 of them per call on an H200 (3.1 ms for 0.97 ms
of GPU time). Instead the wrapper
- computes a CPU buffer that CUDA kernels read into pinned memory and copies it to the device
  right after the step computing it (one asynchronous copy);
- gathers the 0-d CPU arguments CUDA kernels read into one pinned tensor per device and dtype,
  copied once, after the last step that writes any of them (a step count is incremented in
  the graph before the kernels read it), and hands the kernels views of the copy.
An argument some step writes after a CUDA kernel has read it, or that an extern op may write,
keeps the launcher's own copy.
"""

from __future__ import annotations

from collections import defaultdict

from ..ir import KERNEL_STEPS, ComputedBuffer, InputBuffer

BIND_TIME = -1  # "after step -1": with the arguments


class HostValues:
    def __init__(self, steps: list, kernels: dict, buffers: dict, input_writes: dict[str, str], reads):
        """`reads(step)`: the buffer names a step reads (the wrapper's own accounting)."""
        self.on_device: dict[str, str] = {}          # CPU buffer -> the name of its device copy
        self.pinned: set[str] = set()                # computed buffers allocated in pinned memory
        self._after: dict[int, list[str]] = defaultdict(list)
        device_reads: dict[str, list[int]] = defaultdict(list)
        device_of: dict[str, object] = {}
        for k, step in enumerate(steps):
            if isinstance(step, KERNEL_STEPS) and step.device.type == "cuda":
                for name in kernels[step.name].args:
                    buf = buffers.get(name)
                    if buf is not None and buf.layout.device.type == "cpu":
                        device_reads[name].append(k)
                        device_of.setdefault(name, step.device)
        producer = {node.name: k for k, step in enumerate(steps) if isinstance(step, KERNEL_STEPS)
                    for node in step.nodes}
        written_at: dict[str, list[int]] = defaultdict(list)  # input -> steps storing into it
        for name, target in input_writes.items():
            if name in producer:
                written_at[target].append(producer[name])
        read_by_externs = {name for step in steps if not isinstance(step, KERNEL_STEPS)
                           for name in reads(step)}
        staged: dict[tuple[int, object, object], list[str]] = defaultdict(list)
        for name, reading_steps in device_reads.items():
            buf = buffers[name]
            if isinstance(buf, ComputedBuffer) and name in producer:
                self.pinned.add(name)
                self.on_device[name] = f"{name}_on_device"
                self._after[producer[name]].append(
                    f"    {name}_on_device = {name}.to({str(device_of[name])!r}, non_blocking=True)")
            elif isinstance(buf, InputBuffer) and tuple(buf.layout.size) == () and name not in read_by_externs:
                last_write = max(written_at.get(name, ()), default=BIND_TIME)
                if last_write < min(reading_steps):
                    staged[(last_write, device_of[name], buf.layout.dtype)].append(name)
        for n, ((after, device, dtype), names) in enumerate(sorted(staged.items(), key=lambda kv: kv[0][0])):
            copy = f"host_scalars{n}"
            self._after[after] += [
                f"    {copy} = torch.stack([{', '.join(names)}]).pin_memory().to({str(device)!r}, non_blocking=True)",
                f"    {', '.join(f'{name}_on_device' for name in names)}, = {copy}.unbind()",
            ]
            self.on_device.update({name: f"{name}_on_device" for name in names})

    def lines_after(self, k: int) -> list[str]:
        """The copies to make once step `k` ran (BIND_TIME: once the arguments are bound)."""
        return self._after.get(k, [])

