"""`FakeTensorMode`: while active, factories and ops produce fakes instead of real tensors.

    mode = FakeTensorMode()
    x = mode.from_real(torch.randn(8, 16))      # metadata of a real tensor, no data
    with mode:
        y = torch.nn.functional.linear(x, torch.empty(32, 16))   # y is a FakeTensor (8, 32)

Every ATen op that reaches the mode goes through `execution.run_op`. With a `shape_env`
(dynamic shapes), sizes can be `torch.SymInt`s backed by the shape environment's nodes;
those only work with the Python dispatcher on, so the mode turns it on while active.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import constants, convolution, cpu_kernels, data_dependent, metadata_queries, missing_meta_kernels  # noqa: F401  (op rules)
from . import constant_padding, elementwise_layouts  # noqa: F401  (op rules)
from . import kernel_errors
from .conversion import RealToFake
from .devices import normalize_device
from .execution import run_op
from .modules import fake_module_copy


class FakeTensorMode(TorchDispatchMode):
    """`allow_dynamic_output_shape_ops` / `allow_scalar_outputs` (both need a `shape_env`):
    `nonzero`, boolean-mask indexing, `masked_select`, `unique` / `.item()` return fakes
    whose size / a number that is a fresh unbacked symbol (`u0`), instead of raising
    DataDependentError (see data_dependent.py)."""

    def __init__(self, shape_env=None, *, allow_dynamic_output_shape_ops: bool = False, allow_scalar_outputs: bool = False):
        super().__init__()
        if (allow_dynamic_output_shape_ops or allow_scalar_outputs) and shape_env is None:
            raise ValueError("unbacked sizes and scalars need a FakeTensorMode(shape_env=ShapeEnv(), ...)")
        self.shape_env = shape_env
        self.allow_dynamic_output_shape_ops = allow_dynamic_output_shape_ops
        self.allow_scalar_outputs = allow_scalar_outputs
        self._real_to_fake = RealToFake(self)
        # One entry per (re-)entry of the mode: the Python dispatcher guard, or None.
        self._dispatcher_guards: list[object] = []

    def __enter__(self):
        guard = torch._C._EnablePythonDispatcher() if self.shape_env is not None else None
        self._dispatcher_guards.append(guard)
        try:
            return super().__enter__()
        except BaseException:
            self._dispatcher_guards.pop()
            raise

    def __exit__(self, exc_type, exc_value, traceback):
        try:
            super().__exit__(exc_type, exc_value, traceback)
        finally:
            # Dropping the guard restores the dispatcher state from before this entry.
            self._dispatcher_guards.pop()
        clearer = kernel_errors.restated(exc_value)
        if clearer is not None:
            raise clearer from exc_value
        return False

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # TorchDispatchMode wraps a subclass's __torch_dispatch__ in torch._dynamo's
        # "disable" decorator unless this says False; we never run under torch.compile,
        # and the wrapper costs more than a cached op.
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return run_op(self, func, args, kwargs or {})

    def from_real(self, tensor: torch.Tensor, *, dynamic_dims=None, source=None):
        """The fake standing for `tensor`: same sizes, strides, storage offset, dtype, device,
        requires_grad, leaf-ness and `.grad`; views of one real storage become fakes sharing
        one fake storage. Memoized per tensor (the first call decides `dynamic_dims`); the
        memo does not keep `tensor` alive, and the fake stays usable after it is freed.

        `dynamic_dims` (dims, or a dict dim -> Dim) makes those sizes symbolic through
        `self.shape_env.symbolic_sizes_strides`; `source` names the tensor for its guards.
        """
        return self._real_to_fake.convert(tensor, dynamic_dims=dynamic_dims, source=source)

    def from_module(self, module: torch.nn.Module, *, device="cpu") -> torch.nn.Module:
        """A copy of `module` whose parameters, buffers and tensor attributes are fakes.

        Nothing is allocated; tied parameters stay tied; other attributes are copied. A
        module built on the meta device (`with torch.device("meta"): ...`, the cheap way to
        make a large model: nothing allocated or initialized) works too: its meta tensors
        become fakes standing for tensors on `device`, so they meet inputs there (as with
        `from_real`, a tensor's first conversion in this mode decides its fake)."""
        return fake_module_copy(self, module, normalize_device(device))
