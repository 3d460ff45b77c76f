"""Settings of capture that a user may change (`capture.config.recompile_limit = 16`);
`compiler.config` gathers these with the other packages' settings in one place."""

# Entries one code object may accumulate before capture gives up on it: after that it warns
# once and runs the function eagerly (torch.compile's `recompile_limit`, default 8 too).
recompile_limit: int = 8

# With `dynamic=None`, a recompile caused by a changed size makes that dimension symbolic in
# later captures (torch.compile's `automatic_dynamic_shapes`, default True too); False keeps
# recompiling for every new size, up to `recompile_limit`.
automatic_dynamic_shapes: bool = True
