"""Guard soundness for tensor arguments whose properties change between calls (dtype,
requires_grad, strides, storage offset, aliasing, rank, sizes 0 and 1, memory format, leaf-ness,
.grad, subclass) and for torch's global state changed between calls (grad mode, inference mode,
autocast, default dtype and device, deterministic algorithms, tf32 flags). See
guard_soundness_harness."""

from __future__ import annotations

import contextlib
import types

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from guard_soundness_harness import backends_of, case, check_case, set_cudnn_allow_tf32


class Tagged(torch.Tensor):
    """A tensor subclass whose torch functions add one: compiled code must not treat it as plain."""

    @classmethod
    def __torch_function__(cls, func, types_, args=(), kwargs=None):
        out = super().__torch_function__(func, types_, args, kwargs or {})
        return out


def tensor_steps(name, make, *builders, **options):
    """A case whose inputs are built by `builders[step]` (each a function of nothing)."""
    return case(name, make, *(lambda state: None,) * (len(builders) - 1), args=lambda state, call: builders[call // 2](), **options)


def fn_of(body):
    return lambda state: body


def reads_metadata(x):
    return x * 2, x.dtype, x.shape, x.stride(), x.is_contiguous(), x.requires_grad


def offset_and_strides(x):
    return x + 1, x.storage_offset(), x.stride(), x.is_contiguous(memory_format=torch.channels_last)


def writes_first_reads_second(a, b):
    a.add_(1)
    return b * 2


def leafness(x):
    return x * 2, x.is_leaf, x.grad_fn is None


def grad_presence(x):
    if x.grad is None:
        return x * 2, None
    return x * 3, x.grad * 1


def rank_dependent(x):
    if x.dim() == 1:
        return x.sum()
    return x.sum(-1), x.size(0)


def size_dependent(x):
    return x + x.new_ones(1), x.numel(), x.size(0) == 1


def is_subclass(x):
    return x + 1, type(x).__name__


def with_grad(shape, **kw):
    return lambda: (torch.randn(shape, **kw).requires_grad_(),)


def nongrad_leaf_copy(x):
    y = x * 1
    return y, x


def _aliased():
    a = torch.randn(4)
    return (a, a)


def _overlapping():
    base = torch.randn(6)
    return (base[:4], base[2:])


def _grad_set():
    x = torch.randn(3, requires_grad=True)
    x.grad = torch.randn(3)
    return (x,)


def storage_placement(x):
    return x * 2 if x.is_shared() else x * 3


TENSOR_CASES = [
    tensor_steps("tensor_dtype_changes", fn_of(reads_metadata), lambda: (torch.randn(3, 4),), lambda: (torch.randn(3, 4).double(),),
                 lambda: (torch.randn(3, 4).half(),), lambda: (torch.randint(0, 5, (3, 4)),), lambda: (torch.rand(3, 4) > 0.5,),
                 backends=("aot_eager", "inductor")),
    tensor_steps("tensor_requires_grad_toggles", fn_of(reads_metadata), lambda: (torch.randn(3, 4),), with_grad((3, 4)),
                 lambda: (torch.randn(3, 4),), backends=("aot_eager", "inductor")),
    tensor_steps("tensor_strides_and_contiguity", fn_of(reads_metadata), lambda: (torch.randn(3, 4),), lambda: (torch.randn(4, 3).t(),),
                 lambda: (torch.randn(3, 8)[:, ::2],), lambda: (torch.randn(3, 4).expand(3, 4),), lambda: (torch.randn(1, 4).expand(3, 4),),
                 backends=("aot_eager", "inductor")),
    tensor_steps("tensor_storage_offset", fn_of(offset_and_strides), lambda: (torch.randn(2, 3, 4, 4),), lambda: (torch.randn(20)[2:14].view(1, 3, 2, 2),),
                 lambda: (torch.randn(2, 3, 4, 4).to(memory_format=torch.channels_last),), lambda: (torch.randn(2, 3, 4, 4),),
                 backends=("aot_eager", "inductor")),
    tensor_steps("tensor_aliasing_between_arguments", fn_of(writes_first_reads_second), lambda: (torch.randn(4), torch.randn(4)), _aliased,
                 _overlapping, lambda: (torch.randn(4), torch.randn(4)), backends=("aot_eager", "inductor")),
    tensor_steps("tensor_rank_changes", fn_of(rank_dependent), lambda: (torch.randn(4),), lambda: (torch.randn(4, 3),), lambda: (torch.randn(2, 4, 3),),
                 lambda: (torch.tensor(2.0),), backends=("aot_eager",)),
    tensor_steps("tensor_size_zero_and_one", fn_of(size_dependent), lambda: (torch.randn(4),), lambda: (torch.randn(1),), lambda: (torch.randn(0),),
                 lambda: (torch.randn(7),), lambda: (torch.randn(1),), backends=("aot_eager", "inductor")),
    tensor_steps("tensor_leafness", fn_of(leafness), with_grad(3), lambda: (torch.randn(3, requires_grad=True) * 1,), with_grad(3),
                 backends=("aot_eager",)),
    tensor_steps("tensor_grad_present", fn_of(grad_presence), with_grad(3), _grad_set, with_grad(3)),
    tensor_steps("tensor_subclass_vs_plain", fn_of(is_subclass), lambda: (torch.randn(3),), lambda: (torch.randn(3).as_subclass(Tagged),),
                 lambda: (torch.nn.Parameter(torch.randn(3)),), lambda: (torch.randn(3),)),
    tensor_steps("tensor_moved_to_shared_memory", fn_of(storage_placement), lambda: (torch.randn(3),), lambda: (torch.randn(3).share_memory_(),),
                 lambda: (torch.randn(3),)),
]


# --- torch's global state ---------------------------------------------------------------------


def factory_and_matmul(x):
    return x @ x.t() + torch.ones(3), torch.zeros(2).dtype, torch.is_grad_enabled(), torch.get_default_dtype()


def reads_flags(x):
    out = x * 2
    if torch.are_deterministic_algorithms_enabled():
        out = out + 1
    if torch.backends.cuda.matmul.allow_tf32:
        out = out + 10
    if torch.backends.cudnn.allow_tf32:
        out = out + 100
    return out, torch.get_float32_matmul_precision()


def reads_default_device(x):
    return x + torch.ones(3).to(x.device), torch.get_default_device(), torch.empty(2).device


def under_autocast(x):
    return x @ x.t(), torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")


def reads_state_queries(x):
    """Process settings read through torch functions that take no tensor (no global-state guard
    kind covers them)."""
    out = x * 2
    if torch.backends.mha.get_fastpath_enabled():
        out = out + 1
    if torch.backends.cuda.flash_sdp_enabled():
        out = out + 10
    return out, torch.get_autocast_cpu_dtype()


def set_grad(enabled):
    return lambda state: torch.set_grad_enabled(enabled)


def leaf_arg(state, call):
    return (torch.randn(3, 3, requires_grad=True),)


GLOBAL_STATE_CASES = [
    case("grad_mode_toggled", fn_of(factory_and_matmul), set_grad(False), set_grad(True), args=leaf_arg, backends=("aot_eager", "inductor")),
    case("default_dtype_changed", fn_of(factory_and_matmul), lambda s: torch.set_default_dtype(torch.float64),
         lambda s: torch.set_default_dtype(torch.float32), args=lambda s, c: (torch.randn(3, 3),), backends=("aot_eager", "inductor")),
    case("deterministic_and_tf32_flags", fn_of(reads_flags), lambda s: torch.use_deterministic_algorithms(True),
         lambda s: setattr(torch.backends.cuda.matmul, "allow_tf32", not torch.backends.cuda.matmul.allow_tf32),
         lambda s: set_cudnn_allow_tf32(not torch.backends.cudnn.allow_tf32),
         lambda s: torch.set_float32_matmul_precision("medium"), lambda s: torch.use_deterministic_algorithms(False)),
    # Inductor has no kernels for the meta device (eager raises on the copy out of meta there).
    case("default_device_changed", fn_of(reads_default_device), lambda s: torch.set_default_device("meta"),
         lambda s: torch.set_default_device("cpu"), lambda s: torch.set_default_device(None),
         args=lambda s, c: (torch.randn(3, device="cpu"),), backends=("aot_eager",), unsupported=("inductor",)),
    # The last mutation puts both flags back (the harness does not restore them).
    case("settings_read_through_torch_queries", fn_of(reads_state_queries), lambda s: torch.backends.mha.set_fastpath_enabled(False),
         lambda s: torch.backends.cuda.enable_flash_sdp(False), lambda s: torch.set_autocast_dtype("cpu", torch.float16),
         lambda s: (torch.backends.mha.set_fastpath_enabled(True), torch.backends.cuda.enable_flash_sdp(True))),
    case("autocast_enabled_between_calls", fn_of(under_autocast), lambda s: torch.set_autocast_enabled("cpu", True),
         lambda s: torch.set_autocast_dtype("cpu", torch.float16), lambda s: torch.set_autocast_enabled("cpu", False),
         args=lambda s, c: (torch.randn(3, 3),), backends=("aot_eager",)),
]


def switch(name):
    return lambda state: setattr(state, name, not getattr(state, name))


def returns_modes(x):
    return x * 2, torch.is_inference_mode_enabled(), torch.is_grad_enabled(), x.is_inference()


def in_modes(state):
    """Calls made inside the `with` blocks the state switches on."""
    stack = contextlib.ExitStack()
    if state.no_grad:
        stack.enter_context(torch.no_grad())
    if state.inference:
        stack.enter_context(torch.inference_mode())
    if state.autocast:
        stack.enter_context(torch.autocast("cpu", dtype=torch.bfloat16))
    return stack


class PlusOne(TorchFunctionMode):
    """Adds one to every product: what a backend compiling under it bakes into its code."""

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out + 1 if func is torch.Tensor.mul else out


class PlusTwo(PlusOne):
    def __torch_function__(self, func, types_, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out + 2 if func is torch.Tensor.mul else out


class PlusFive(TorchDispatchMode):
    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out + 5 if func is torch.ops.aten.mul.Tensor else out


class Scaled(TorchFunctionMode):
    """Scales every product by its `scale`: state a backend compiling under it bakes in."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out * self.scale if func is torch.Tensor.mul else out


def scaled_modes():
    # A subclass per run: a mutation replaces its __torch_function__.
    return types.SimpleNamespace(scale=2, mode=type("HeldScaled", (Scaled,), {})(2))


def squares(x):
    return x * x


def _both(outer, inner):
    stack = contextlib.ExitStack()
    stack.enter_context(outer)
    stack.enter_context(inner)
    return stack


def in_user_mode(state):
    return state.mode() if state.mode is not None else contextlib.nullcontext()


def enter(mode):
    return lambda state: setattr(state, "mode", mode)


def modes(**on):
    return lambda: types.SimpleNamespace(**{"no_grad": False, "inference": False, "autocast": False, **on})


CONTEXT_CASES = [
    case("torch_function_and_dispatch_modes_switched", fn_of(squares), enter(PlusOne), enter(PlusTwo), enter(None), enter(PlusFive),
         enter(None), setup=lambda: types.SimpleNamespace(mode=None), context=in_user_mode, backends=("inductor",)),
    case("function_mode_state_changed", fn_of(squares), lambda s: setattr(s, "scale", 3), lambda s: setattr(s, "scale", 3.0),
         lambda s: setattr(s.mode, "scale", 4), setup=scaled_modes, context=lambda s: _both(Scaled(s.scale), s.mode), backends=("aot_eager",)),
    case("function_mode_method_replaced", fn_of(squares), lambda s: setattr(type(s.mode), "__torch_function__", PlusOne.__torch_function__),
         setup=scaled_modes, context=lambda s: s.mode, backends=("aot_eager",)),
    case("no_grad_block_toggled", fn_of(factory_and_matmul), switch("no_grad"), switch("no_grad"), setup=modes(), context=in_modes,
         args=leaf_arg, backends=("aot_eager",)),
    case("inference_mode_block_toggled", fn_of(returns_modes), switch("inference"), switch("inference"), setup=modes(), context=in_modes,
         backends=("aot_eager",)),
    case("autocast_block_toggled", fn_of(under_autocast), switch("autocast"), switch("autocast"), setup=modes(), context=in_modes,
         args=lambda s, c: (torch.randn(3, 3),), backends=("aot_eager",)),
]


CASES = TENSOR_CASES + GLOBAL_STATE_CASES + CONTEXT_CASES


@pytest.mark.parametrize("backend, case_", [(b, c) for c in CASES for b in backends_of(c)], ids=str)
def test_compiled_function_sees_state_changed_between_calls(backend, case_):
    check_case(case_, backend=backend)
