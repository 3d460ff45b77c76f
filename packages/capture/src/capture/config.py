"""Settings of capture that a user may change (`capture.config.recompile_limit = 16`);
`compiler.config` gathers these with the other packages' settings in one place."""

# Entries one code object may accumulate before capture gives up on it: after that it warns
# once and runs the function eagerly (torch.compile's `recompile_limit`, default 8 too).
recompile_limit: int = 8

# With `dynamic=None`, a recompile caused by a changed size makes that dimension symbolic in
# later captures (torch.compile's `automatic_dynamic_shapes`, default True too); False keeps
# recompiling for every new size, up to `recompile_limit`.
automatic_dynamic_shapes: bool = True

# `Tensor.item()` becomes an unbacked symbolic number (u0) in the graph instead of a graph
# break (torch.compile's `capture_scalar_outputs`, default False too).
capture_scalar_outputs: bool = False

# `nonzero`, boolean-mask indexing, `masked_select`, `unique` stay in the graph with an
# unbacked size (u0) instead of breaking the graph before them (torch.compile's
# `capture_dynamic_output_shape_ops`, default False too).
capture_dynamic_output_shape_ops: bool = False

# Graphs captured inside a DistributedDataParallel forward are split at DDP's gradient
# buckets, so a bucket's all-reduce overlaps the backward of earlier layers
# (capture.distributed; torch.compile's `optimize_ddp`, default True too). False compiles
# each graph whole: every bucket then waits for the end of the backward.
optimize_ddp: bool = True
