"""Guards: sources that name values in a frame, guard kinds, and guard sets compiled to one fast Python function::

    guard_set = GuardSet([TensorMatch.of(LocalSource("x"), x), *global_state_guards()])
    guard_fn = guard_set.compile(fn)        # same parameters as fn
    guard_fn(*args, **kwargs)               # True / False, on every call
    guard_fn.source                         # the generated Python
    guard_fn.why(*args, **kwargs)           # "L['x'].size()[0] == 8 failed: got 9"

Tensors of many TensorMatch guards (a model's parameters) are checked together in one call
(`kinds.tensor_groups`, which also says why no cheaper shortcut is sound): a C++ loop built
on this machine in the background (`native`), Python until it is ready or where it cannot
be built. A
caller with several compiled entries can read the global state once per call::

    guard_fn = guard_set.compile(fn, split_global_state=True)
    current_global_state() == guard_fn.global_state and guard_fn(*args, **kwargs)

Modules: `sources` (where values live), `kinds` (guard kinds and their code emitters),
`guard_set` (GuardSet and compile), `codegen` (checks to Python), `printer` (sympy to
Python), `failure` (recompile reasons across cache entries), `native` (the compiled
tensor-group check), `errors`.
"""

from .errors import GuardCompileError, GuardError, SourceError
from .failure import failure_reasons, recompile_reason
from .guard_set import GuardSet
from .kinds import (
    ANY,
    AutocastState,
    ClassDictMatch,
    ConstantMatch,
    DefaultDtype,
    DefaultsMatch,
    DeterministicAlgorithms,
    DictKeysMatch,
    DictLookupsHold,
    FiniteFloat,
    GradMode,
    Guard,
    HasAttr,
    IdentityMatch,
    InferenceMode,
    KeyAbsent,
    LengthMatch,
    MroMatch,
    NotNone,
    ShapeGuard,
    TensorMatch,
    TorchDispatchModes,
    TorchFunctionModes,
    TypeMatch,
    current_global_state,
    global_state_guards,
    global_state_of,
    shape_guards,
)
from .sources import (
    AttrSource,
    BufferSource,
    CachedResultSource,
    QueryResultSource,
    ClosureSource,
    DictItemSource,
    DictKeysSource,
    DictValuesSource,
    GenericAttrSource,
    GlobalSource,
    GlobalsSource,
    HashSource,
    HeldCellSource,
    HeldObjectSource,
    ImportedModuleSource,
    SysModulesSource,
    ItemSource,
    LocalSource,
    ModuleGlobalSource,
    ModuleGlobalsSource,
    ModuleRegistrySource,
    ParameterSource,
    SetOrderSource,
    ShapeSource,
    Source,
    StorageOffsetSource,
    StrideSource,
    SubmoduleSource,
    TypeSource,
    WeakrefReferentSource,
    default_value_source,
    dict_key_source,
    dict_value_source,
    instance_dict_source,
    tensor_property_source,
)

__version__ = "0.1.0"

__all__ = [
    "ANY",
    "AttrSource",
    "AutocastState",
    "BufferSource",
    "CachedResultSource",
    "QueryResultSource",
    "ClassDictMatch",
    "ClosureSource",
    "ConstantMatch",
    "DefaultDtype",
    "DefaultsMatch",
    "DeterministicAlgorithms",
    "DictItemSource",
    "DictKeysMatch",
    "DictLookupsHold",
    "DictKeysSource",
    "DictValuesSource",
    "FiniteFloat",
    "GenericAttrSource",
    "GlobalSource",
    "GlobalsSource",
    "HashSource",
    "HeldCellSource",
    "HeldObjectSource",
    "ImportedModuleSource",
    "SysModulesSource",
    "GradMode",
    "Guard",
    "GuardCompileError",
    "GuardError",
    "GuardSet",
    "HasAttr",
    "IdentityMatch",
    "InferenceMode",
    "ItemSource",
    "KeyAbsent",
    "LengthMatch",
    "LocalSource",
    "ModuleGlobalSource",
    "ModuleGlobalsSource",
    "ModuleRegistrySource",
    "MroMatch",
    "NotNone",
    "ParameterSource",
    "ShapeGuard",
    "SetOrderSource",
    "ShapeSource",
    "Source",
    "SourceError",
    "StorageOffsetSource",
    "StrideSource",
    "SubmoduleSource",
    "TensorMatch",
    "TorchDispatchModes",
    "TorchFunctionModes",
    "TypeMatch",
    "TypeSource",
    "WeakrefReferentSource",
    "current_global_state",
    "default_value_source",
    "dict_key_source",
    "dict_value_source",
    "failure_reasons",
    "global_state_guards",
    "global_state_of",
    "instance_dict_source",
    "recompile_reason",
    "shape_guards",
    "tensor_property_source",
]
