"""Compiling a DistributedDataParallel module (capture.optimize's `DDPOptimizedModule`).

As with torch.compile, DDP's own Python (`_pre_forward`, `_post_forward`, the reducer's
bookkeeping, buffer broadcasts) runs natively; what is compiled is the wrapped module's
forward, which DDP calls in the middle. While the compiled module runs, the inner module's
`forward` is its compiled version (an instance attribute, removed afterwards), so DDP's
`self.module(*inputs)` runs the inner module's own hooks natively and the compiled forward.
DDP marks itself active around that call, and graphs captured while a DDP module is active
are split at its bucket boundaries (capture.distributed.buckets), so `DDP(compiled_model)`
is split too.
"""

from __future__ import annotations

from typing import Callable

from torch import nn

from .buckets import DDPBucketing


def is_ddp(module: nn.Module) -> bool:
    from torch.nn.parallel import DistributedDataParallel

    return isinstance(module, DistributedDataParallel)


def active_ddp() -> nn.Module | None:
    """The DDP module whose forward is running (DDP marks itself around its call of the inner
    module, for torch.compile's DDPOptimizer): a graph captured then is split at its buckets,
    whether the DDP module or the module inside it was compiled."""
    from torch.nn.parallel import DistributedDataParallel

    return DistributedDataParallel._get_active_ddp_module()


def bucketing_backend(ddp: nn.Module, backend: Callable, splits: list) -> DDPBucketing:
    """`backend` behind a DDPBucketing with `ddp`'s bucket caps (`bucket_cap_mb`; the first
    bucket is smaller when the cap is DDP's default, as in DDP's own assignment)."""
    import torch.distributed as dist

    cap = ddp.bucket_bytes_cap
    config = getattr(ddp, "_bucket_config", None)
    if config is not None:
        first = config.first_bucket_bytes_cap
    else:
        first = dist._DEFAULT_FIRST_BUCKET_BYTES if getattr(ddp, "bucket_bytes_cap_default", False) else cap
    return DDPBucketing(backend, splits, bucket_bytes_cap=cap, first_bucket_bytes_cap=first)


class InnerForward:
    """Context manager: `inner.forward` is `compiled_forward` inside the block."""

    def __init__(self, inner: nn.Module, compiled_forward: Callable):
        self.inner = inner
        self.compiled_forward = compiled_forward

    def __enter__(self):
        self.saved = self.inner.__dict__.get("forward")
        self.inner.__dict__["forward"] = self.compiled_forward

    def __exit__(self, *exc):
        if self.saved is None:
            del self.inner.__dict__["forward"]
        else:
            self.inner.__dict__["forward"] = self.saved
