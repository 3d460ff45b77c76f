"""CompileOptions: torch.compile's modes and option names, checked once, unknown ones refused
naming the valid ones (compiler's tests compare the modes with torch.compile's)."""

from __future__ import annotations

import pytest
import torch

import inductor
from inductor.options import COMBO_KERNELS_ENV, MODES, CompileOptions


@pytest.mark.parametrize("mode", list(MODES))
def test_each_mode_compiles_a_graph_matching_eager(mode):
    def fn(x):
        return (torch.sigmoid(x * 2 + 1),)

    x = torch.randn(16, 8)
    compiled = inductor.compile_fx(torch.fx.symbolic_trace(fn), [x], mode=mode)
    torch.testing.assert_close(compiled(x)[0], fn(x)[0])


def test_options_override_the_modes_settings():
    chosen = CompileOptions.from_user("max-autotune", {"triton.cudagraphs": False})
    assert chosen.max_autotune and not chosen.cudagraphs
    assert chosen.tuning == "max-autotune"


def test_unknown_mode_names_the_modes():
    with pytest.raises(inductor.InductorError, match="the modes are: default, reduce-overhead, max-autotune-no"):
        CompileOptions.from_user("fast")


def test_unknown_option_names_the_options():
    with pytest.raises(inductor.InductorError, match="'cpu_backnd'; the options are: max_autotune"):
        CompileOptions.from_user(None, {"cpu_backnd": "triton"})


def test_cpu_backend_is_checked():
    with pytest.raises(inductor.InductorError, match="cpp' or 'triton'"):
        CompileOptions.from_user(None, {"cpu_backend": "halide"})


def test_options_are_frozen():
    with pytest.raises(AttributeError):
        CompileOptions().max_autotune = True


def test_combo_kernels_is_off_unless_asked(monkeypatch):
    monkeypatch.delenv(COMBO_KERNELS_ENV, raising=False)
    assert not CompileOptions.from_user().combo_kernels
    assert CompileOptions.from_user(None, {"combo_kernels": True}).combo_kernels
    # the environment sets the default, for an A/B run of a benchmark; options= still decide
    monkeypatch.setenv(COMBO_KERNELS_ENV, "1")
    assert CompileOptions.from_user().combo_kernels
    assert not CompileOptions.from_user(None, {"combo_kernels": False}).combo_kernels
