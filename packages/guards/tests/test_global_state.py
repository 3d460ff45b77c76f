"""Global-state guards: pass in the state they were built in, fail when one setting changes."""

from __future__ import annotations

import contextlib

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from guards import (
    AutocastState,
    DefaultDtype,
    DeterministicAlgorithms,
    GradMode,
    GuardSet,
    InferenceMode,
    LocalSource,
    TensorMatch,
    TorchFunctionModes,
    current_global_state,
    global_state_guards,
)
from guards.kinds.global_state import function_mode_kinds


@contextlib.contextmanager
def default_dtype(dtype):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


@contextlib.contextmanager
def deterministic(warn_only=False):
    # The C setter behind torch.use_deterministic_algorithms, which also imports (and
    # configures) torch._inductor: ten seconds on first use, and not what we test.
    old, old_warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch._C._set_deterministic_algorithms(True, warn_only=warn_only)
    try:
        yield
    finally:
        torch._C._set_deterministic_algorithms(old, warn_only=old_warn)


class PassThroughMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class PassThroughDispatchMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


# Each entry: a context that changes one global setting, and the start of the sentence `why`
# gives when the snapshot taken outside it is checked inside it.
CHANGES = {
    "grad mode": (torch.no_grad, "torch.is_grad_enabled() is True failed: got False"),
    "inference mode": (torch.inference_mode, "torch.is_grad_enabled() is True failed: got False"),
    "autocast cpu": (lambda: torch.autocast("cpu", dtype=torch.bfloat16), "autocast is off on every device failed: got True"),
    "default dtype": (lambda: default_dtype(torch.float64), "torch.get_default_dtype() == torch.float32 failed: got torch.float64"),
    "deterministic": (deterministic, "torch.are_deterministic_algorithms_enabled() is False failed: got True"),
    "torch function mode": (PassThroughMode, "no torch function mode is active failed: got 1"),
    "torch dispatch mode": (PassThroughDispatchMode, "torch dispatch mode stack depth == 0 failed: got 1"),
}


@pytest.mark.parametrize("change, sentence", CHANGES.values(), ids=CHANGES.keys())
def test_global_state_snapshot_fails_on_single_change(change, sentence):
    guard = GuardSet(global_state_guards()).compile(parameters=[])
    assert guard()
    with change():
        assert not guard()
        assert guard.why() == sentence
    assert guard()


@pytest.mark.parametrize("change", [c for c, _ in CHANGES.values()], ids=CHANGES.keys())
def test_snapshot_taken_inside_a_change_holds_only_there(change):
    with change():
        guard = GuardSet(global_state_guards()).compile(parameters=[])
        assert guard()
    assert not guard()


def test_autocast_dtype_is_part_of_the_state():
    with torch.autocast("cpu", dtype=torch.bfloat16):
        guard = GuardSet([AutocastState((("cpu", torch.bfloat16),))]).compile(parameters=[])
        assert guard()
    with torch.autocast("cpu", dtype=torch.float16):
        assert not guard()
        assert guard.why() == "torch.get_autocast_dtype('cpu') == torch.bfloat16 failed: got torch.float16"
    assert guard.why() == "torch.is_autocast_enabled('cpu') is True failed: got False"


def test_deterministic_warn_only_matters_when_enabled():
    with deterministic(warn_only=True):
        guard = GuardSet([DeterministicAlgorithms(True, warn_only=True)]).compile(parameters=[])
        assert guard()
    with deterministic(warn_only=False):
        assert not guard()
    assert DeterministicAlgorithms(False, warn_only=True) == DeterministicAlgorithms(False)


def test_grad_mode_on_does_not_make_inference_mode_guard_redundant():
    # enable_grad() inside inference_mode() turns grad mode on while inference mode stays on.
    guard = GuardSet([GradMode(True), InferenceMode(False)]).compile(parameters=[])
    assert guard()
    with torch.inference_mode(), torch.enable_grad():
        assert torch.is_grad_enabled()
        assert not guard()
        assert guard.why() == "torch.is_inference_mode_enabled() is False failed: got True"


def test_inference_mode_is_checked_when_grad_is_off():
    with torch.no_grad():
        guard = GuardSet(global_state_guards()).compile(parameters=[])
        assert guard()
        with torch.inference_mode():
            assert guard.why() == "torch.is_inference_mode_enabled() is False failed: got True"


def test_default_dtype_guard():
    guard = GuardSet([DefaultDtype(torch.float32)]).compile(parameters=[])
    with default_dtype(torch.float16):
        assert not guard()
    assert guard()


class OtherPassThroughMode(PassThroughMode):
    pass


def test_torch_function_modes_by_type():
    """A mode of another type at the same depth fails: a backend compiling under a mode bakes in
    what that type does."""
    with PassThroughMode():
        guard = GuardSet([TorchFunctionModes(function_mode_kinds())]).compile(parameters=[])
        assert guard()
    assert not guard()
    with OtherPassThroughMode():
        assert not guard()
    with PassThroughMode():
        assert guard()
    assert guard.why().startswith("the torch function modes are (PassThroughMode(),) failed: got ()")


class ScaledMode(TorchFunctionMode):
    def __init__(self, scale, log):
        super().__init__()
        self.scale, self.log = scale, log

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {})) * self.scale


def test_torch_function_modes_by_what_their_torch_function_can_read():
    """The mode's `__torch_function__` ran natively while capturing: what it read (its instance
    attributes, its class's methods) is baked in. A new instance with equal numbers, and the
    same other objects, matches (`with Mode(2):` makes one per call)."""
    log = []
    with ScaledMode(2, log):
        guard = GuardSet([TorchFunctionModes(function_mode_kinds())]).compile(parameters=[])
    with ScaledMode(2, log):
        assert guard()
    for other in (ScaledMode(3, log), ScaledMode(2.0, log), ScaledMode(2, [])):
        with other:
            assert not guard()
    with ScaledMode(2, log):
        log.append(1)  # the same list: identity, not contents
        assert guard()
        ScaledMode.__torch_function__ = lambda self, func, types, args=(), kwargs=None: func(*args, **(kwargs or {}))
        try:
            assert not guard()
        finally:
            ScaledMode.__torch_function__ = _scaled_torch_function
    assert "ScaledMode(scale=2, log)" in guard.why()


_scaled_torch_function = ScaledMode.__dict__["__torch_function__"]


def test_default_device_mode_by_device():
    """torch.set_default_device pushes one mode type for every device: the device is part of it."""
    before = torch.get_default_device()
    try:
        torch.set_default_device("meta")
        guard = GuardSet(global_state_guards()).compile(parameters=[])
        assert guard()
        torch.set_default_device("cpu")
        assert not guard()
        assert "default device meta" in guard.why()
    finally:
        torch.set_default_device(None if before == torch.device("cpu") else before)


@pytest.mark.parametrize("change, sentence", CHANGES.values(), ids=CHANGES.keys())
def test_split_global_state_equals_current_state_exactly_where_the_guards_hold(change, sentence):
    guards = GuardSet(global_state_guards())
    split = guards.compile(parameters=[], split_global_state=True)
    assert split.global_state == current_global_state()
    with change():
        assert split.global_state != current_global_state()
        assert split.why() == sentence == guards.compile(parameters=[]).why()
    assert split.global_state == current_global_state()


@pytest.mark.parametrize("change", [c for c, _ in CHANGES.values()], ids=CHANGES.keys())
def test_split_state_taken_inside_a_change_equals_current_state_only_there(change):
    with change():
        state = GuardSet(global_state_guards()).compile(parameters=[], split_global_state=True).global_state
        assert state == current_global_state()
    assert state != current_global_state()


def test_split_guard_function_checks_everything_else():
    x = torch.randn(3)
    guards = GuardSet([*global_state_guards(), TensorMatch.of(LocalSource("x"), x)])
    split = guards.compile(parameters=["x"], split_global_state=True)
    assert "is_grad_enabled" not in split.source
    assert split(x) and not split(x.double())
    with torch.no_grad():
        assert split(x)  # the caller compares split.global_state instead
        assert split.why(x) == "torch.is_grad_enabled() is True failed: got False"
    assert split.why(x.double()) == "L['x'].dtype == torch.float32 failed: got torch.float64"
    assert guards.compile(parameters=["x"]).global_state is None


def test_settings_a_split_set_does_not_guard_are_free():
    state = GuardSet([GradMode(True)]).compile(parameters=[], split_global_state=True).global_state
    with default_dtype(torch.float64), PassThroughMode():
        assert state == current_global_state()
    with torch.no_grad():
        assert state != current_global_state()


def test_contradictory_split_set_matches_no_state():
    guard = GuardSet([GradMode(True), GradMode(False)]).compile(parameters=[], split_global_state=True)
    assert guard.global_state is None
    assert guard.global_state != current_global_state()
    assert guard.why() is not None
