"""mode= and options= as torch.compile takes them: every mode of torch.compile's (but "lite")
is accepted, unknown modes and option keys are refused when compile() is called naming the
valid ones, mode and options together are refused, and a custom backend declaring an
`options` parameter receives them, as torch.compile passes them."""

from __future__ import annotations

import pytest
import torch

import compiler
import inductor

TORCH_MODES = ["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"]


def fn(x):
    return torch.sigmoid(x * 2 + 1)


@pytest.mark.parametrize("mode", TORCH_MODES)
def test_every_torch_compile_mode_is_accepted_and_matches_eager(mode):
    torch.compile(fn, mode=mode)  # the reference accepts it too
    x = torch.randn(8, 3)
    torch.testing.assert_close(compiler.compile(fn, mode=mode)(x), fn(x))


def test_modes_are_torch_compiles_except_lite():
    from torch._inductor import list_mode_options

    assert set(list_mode_options()) - {"lite"} == set(inductor.options.MODES)


@pytest.mark.parametrize("mode", TORCH_MODES)
def test_modes_set_what_torch_compiles_modes_set(mode):
    from torch._inductor import list_mode_options

    reference = list_mode_options()[mode]
    ours = inductor.CompileOptions.from_user(mode)
    assert ours.max_autotune == reference.get("max_autotune", False)
    assert ours.cudagraphs == reference.get("triton.cudagraphs", False)


def test_unknown_mode_is_refused_at_compile_naming_the_modes():
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        torch.compile(fn, mode="fastest")
    with pytest.raises(inductor.InductorError, match="the modes are: default, reduce-overhead"):
        compiler.compile(fn, mode="fastest")


def test_unknown_option_is_refused_at_compile_naming_the_options():
    with pytest.raises(RuntimeError, match="Unexpected optimization option"):
        torch.compile(fn, options={"no_such_option": True})
    with pytest.raises(inductor.InductorError, match="'no_such_option'; the options are: max_autotune, triton"):
        compiler.compile(fn, options={"no_such_option": True})


def test_known_options_are_accepted_and_match_eager():
    x = torch.randn(8, 3)
    for options in ({"max_autotune": True}, {"triton.cudagraphs": False}, {"fallback_random": True}):
        torch.compile(fn, options=options)  # names torch knows too
        torch.testing.assert_close(compiler.compile(fn, options=options)(x), fn(x))


def test_mode_and_options_together_are_refused_like_torch_compile():
    with pytest.raises(RuntimeError) as reference:
        torch.compile(fn, mode="max-autotune", options={"max_autotune": True})
    with pytest.raises(RuntimeError) as ours:
        compiler.compile(fn, mode="max-autotune", options={"max_autotune": True})
    assert str(ours.value) == str(reference.value)


def test_custom_backend_declaring_options_receives_them_like_torch_compile():
    def run(compile_fn):
        seen = []

        def backend(gm, example_inputs, *, options=None):
            seen.append(options)
            return gm.forward

        x = torch.randn(3)
        torch.testing.assert_close(compile_fn(fn, backend=backend, options={"knob": 3})(x), fn(x))
        return seen

    torch._dynamo.reset()
    assert run(compiler.compile) == run(torch.compile) == [{"knob": 3}]


def test_backend_taking_no_options_is_a_clear_error():
    with pytest.raises(TypeError, match="takes no mode="):
        compiler.compile(fn, backend="eager", mode="max-autotune")
    # mode="default" asks for nothing.
    x = torch.randn(2)
    torch.testing.assert_close(compiler.compile(fn, backend="eager", mode="default")(x), fn(x))
