"""The log channels inductor writes to: fake_tensor.logs, which capture and inductor share."""

from fake_tensor.logs import ENV_VAR, PARENT, StderrHandler, channel, compile_time, phase, phase_step, set_up

__all__ = ["ENV_VAR", "PARENT", "StderrHandler", "channel", "compile_time", "phase", "phase_step", "set_up"]
