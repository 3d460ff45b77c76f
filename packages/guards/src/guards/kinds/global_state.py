"""Guards on torch's global (thread-local) state that changes what a traced graph means.

Grad mode decides whether a training graph (with backward) or an inference graph was built;
autocast changes op dtypes; the default dtype is baked into factory calls; deterministic
mode changes kernel choices; inference mode changes tensor semantics; an active
TorchFunctionMode would be bypassed by a compiled graph.

Each reader is the direct `torch._C` function, bound once as a constant of the guard
function (no `torch.` attribute walk per call). `global_state_guards()` snapshots them all.

`current_global_state()` reads every setting into one tuple, so that a caller with several
compiled entries reads them once per call and compares the tuple with each entry's
`global_state_of(guards)` (see GuardSet.compile's `split_global_state`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import torch
from torch.utils._device import DeviceContext

from ..codegen import Check, EmitContext, check, must_be, must_be_truth, must_equal
from .base import PRIORITY_GLOBAL_STATE, PRIORITY_GRAD_MODE, Guard, emits


def _state_check(ctx: EmitContext, reader, name: str, spelling: str, expected: bool, text: str) -> Check:
    call = f"{ctx.constant(reader, name, spelling)}()"
    return check(must_be_truth(call, expected), text, call)


@dataclasses.dataclass(frozen=True)
class GradMode(Guard):
    """`torch.is_grad_enabled()` is `enabled`."""

    enabled: bool
    priority = PRIORITY_GRAD_MODE

    def __str__(self) -> str:
        return f"torch.is_grad_enabled() is {self.enabled}"

    # Grad mode on does not imply inference mode off: `torch.enable_grad()` inside
    # `torch.inference_mode()` turns grad mode on again, so both guards are kept.

    def state(self) -> bool:
        return self.enabled


@emits(GradMode)
def _grad_mode(guard: GradMode, ctx: EmitContext) -> list[Check]:
    return [_state_check(ctx, torch._C.is_grad_enabled, "is_grad_enabled", "torch.is_grad_enabled", guard.enabled, str(guard))]


@dataclasses.dataclass(frozen=True)
class InferenceMode(Guard):
    """`torch.is_inference_mode_enabled()` is `enabled`."""

    enabled: bool
    priority = PRIORITY_GLOBAL_STATE

    def __str__(self) -> str:
        return f"torch.is_inference_mode_enabled() is {self.enabled}"

    def state(self) -> bool:
        return self.enabled


@emits(InferenceMode)
def _inference_mode(guard: InferenceMode, ctx: EmitContext) -> list[Check]:
    reader = torch._C.is_inference_mode_enabled
    return [_state_check(ctx, reader, "is_inference_mode_enabled", "torch.is_inference_mode_enabled", guard.enabled, str(guard))]


@dataclasses.dataclass(frozen=True)
class DefaultDtype(Guard):
    """`torch.get_default_dtype() is dtype`."""

    dtype: torch.dtype
    priority = PRIORITY_GLOBAL_STATE

    def __str__(self) -> str:
        return f"torch.get_default_dtype() == {self.dtype}"

    def state(self) -> torch.dtype:
        return self.dtype


@emits(DefaultDtype)
def _default_dtype(guard: DefaultDtype, ctx: EmitContext) -> list[Check]:
    call = f"{ctx.constant(torch._C.get_default_dtype, 'get_default_dtype', 'torch.get_default_dtype')}()"
    dtype = ctx.constant(guard.dtype, str(guard.dtype).removeprefix("torch."), str(guard.dtype))
    return [check(must_be(call, dtype), str(guard), call)]


@dataclasses.dataclass(frozen=True)
class DeterministicAlgorithms(Guard):
    """`torch.are_deterministic_algorithms_enabled()` is `enabled` (and, when enabled, the
    warn-only setting matches: it decides between a warning and an error)."""

    enabled: bool
    warn_only: bool = False
    priority = PRIORITY_GLOBAL_STATE

    def __post_init__(self) -> None:
        # warn_only means nothing while disabled; normalize so equal states compare equal.
        if not self.enabled:
            object.__setattr__(self, "warn_only", False)

    def __str__(self) -> str:
        extra = f" (warn_only={self.warn_only})" if self.enabled else ""
        return f"torch.are_deterministic_algorithms_enabled() is {self.enabled}{extra}"

    def state(self) -> tuple[bool, bool]:
        return (self.enabled, self.warn_only)


@emits(DeterministicAlgorithms)
def _deterministic(guard: DeterministicAlgorithms, ctx: EmitContext) -> list[Check]:
    checks = [
        _state_check(
            ctx,
            torch._C._get_deterministic_algorithms,
            "deterministic_algorithms",
            "torch.are_deterministic_algorithms_enabled",
            guard.enabled,
            f"torch.are_deterministic_algorithms_enabled() is {guard.enabled}",
        )
    ]
    if guard.enabled:
        checks.append(
            _state_check(
                ctx,
                torch._C._get_deterministic_algorithms_warn_only,
                "deterministic_warn_only",
                "torch.is_deterministic_algorithms_warn_only_enabled",
                guard.warn_only,
                f"torch.is_deterministic_algorithms_warn_only_enabled() is {guard.warn_only}",
            )
        )
    return checks


@dataclasses.dataclass(frozen=True)
class AutocastState(Guard):
    """Autocast is enabled exactly on the device types of `enabled`, with those dtypes.

    `enabled` is a tuple of (device type, dtype) pairs; empty means autocast is off
    everywhere, which one call (`torch._C._is_any_autocast_enabled`) checks.
    """

    enabled: tuple[tuple[str, torch.dtype], ...] = ()
    priority = PRIORITY_GLOBAL_STATE

    def __str__(self) -> str:
        if not self.enabled:
            return "autocast is off on every device"
        on = ", ".join(f"{device} ({str(dtype).removeprefix('torch.')})" for device, dtype in self.enabled)
        return f"autocast is on exactly for {on}"

    def state(self) -> tuple[tuple[str, torch.dtype], ...]:
        # In the order current_global_state() reads devices; the guard ignores other devices.
        on = dict(self.enabled)
        return tuple((device, on[device]) for device in _autocast_device_types() if device in on)


@emits(AutocastState)
def _autocast(guard: AutocastState, ctx: EmitContext) -> list[Check]:
    if not guard.enabled:
        return [
            _state_check(
                ctx, torch._C._is_any_autocast_enabled, "is_any_autocast_enabled",
                "torch._C._is_any_autocast_enabled", False, str(guard),
            )
        ]
    is_enabled = ctx.constant(torch.is_autocast_enabled, "is_autocast_enabled", "torch.is_autocast_enabled")
    get_dtype = ctx.constant(torch.get_autocast_dtype, "get_autocast_dtype", "torch.get_autocast_dtype")
    on = dict(guard.enabled)
    checks = []
    for device in _autocast_device_types():
        call = f"{is_enabled}({device!r})"
        expected = device in on
        text = f"torch.is_autocast_enabled({device!r}) is {expected}"
        checks.append(check(must_be_truth(call, expected), text, call))
        if expected:
            dtype = ctx.constant(on[device], str(on[device]).removeprefix("torch."), str(on[device]))
            dtype_call = f"{get_dtype}({device!r})"
            text = f"torch.get_autocast_dtype({device!r}) == {on[device]}"
            checks.append(check(must_be(dtype_call, dtype), text, dtype_call))
    return checks


def _autocast_device_types() -> list[str]:
    return list(torch._C._autocast_supported_devices())


@dataclasses.dataclass(frozen=True)
class TorchFunctionModes(Guard):
    """The active TorchFunctionModes are of the types `kinds`, innermost last (none: a compiled
    graph that skips `__torch_function__` dispatch behaves the same), each with the state its
    `__torch_function__` could read (`ModeKind`). Not the instances: a `with Mode():` block
    makes a new one per call, and a backend compiling under a mode bakes in what it did
    (another mode at the same depth, or one with another `scale`, must not be served that
    code)."""

    kinds: tuple = ()  # function_mode_kinds()
    priority = PRIORITY_GLOBAL_STATE

    def __str__(self) -> str:
        if not self.kinds:
            return "no torch function mode is active"
        return f"the torch function modes are ({', '.join(map(_kind_text, self.kinds))},)"

    def state(self) -> tuple:
        return self.kinds


def _kind_text(kind) -> str:
    return f"default device {kind[1]}" if isinstance(kind, tuple) else str(kind) if isinstance(kind, ModeKind) else kind.__qualname__


def function_mode_kinds() -> tuple:
    """The types of the active TorchFunctionModes, innermost last; torch.set_default_device's
    mode with its device (one type for every device, and factory calls bake it in)."""
    depth = torch._C._len_torch_function_stack()
    return tuple(_mode_kind(torch._C._get_function_stack_at(level)) for level in range(depth)) if depth else ()


def _mode_kind(mode) -> object:
    kind = type(mode)
    if kind is DeviceContext:
        return (DeviceContext, mode.device)
    classes = tuple(k for k in kind.__mro__ if k.__flags__ & _HEAP_TYPE and k.__module__.partition(".")[0] != "torch")
    members = getattr(mode, "__dict__", None)
    if not classes and not members:
        return kind
    return ModeKind(kind, tuple(_Same(tuple(k.__dict__.values())) for k in classes),
                    tuple((name, _value_key(value)) for name, value in (members or {}).items()))


_HEAP_TYPE = 1 << 9  # a class statement's class (torch's own mode classes are not snapshotted)


@dataclasses.dataclass(frozen=True)
class ModeKind:
    """A function mode as its `__torch_function__` sees it, which runs natively while a graph
    is captured (its effect baked into the graph): its type, what the dicts of its own classes
    hold (a method replaced later), and its instance attributes (numbers, strings and the like by
    type and value; other objects by identity: a list the mode appends to stays the one list).
    Compared with `==`, which here runs no user code (`_Same` compares by identity)."""

    kind: type
    classes: tuple
    members: tuple

    def __str__(self) -> str:
        members = ", ".join(f"{name}={key[1]!r}" if type(key) is tuple else name for name, key in self.members)
        return f"{self.kind.__qualname__}({members})"


class _Same:
    """Equal to another `_Same` of the very same objects (a tuple of them compared item by item)."""

    __slots__ = ("objects",)

    def __init__(self, objects):
        self.objects = objects

    def __eq__(self, other: object) -> bool:
        if type(other) is not _Same:
            return False
        mine, theirs = self.objects, other.objects
        if type(mine) is tuple and type(theirs) is tuple:
            return len(mine) == len(theirs) and all(a is b for a, b in zip(mine, theirs))
        return mine is theirs

    def __hash__(self) -> int:
        return hash(len(self.objects)) if type(self.objects) is tuple else id(self.objects)


_VALUE_TYPES = (type(None), bool, int, float, complex, str, bytes, torch.dtype, torch.device)


def _value_key(value: object) -> object:
    return (type(value), value) if type(value) in _VALUE_TYPES else _Same(value)


@emits(TorchFunctionModes)
def _torch_function_modes(guard: TorchFunctionModes, ctx: EmitContext) -> list[Check]:
    if not guard.kinds:  # the usual case: one C call
        call = f"{ctx.constant(torch._C._len_torch_function_stack, 'torch_function_stack_depth', 'torch._C._len_torch_function_stack')}()"
        return [check(must_equal(call, "0"), str(guard), call)]
    call = f"{ctx.constant(function_mode_kinds, 'function_mode_kinds', 'guards.kinds.function_mode_kinds')}()"
    expected = ctx.constant(guard.kinds, "function_modes", repr(guard.kinds))
    return [check(must_equal(call, expected), str(guard), call)]


@dataclasses.dataclass(frozen=True)
class TorchDispatchModes(Guard):
    """`depth` TorchDispatchModes are active (0: none, so compiled kernels that skip ATen
    dispatch behave the same). A caller's mode sees every ATen op of an eager call, which no
    compiled entry can replay: capture runs such calls eagerly and never makes an entry under
    one, so entries hold this at 0."""

    depth: int = 0
    priority = PRIORITY_GLOBAL_STATE

    def __str__(self) -> str:
        return f"torch dispatch mode stack depth == {self.depth}"

    def state(self) -> int:
        return self.depth


@emits(TorchDispatchModes)
def _torch_dispatch_modes(guard: TorchDispatchModes, ctx: EmitContext) -> list[Check]:
    call = f"{ctx.constant(torch._C._len_torch_dispatch_stack, 'torch_dispatch_stack_depth', 'torch._C._len_torch_dispatch_stack')}()"
    return [check(must_equal(call, str(guard.depth)), str(guard), call)]


def _autocast_now() -> tuple[tuple[str, torch.dtype], ...]:
    return tuple(
        (device, torch.get_autocast_dtype(device))
        for device in _autocast_device_types()
        if torch.is_autocast_enabled(device)
    )


def global_state_guards() -> list[Guard]:
    """Guards that hold for the current global state (call while capturing)."""
    enabled = _autocast_now()
    return [
        GradMode(torch.is_grad_enabled()),
        InferenceMode(torch.is_inference_mode_enabled()),
        AutocastState(enabled),
        DefaultDtype(torch.get_default_dtype()),
        DeterministicAlgorithms(
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
        ),
        TorchFunctionModes(function_mode_kinds()),
        TorchDispatchModes(torch._C._len_torch_dispatch_stack()),
    ]


# --- the global state as one value --------------------------------------------------------
#
# A function with several compiled entries would check these settings once per entry. A
# caller can instead read them once per call with `current_global_state()` and compare the
# tuple with each entry's `global_state_of(...)` (GuardSet.compile(split_global_state=True)
# leaves them out of the guard function and sets `guard_fn.global_state`).

# The guard kinds of the settings, in the order of current_global_state()'s tuple.
GLOBAL_STATE_KINDS: tuple[type[Guard], ...] = (
    GradMode, InferenceMode, AutocastState, DefaultDtype, DeterministicAlgorithms, TorchFunctionModes, TorchDispatchModes,
)

_is_grad_enabled = torch._C.is_grad_enabled
_is_inference_mode_enabled = torch._C.is_inference_mode_enabled
_is_any_autocast_enabled = torch._C._is_any_autocast_enabled
_get_default_dtype = torch._C.get_default_dtype
_deterministic_algorithms = torch._C._get_deterministic_algorithms
_deterministic_warn_only = torch._C._get_deterministic_algorithms_warn_only
_torch_function_stack_depth = torch._C._len_torch_function_stack
_torch_dispatch_stack_depth = torch._C._len_torch_dispatch_stack


def current_global_state() -> tuple:
    """Every global setting the guard kinds above check, as one tuple (one C call each, as
    many as one guard function's global-state checks make)."""
    deterministic = _deterministic_algorithms()
    return (
        _is_grad_enabled(),
        _is_inference_mode_enabled(),
        _autocast_now() if _is_any_autocast_enabled() else (),
        _get_default_dtype(),
        (deterministic, deterministic and _deterministic_warn_only()),
        function_mode_kinds() if _torch_function_stack_depth() else (),
        _torch_dispatch_stack_depth(),
    )


class _Any:
    """Equal to every value: a setting the guards leave free (tuple equality asks each
    element, and `x == ANY` falls back to ANY.__eq__)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "ANY"


ANY = _Any()


def global_state_of(guards: Iterable[Guard]) -> tuple | None:
    """The value `current_global_state()` equals exactly when these global-state guards all
    hold (ANY for a setting they leave free), or None for a set that contradicts itself."""
    values: list[object] = [ANY] * len(GLOBAL_STATE_KINDS)
    for guard in guards:
        position = GLOBAL_STATE_KINDS.index(type(guard))
        value = guard.state()
        if values[position] is not ANY and values[position] != value:
            return None
        values[position] = value
    return tuple(values)
