"""Guard kinds: one frozen dataclass per kind of condition, and one code emitter per kind.

`EMITTERS[kind](guard, ctx)` returns the guard's `Check`s; `@emits(Kind)` registers an
emitter next to its class. Exports every kind, `global_state_guards()` / `shape_guards()`,
the one-tuple global state (`current_global_state`, `global_state_of`) and
`with_tensor_groups` (many TensorMatch guards checked as one), `with_absent_key_groups` (the
KeyAbsent guards of one dict checked as one).
"""

from __future__ import annotations

from .base import EMITTERS, Guard, emits
from .classes import ClassDictMatch, MroMatch
from .global_state import (
    ANY,
    GLOBAL_STATE_KINDS,
    AutocastState,
    DefaultDtype,
    DeterministicAlgorithms,
    GradMode,
    InferenceMode,
    TorchDispatchModes,
    TorchFunctionModes,
    current_global_state,
    global_state_guards,
    global_state_of,
)
from .shapes import ShapeGuard, shape_guards
from .tensor_groups import TensorGroup, with_tensor_groups
from .tensors import TensorMatch
from .values import (
    ConstantMatch,
    DefaultsMatch,
    DictKeysMatch,
    DictLookupsHold,
    FiniteFloat,
    HasAttr,
    IdentityMatch,
    KeyAbsent,
    KeysAbsent,
    LengthMatch,
    NotNone,
    TypeMatch,
    with_absent_key_groups,
)

__all__ = [
    "ANY",
    "EMITTERS",
    "GLOBAL_STATE_KINDS",
    "AutocastState",
    "ClassDictMatch",
    "ConstantMatch",
    "DefaultDtype",
    "DefaultsMatch",
    "DeterministicAlgorithms",
    "DictKeysMatch",
    "DictLookupsHold",
    "FiniteFloat",
    "GradMode",
    "Guard",
    "HasAttr",
    "IdentityMatch",
    "InferenceMode",
    "KeyAbsent",
    "KeysAbsent",
    "LengthMatch",
    "MroMatch",
    "NotNone",
    "ShapeGuard",
    "TensorGroup",
    "TensorMatch",
    "TorchDispatchModes",
    "TorchFunctionModes",
    "TypeMatch",
    "current_global_state",
    "emits",
    "global_state_guards",
    "global_state_of",
    "shape_guards",
    "with_absent_key_groups",
    "with_tensor_groups",
]
