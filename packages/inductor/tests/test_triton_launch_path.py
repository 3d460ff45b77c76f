"""Which path a CUDA launch takes (runtime/triton_launch.py), checked on CPU with stand-ins for
the GPU and for Triton: the first launch per binary key goes through Triton, the second calls
the binary's launcher and keeps it, later ones call it straight from `__call__`; a changed key
(a pointer no longer 16-byte aligned, another int), a launch hook or another current device
leaves the fast path."""

import pytest
import torch

from inductor.runtime import triton_launch
from inductor.runtime.triton_configs import Config
from inductor.runtime.triton_launch import TritonLauncher, _Plan, _pointer_reader
from inductor.runtime.wrapper_support import gather


class OnGpu(torch.Tensor):
    """A CPU tensor that says it lives on GPU 0."""

    def get_device(self):
        return 0


class CudaLauncher:
    """Triton's per-binary launcher: `__call__` (Python, allocates any scratch) around the C
    `launch` function."""

    global_scratch_size = profile_scratch_size = 0
    launch_cooperative_grid = launch_pdl = False

    def __init__(self, launches):
        self.launches = launches

    def __call__(self, *args):
        self.launches.append(("binary", args))

    def launch(self, *args):
        self.launches.append(("C launch", args))


class CompiledBinary:
    def __init__(self, launches):
        self.launches, self.function, self.packed_metadata = launches, "function", "metadata"
        self.run = CudaLauncher(launches)


class Jit:
    """Triton's JIT function: `fn[grid](*args, **kwargs)` launches and returns the binary."""

    def __init__(self):
        self.launches = []

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.launches.append(("triton", args))
            return CompiledBinary(self.launches)
        return launch


@pytest.fixture
def launcher(monkeypatch):
    monkeypatch.setattr(triton_launch, "_current_device", lambda: 0)
    monkeypatch.setattr(triton_launch, "_current_stream", lambda device: "stream")
    monkeypatch.setattr(triton_launch, "_launch_hooks_on", lambda: False)
    launcher = TritonLauncher.__new__(TritonLauncher)
    config = Config(XBLOCK=128)
    launcher.fn, launcher.raises, launcher.numel_count, launcher.host_scalars = Jit(), False, 1, ()
    launcher.plans = {(1000,): _Plan(config, (8, 1), config.constexprs(), (128,))}
    launcher.device_arg, launcher._tensors, launcher._ints = 0, gather([0, 1]), gather([2])
    launcher.compiled, launcher.launchers, launcher.binaries = {}, {}, {}
    launcher.unspecialized, launcher._int_positions = frozenset(), (2,)
    launcher.pointer_count, launcher._pointers = 2, _pointer_reader(2)
    return launcher


def paths(launcher) -> list[str]:
    return [path for path, _ in launcher.fn.launches]


def test_steady_state_launches_call_the_binary(launcher, monkeypatch):
    x, out = torch.randn(1000).as_subclass(OnGpu), torch.empty(1000).as_subclass(OnGpu)
    launcher(x, out, 1000)
    launcher(x, out, 1000)
    monkeypatch.setattr(TritonLauncher, "_launch", lambda *a: pytest.fail("the steady state left __call__"))
    launcher(x, out, 1000)
    assert paths(launcher) == ["triton", "binary", "C launch"]
    _, args = launcher.fn.launches[-1]
    assert args[:10] == (8, 1, 1, "stream", "function", False, False, None, None, "metadata")
    assert args[13:16] == (x.data_ptr(), out.data_ptr(), 1000)  # pointers as ints: Triton asks no questions


def test_a_binary_that_needs_scratch_memory_launches_through_its_python_launcher(launcher, monkeypatch):
    monkeypatch.setattr(CudaLauncher, "global_scratch_size", 64)
    x, out = torch.randn(1000).as_subclass(OnGpu), torch.empty(1000).as_subclass(OnGpu)
    for _ in range(3):
        launcher(x, out, 1000)
    assert paths(launcher) == ["triton", "binary", "binary"]
    _, args = launcher.fn.launches[-1]
    assert args[:6] == (8, 1, 1, "stream", "function", "metadata") and args[9:12] == (x.data_ptr(), out.data_ptr(), 1000)


def test_a_changed_key_goes_through_triton_again(launcher):
    base = torch.randn(1001).as_subclass(OnGpu)
    out = torch.empty(1000).as_subclass(OnGpu)
    launcher(base[:1000], out, 1000)
    launcher(base[:1000], out, 1000)
    launcher(base[1:], out, 1000)  # 4 bytes past an aligned pointer: Triton specializes on it
    assert paths(launcher) == ["triton", "binary", "triton"]


def test_launch_hooks_and_another_device_leave_the_fast_path(launcher, monkeypatch):
    x, out = torch.randn(1000).as_subclass(OnGpu), torch.empty(1000).as_subclass(OnGpu)
    launcher(x, out, 1000)
    launcher(x, out, 1000)
    monkeypatch.setattr(triton_launch, "_launch_hooks_on", lambda: True)
    launcher(x, out, 1000)
    monkeypatch.setattr(triton_launch, "_launch_hooks_on", lambda: False)
    monkeypatch.setattr(triton_launch, "_current_device", lambda: 1)
    switched = []
    monkeypatch.setattr(torch.cuda, "device", lambda device: switched.append(device) or _NoContext())
    launcher(x, out, 1000)
    assert paths(launcher) == ["triton", "binary", "triton", "binary"] and switched == [0]


class _NoContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
