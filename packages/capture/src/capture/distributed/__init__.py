"""Compiling models wrapped by torch.distributed: DDP's forward runs natively around the
compiled inner module (`ddp`), whose graphs are split at DDP's gradient buckets (`buckets`).
Exports `is_ddp`, `bucketing_backend`, `InnerForward`, `DDPBucketing`, `GraphSplit`."""

from .buckets import DDPBucketing, GraphSplit
from .ddp import InnerForward, bucketing_backend, is_ddp

__all__ = ["DDPBucketing", "GraphSplit", "InnerForward", "bucketing_backend", "is_ddp"]
