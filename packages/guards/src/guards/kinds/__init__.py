"""Guard kinds: one frozen dataclass per kind of condition, and one code emitter per kind.

`EMITTERS[kind](guard, ctx)` returns the guard's `Check`s; `@emits(Kind)` registers an
emitter next to its class. Exports every kind and `global_state_guards()` / `shape_guards()`.
"""

from __future__ import annotations

from .base import EMITTERS, Guard, emits
from .global_state import (
    AutocastState,
    DefaultDtype,
    DeterministicAlgorithms,
    GradMode,
    InferenceMode,
    TorchFunctionModes,
    global_state_guards,
)
from .shapes import ShapeGuard, shape_guards
from .tensor_groups import TensorGroup, with_tensor_groups
from .tensors import TensorMatch
from .values import (
    ConstantMatch,
    DefaultsMatch,
    DictKeysMatch,
    HasAttr,
    IdentityMatch,
    LengthMatch,
    NotNone,
    TypeMatch,
)

__all__ = [
    "EMITTERS",
    "AutocastState",
    "ConstantMatch",
    "DefaultDtype",
    "DefaultsMatch",
    "DeterministicAlgorithms",
    "DictKeysMatch",
    "GradMode",
    "Guard",
    "HasAttr",
    "IdentityMatch",
    "InferenceMode",
    "LengthMatch",
    "NotNone",
    "ShapeGuard",
    "TensorGroup",
    "TensorMatch",
    "TorchFunctionModes",
    "TypeMatch",
    "emits",
    "global_state_guards",
    "shape_guards",
    "with_tensor_groups",
]
