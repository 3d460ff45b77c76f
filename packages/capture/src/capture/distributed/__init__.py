"""Compiling models wrapped by torch.distributed: DDP's forward runs natively around the
compiled inner module (`ddp`), whose graphs are split at DDP's gradient buckets (`buckets`).
Exports `is_ddp`, `active_ddp`, `bucketing_backend`, `InnerForward`, `DDPBucketing`, `GraphSplit`."""

from .buckets import DDPBucketing, GraphSplit
from .ddp import InnerForward, active_ddp, bucketing_backend, is_ddp

__all__ = ["DDPBucketing", "GraphSplit", "InnerForward", "active_ddp", "bucketing_backend", "is_ddp"]
