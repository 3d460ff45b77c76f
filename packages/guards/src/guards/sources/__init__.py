"""Sources: where a value lives in a frame, as small immutable objects that print as Python.

A source names a value relative to the frame of a compiled function: `L['x']` (an argument),
`G['W']` (a global of the function's module), `C['scale']` (a closure cell's contents),
`M['pkg.layers']['W']` (a global of another module, `sys.modules['pkg.layers'].W`), then
chains of attribute reads, item reads and tensor metadata from those roots, e.g.
`L['self'].layers[0].weight` or `L['x'].size()[1]`.

Two spellings per source: `str(source)` is what users read in guard sources and failure
messages; `source.code(base)` (for chained sources) and `source.root_code(frame)` (for roots)
are what the generated guard function executes. They differ only where reading the value
directly is faster and gives the same object: a module's parameter prints as `m.weight` but
is read as `m._parameters['weight']`, skipping `nn.Module.__getattr__` (a Python function).

Sources are frozen dataclasses: hashable, comparable, usable as dict keys and in guards.

base: the Source class and what every source shares; roots: what the frame holds directly;
chains: reads from another source; tensors: tensor metadata; modules: nn.Module members.
"""

from .base import RootNames, Source, has_literal_spelling
from .chains import (
    AttrSource,
    CachedResultSource,
    DictItemSource,
    DictKeysSource,
    DictValuesSource,
    GenericAttrSource,
    HashSource,
    ItemSource,
    QueryResultSource,
    SetOrderSource,
    TupleSource,
    TypeSource,
    WeakrefReferentSource,
    default_value_source,
    dict_key_source,
    dict_value_source,
    instance_dict_source,
)
from .modules import BufferSource, ModuleRegistrySource, ParameterSource, SubmoduleSource
from .roots import (
    ClosureSource,
    GlobalSource,
    GlobalsSource,
    HeldCellSource,
    HeldObjectSource,
    ImportedModuleSource,
    LocalSource,
    ModuleGlobalSource,
    ModuleGlobalsSource,
    RootSource,
    SysModulesSource,
)
from .tensors import ShapeSource, StorageOffsetSource, StrideSource, tensor_property_source

__all__ = [
    "AttrSource", "BufferSource", "CachedResultSource", "ClosureSource", "DictItemSource", "DictKeysSource",
    "DictValuesSource", "GenericAttrSource", "GlobalSource", "GlobalsSource", "HashSource", "HeldCellSource",
    "HeldObjectSource", "ImportedModuleSource", "ItemSource", "LocalSource", "ModuleGlobalSource",
    "ModuleGlobalsSource", "ModuleRegistrySource", "ParameterSource", "QueryResultSource", "RootNames", "RootSource",
    "SetOrderSource", "ShapeSource", "Source", "StorageOffsetSource", "StrideSource", "SubmoduleSource", "SysModulesSource",
    "TupleSource", "TypeSource", "WeakrefReferentSource", "default_value_source", "dict_key_source", "dict_value_source",
    "has_literal_spelling", "instance_dict_source", "tensor_property_source",
]
