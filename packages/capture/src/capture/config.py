"""Settings of capture that a user may change (`capture.config.recompile_limit = 16`)."""

# Entries one code object may accumulate before capture gives up on it: after that it warns
# once and runs the function eagerly (torch.compile's `recompile_limit`, default 8 too).
recompile_limit: int = 8
