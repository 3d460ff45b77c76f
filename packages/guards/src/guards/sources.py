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
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import keyword
import math
import re
import sys
from typing import Protocol

from .errors import SourceError


class RootNames(Protocol):
    """What a root source needs from the function being generated (see codegen.Frame)."""

    def parameter(self, name: str) -> str: ...

    def globals_dict(self) -> str: ...

    def module_globals(self, module: str) -> str: ...

    def held(self, obj: object, hint: str) -> str: ...

    def closure_cell(self, name: str) -> str: ...


def _identifier_hint(text: str) -> str:
    """A readable local-variable stem for generated code: `self.layers[0]` -> `self_layers_0`."""
    # ASCII only: `\w` also matches characters no identifier may hold (¼).
    stem = re.sub(r"\W+", "_", text, flags=re.ASCII).strip("_")
    return stem if stem and not stem[0].isdigit() else f"v_{stem}"


def has_literal_spelling(value: object) -> bool:
    """True when `repr(value)` is Python source that evaluates back to an equal, same-typed value."""
    kind = type(value)
    if kind in (int, str, bool, bytes, type(None)):
        return True
    # The common cases without parsing (a model's guard set asks for hundreds of them):
    # a finite float's repr reads back exactly; nan and inf print as names, not literals.
    if kind is float:
        return math.isfinite(value)
    if kind in (tuple, list):
        return all(map(has_literal_spelling, value))
    try:
        back = ast.literal_eval(repr(value))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return type(back) is type(value) and back == value


def _source_value(cls):
    """A frozen dataclass whose hash, printed form and local-name hint are computed once.

    Sources are dict keys all through code generation and printed into every check's text;
    each of these recurses through the whole chain (`L['self'].layers[3].weight`) otherwise,
    and a model's guard set asks for them hundreds of thousands of times.
    """
    cls = dataclasses.dataclass(frozen=True, repr=False)(cls)
    cls.__hash__ = _cached(cls.__hash__, "_hash")
    cls.__str__ = _cached(cls.__str__, "_str")
    for name in ("hint", "parents", "reads_with_effects"):
        # After the first read the value sits in the instance dict, which a cached_property
        # (not a data descriptor) lets plain attribute lookup find without a Python call.
        computed = functools.cached_property(getattr(cls, name).fget)
        computed.__set_name__(cls, name)
        setattr(cls, name, computed)
    return cls


def _cached(method, slot: str):
    def cached(self):
        try:
            return self.__dict__[slot]
        except KeyError:
            # Written into the instance dict directly: a frozen dataclass refuses setattr.
            value = self.__dict__[slot] = method(self)
            return value

    cached.__name__, cached.__doc__ = method.__name__, method.__doc__
    return cached


class Source:
    """Base class: every source prints as a Python expression over `L`, `G` and `C`.

    `base` is the source this one reads from: a dataclass field of chained sources, None on
    roots (`RootSource`). `parents` are all the sources its value is computed from (the base,
    or the items of a `TupleSource`); `code(*parent_expressions)` spells the computation.
    """

    base: Source | None

    @property
    def parents(self) -> tuple[Source, ...]:
        return () if self.base is None else (self.base,)

    @property
    def hint(self) -> str:
        """Stem for the name of a local that holds this value in generated code."""
        return _identifier_hint(str(self))

    @property
    def reads_with_effects(self) -> bool:
        """Whether reading it changes state the program can see (a bounded lru_cache's call
        marks its entry most recently used): guards that read it are checked last."""
        return any(parent.reads_with_effects for parent in self.parents)

    def root(self) -> Source:
        source = self
        while source.base is not None:
            source = source.base
        return source

    def __repr__(self) -> str:
        return str(self)


def _attribute(base: str, attr: str) -> str:
    if attr.isidentifier() and not keyword.iskeyword(attr):
        return f"{base}.{attr}"
    return f"getattr({base}, {attr!r})"


# --- roots -------------------------------------------------------------------------------


class RootSource(Source):
    """A value the frame holds directly; `root_code(frame)` spells it in generated code."""

    base = None


@_source_value
class LocalSource(RootSource):
    """An argument (or any local the frame is entered with) of the compiled function."""

    name: str

    def __str__(self) -> str:
        return f"L[{self.name!r}]"

    @property
    def hint(self) -> str:
        return self.name

    def root_code(self, frame: RootNames) -> str:
        return frame.parameter(self.name)


@_source_value
class GlobalSource(RootSource):
    """A name in the globals dict of the compiled function's module."""

    name: str

    def __str__(self) -> str:
        return f"G[{self.name!r}]"

    @property
    def hint(self) -> str:
        return _identifier_hint(f"G_{self.name}")

    def root_code(self, frame: RootNames) -> str:
        return f"{frame.globals_dict()}[{self.name!r}]"


@_source_value
class GlobalsSource(RootSource):
    """The globals dict of the compiled function's module itself, `G`: what a guard on a name
    being absent from it reads (a global the program found missing, or a builtin it found
    because no global shadows it)."""

    def __str__(self) -> str:
        return "G"

    @property
    def hint(self) -> str:
        return "G"

    def root_code(self, frame: RootNames) -> str:
        return frame.globals_dict()


@_source_value
class ModuleGlobalsSource(RootSource):
    """The globals dict of module `module` itself, `M[module]` (`vars(sys.modules[module])`):
    as GlobalsSource, for a function of another module, and for `builtins`."""

    module: str

    def __str__(self) -> str:
        return f"M[{self.module!r}]"

    @property
    def hint(self) -> str:
        return _identifier_hint(f"M_{self.module.rpartition('.')[2]}")

    def root_code(self, frame: RootNames) -> str:
        return frame.module_globals(self.module)


@_source_value
class ImportedModuleSource(RootSource):
    """The module an `import` statement finds, `sys.modules[name]` (the dict held, read on
    every call): an entry replaced or removed there makes the statement give another module
    (or run the module's code again)."""

    name: str

    def __str__(self) -> str:
        return f"sys.modules[{self.name!r}]"

    @property
    def hint(self) -> str:
        return _identifier_hint(f"module_{self.name.rpartition('.')[2]}")

    def root_code(self, frame: RootNames) -> str:
        return f"{frame.held(sys.modules, 'sys_modules')}[{self.name!r}]"


@_source_value
class SysModulesSource(RootSource):
    """`sys.modules` itself (the dict held): where a name the program found unimported must
    stay absent (`'pkg' not in sys.modules`), a stub filed there later is found by eager."""

    def __str__(self) -> str:
        return "sys.modules"

    @property
    def hint(self) -> str:
        return "sys_modules"

    def root_code(self, frame: RootNames) -> str:
        return frame.held(sys.modules, "sys_modules")


@_source_value
class ModuleGlobalSource(RootSource):
    """A name in the globals dict of module `module` (`sys.modules[module]`): how a trace reads
    the globals of a function it entered that no source reaches, such as a submodule's
    `forward` defined in another file. The guard reads the dict itself, bound once."""

    module: str
    name: str

    def __str__(self) -> str:
        return f"M[{self.module!r}][{self.name!r}]"

    @property
    def hint(self) -> str:
        return _identifier_hint(f"M_{self.module.rpartition('.')[2]}_{self.name}")

    def root_code(self, frame: RootNames) -> str:
        return f"{frame.module_globals(self.module)}[{self.name!r}]"


@_source_value
class ClosureSource(RootSource):
    """The current contents of one of the compiled function's closure cells (a free variable).

    Read through the cell object itself, so rebinding the variable in the enclosing scope
    (`nonlocal scale; scale = 3`) is seen by the guard.
    """

    name: str

    def __str__(self) -> str:
        return f"C[{self.name!r}]"

    @property
    def hint(self) -> str:
        return self.name

    def root_code(self, frame: RootNames) -> str:
        return f"{frame.closure_cell(self.name)}.cell_contents"


@_source_value
class HeldCellSource(RootSource):
    """The current contents of a closure cell of a function no source reaches (a decorated
    submodule forward, found on its class): the guard holds the cell object itself, so
    rebinding the variable it closes over is seen."""

    label: str  # `function.variable`
    cell_id: int
    cell: object = dataclasses.field(compare=False)

    def __str__(self) -> str:
        return f"C[{self.label!r}]"

    @property
    def hint(self) -> str:
        return _identifier_hint(self.label.rpartition(".")[2])

    def root_code(self, frame: RootNames) -> str:
        return f"{frame.held(self.cell, _identifier_hint(self.label) + '_cell')}.cell_contents"


@_source_value
class HeldObjectSource(RootSource):
    """An object no frame input leads to, read through a class (a descriptor in a class's
    dict, whose `__get__`/`__set__` capture traces): the guard holds the object itself, so
    a change to its attributes (the name `__set_name__` chose, a default) is seen."""

    label: str
    obj_id: int
    obj: object = dataclasses.field(compare=False)

    def __str__(self) -> str:
        return f"C[{self.label!r}]"

    @property
    def hint(self) -> str:
        return _identifier_hint(self.label.rpartition(".")[2])

    def root_code(self, frame: RootNames) -> str:
        return frame.held(self.obj, _identifier_hint(self.label))


# --- chains ------------------------------------------------------------------------------


@_source_value
class AttrSource(Source):
    """`base.attr`, through ordinary attribute lookup."""

    base: Source
    attr: str

    def __str__(self) -> str:
        return self.code(str(self.base))

    @property
    def hint(self) -> str:
        return _identifier_hint(f"{self.base.hint}_{self.attr}")

    def code(self, base: str) -> str:
        return _attribute(base, self.attr)


@_source_value
class GenericAttrSource(Source):
    """`object.__getattribute__(base, attr)`: the attribute as object's own lookup finds it
    (data descriptors, the instance dict, the class), running neither a class's Python
    `__getattribute__` nor its `__getattr__`. How a guard reads attributes of an object whose
    class has such a hook: reading `base.attr` would run the user's hook (its side effects
    included) once more per call than the program does."""

    base: Source
    attr: str

    def __str__(self) -> str:
        return self.code(str(self.base))

    @property
    def hint(self) -> str:
        return _identifier_hint(f"{self.base.hint}_{self.attr}")

    def code(self, base: str) -> str:
        return f"object.__getattribute__({base}, {self.attr!r})"


@_source_value
class ItemSource(Source):
    """`base[key]` for lists, tuples, dicts (string keys included) and other subscriptables."""

    base: Source
    key: object

    def __post_init__(self) -> None:
        if not has_literal_spelling(self.key):
            raise SourceError(
                f"ItemSource key {self.key!r} has no Python literal spelling; guard the "
                "container another way (e.g. iterate its items with their positions)"
            )

    def __str__(self) -> str:
        return self.code(str(self.base))

    @property
    def hint(self) -> str:
        return _identifier_hint(f"{self.base.hint}_{self.key}")

    def code(self, base: str) -> str:
        return f"{base}[{self.key!r}]"


@_source_value
class CachedResultSource(Source):
    """What a functools.lru_cache wrapper (`base`) answers for a call it has cached, read
    without running the function it wraps: a guard that called the wrapper would run that
    function's body whenever the entry is gone (`cache_clear()`, eviction), once more than the
    program, whose own path may never make the call.

    `cache` holds the wrapper's dict (one per wrapper for life; `cache_clear()` empties it),
    `key` the key lru_cache files the call under. A missing key fails the read (KeyError). An
    unbounded cache maps the key to the result, which is read directly. A bounded one maps it to
    an internal list link: once the key is seen there the wrapper is called with `call`'s
    arguments, a hit, which runs no body (it counts a hit and marks the entry most recently
    used, as the program's own call would). Prints as the call it answers."""

    base: Source
    cache: Source
    key: Source
    call: str  # the arguments, spelled as Python: "3, 'a', typed=True"
    bounded: bool

    @property
    def parents(self) -> tuple[Source, ...]:
        return (self.base, self.cache, self.key)

    @property
    def reads_with_effects(self) -> bool:
        # The call of a bounded cache stands for the program's own call: it is made only once
        # every other check of the entry has passed, in the order the program made them
        # (Guard.reads_with_effects), so that it marks an entry used exactly where the program
        # would. A guard calling it for an entry that then fails another check marked it used
        # for a path that never calls it, and the cache evicted another entry than in Python.
        return self.bounded or super().reads_with_effects

    def __str__(self) -> str:
        return f"{self.base}({self.call})"

    @property
    def hint(self) -> str:
        return _identifier_hint(f"{self.base.hint}_result")

    def code(self, base: str, cache: str, key: str) -> str:
        if self.bounded:
            return f"({cache}[{key}], {base}({self.call}))[1]"
        return f"{cache}[{key}]"


@_source_value
class QueryResultSource(Source):
    """What a function of no tensor answers when called with these constant arguments now,
    `base(call)`: a torch query of process state (`torch.backends.cuda.flash_sdp_enabled()`,
    `torch.get_autocast_cpu_dtype()`) that a graph would otherwise bake in. The function is
    called by the guard, on every check: only for queries without effects."""

    base: Source
    call: str  # the arguments, spelled as Python: "'cpu', 2"

    def __str__(self) -> str:
        return self.code(str(self.base))

    @property
    def hint(self) -> str:
        return _identifier_hint(f"{self.base.hint}_answer")

    def code(self, base: str) -> str:
        return f"{base}({self.call})"


@_source_value
class DictKeysSource(Source):
    """The keys of a dict as a list, `list(base.keys())`: what `DictKeySource` sources index, read
    once for all of them."""

    base: Source

    def __str__(self) -> str:
        return self.code(str(self.base))

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_keys"

    def code(self, base: str) -> str:
        # `.keys()`, not `list(base)`: a list or tuple must fail, not pass as its own keys.
        return f"list({base}.keys())"


@_source_value
class SetOrderSource(Source):
    """The members of a set in its iteration order, `list(base)`: a set of the same members
    with another history (deletions, growth) iterates otherwise, which a program iterating it
    sees. Guarded beside the set's contents (its type checked there)."""

    base: Source

    def __str__(self) -> str:
        return self.code(str(self.base))

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_order"

    def code(self, base: str) -> str:
        return f"list({base})"


@_source_value
class DictValuesSource(Source):
    """The values of a dict as a list, `list(base.values())`: the value at a position read
    without looking its key up, which would run the key's `__hash__` (user code, for an
    object key) once more per call than the program does."""

    base: Source

    def __str__(self) -> str:
        return self.code(str(self.base))

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_values"

    def code(self, base: str) -> str:
        return f"list({base}.values())"


def dict_value_source(mapping: Source, index: int) -> Source:
    """The value at position `index` of a dict, `list(d.values())[index]`: the value of a key
    whose hash a lookup would compute (DictLookupsHold keeps the key finding this entry)."""
    return ItemSource(DictValuesSource(mapping), index)


def dict_key_source(mapping: Source, index: int) -> Source:
    """The key at position `index` of a dict, `list(d.keys())[index]`: how a key with no
    literal spelling (a tensor, as in `optimizer.state`) is named."""
    return ItemSource(DictKeysSource(mapping), index)


@_source_value
class DictItemSource(Source):
    """`base[key]` where the key is itself read from a source (`d[list(d.keys())[0]]`): the
    value of a dict whose key has no literal spelling."""

    base: Source
    key: Source

    @property
    def parents(self) -> tuple[Source, ...]:
        return (self.base, self.key)

    def __str__(self) -> str:
        return self.code(str(self.base), str(self.key))

    @property
    def hint(self) -> str:
        return _identifier_hint(f"{self.base.hint}_{self.key.hint}_value")

    def code(self, base: str, key: str) -> str:
        return f"{base}[{key}]"


@_source_value
class WeakrefReferentSource(Source):
    """The object a weak reference points to, `base()` (None once it is gone)."""

    base: Source

    def __str__(self) -> str:
        return self.code(str(self.base))

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_referent"

    def code(self, base: str) -> str:
        return f"{base}()"


@_source_value
class TypeSource(Source):
    """`type(base)`."""

    base: Source

    def __str__(self) -> str:
        return f"type({self.base})"

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_type"

    def code(self, base: str) -> str:
        return f"type({base})"


@_source_value
class HashSource(Source):
    """`hash(base)`: what a dict or set files an object under, where that can change between
    calls (its class given another `__hash__`, a hash over fields that changed)."""

    base: Source

    def __str__(self) -> str:
        return f"hash({self.base})"

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_hash"

    def code(self, base: str) -> str:
        return f"hash({base})"


@_source_value
class ShapeSource(Source):
    """A tensor's sizes, `base.size()`; read as `base.shape` (same torch.Size, no call)."""

    base: Source

    def __str__(self) -> str:
        return f"{self.base}.size()"

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_size"

    def code(self, base: str) -> str:
        return f"{base}.shape"


@_source_value
class StrideSource(Source):
    """A tensor's strides, `base.stride()`."""

    base: Source

    def __str__(self) -> str:
        return f"{self.base}.stride()"

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_stride"

    def code(self, base: str) -> str:
        return f"{base}.stride()"


@_source_value
class StorageOffsetSource(Source):
    """A tensor's storage offset, `base.storage_offset()`."""

    base: Source

    def __str__(self) -> str:
        return f"{self.base}.storage_offset()"

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_offset"

    def code(self, base: str) -> str:
        return f"{base}.storage_offset()"


@_source_value
class ModuleRegistrySource(Source):
    """One of an nn.Module's member dicts, `module._parameters` / `_buffers` / `_modules`.

    Its own node so that siblings share one read: the guard of `m.weight` and `m.bias`
    reads `m._parameters` once. It is read as `module.__dict__['_parameters']` (as
    nn.Module.__getattr__ itself reads it), through the module's `__dict__` source that its
    other members and its hook checks share: nn.Module defines `__getattr__`, which keeps
    CPython from specializing attribute reads on its instances, and a dict subscript costs
    about half of such a read.
    """

    base: Source
    registry: str

    def __str__(self) -> str:
        return f"{self.base}.{self.registry}"

    @property
    def hint(self) -> str:
        return f"{self.base.hint}{self.registry}"

    @property
    def parents(self) -> tuple[Source, ...]:
        return (instance_dict_source(self.base),)

    def code(self, instance_dict: str) -> str:
        return f"{instance_dict}[{self.registry!r}]"


@_source_value
class _ModuleMemberSource(Source):
    """A member of an nn.Module stored in one of its registries (`_parameters`, ...).

    `nn.Module.__getattr__` is Python code that searches three dicts; reading the right dict
    directly is several times faster. Only valid when the attribute really lives there (the
    caller knows: it saw where `getattr` found it at capture time). Prints as the attribute.
    """

    module: Source
    name: str
    registry = ""  # the nn.Module dict attribute holding this kind of member

    @functools.cached_property
    def base(self) -> Source:
        # One registry source per member, built once: code generation walks `base` often.
        return ModuleRegistrySource(self.module, self.registry)

    def __str__(self) -> str:
        return _attribute(str(self.module), self.name)

    @property
    def hint(self) -> str:
        return _identifier_hint(f"{self.module.hint}_{self.name}")

    def code(self, base: str) -> str:
        return f"{base}[{self.name!r}]"


class ParameterSource(_ModuleMemberSource):
    """`module.name` for an nn.Parameter registered on the module."""

    registry = "_parameters"


class BufferSource(_ModuleMemberSource):
    """`module.name` for a buffer registered on the module."""

    registry = "_buffers"


class SubmoduleSource(_ModuleMemberSource):
    """`module.name` for a child module; children of ModuleList/Sequential print as `m[0]`."""

    registry = "_modules"

    def __str__(self) -> str:
        # Only a plain decimal literal: `²` is a digit and `01` a number, but neither is Python.
        if re.fullmatch(r"0|[1-9][0-9]*", self.name):
            return f"{self.module}[{self.name}]"
        return super().__str__()


@_source_value
class TupleSource(Source):
    """The tuple `(a, b, ...)` of several sources' values, built in the generated function so
    that one C-level loop (`map`) can check them all (see kinds.tensor_groups)."""

    items: tuple[Source, ...]
    name: str  # the hint: what the values are ("tensors")
    base = None

    @property
    def parents(self) -> tuple[Source, ...]:
        return self.items

    def __str__(self) -> str:
        return self.code(*map(str, self.items))

    @property
    def hint(self) -> str:
        return self.name

    def code(self, *items: str) -> str:
        return f"({', '.join(items)}{',' if len(items) == 1 else ''})"


# --- helpers -----------------------------------------------------------------------------

_TENSOR_PROPERTIES = {"size": ShapeSource, "stride": StrideSource}


def tensor_property_source(tensor: Source, prop: str, dim: int | None = None) -> Source:
    """The source of one size, stride or the storage offset of a tensor.

    Matches fake_tensor's `ShapeEnv.symbol_sources` entries `(source, prop, dim)` with prop in
    "size", "stride", "storage_offset".
    """
    if prop == "storage_offset":
        return StorageOffsetSource(tensor)
    if prop not in _TENSOR_PROPERTIES or dim is None:
        raise SourceError(f"unknown tensor property {prop!r} (dim {dim}) for {tensor}")
    return ItemSource(_TENSOR_PROPERTIES[prop](tensor), dim)


def instance_dict_source(obj: Source) -> Source:
    """`obj.__dict__`, the one source every read of an object's own dict goes through."""
    return AttrSource(obj, "__dict__")


def default_value_source(function: Source, parameter: int | str) -> Source:
    """The default of a function's parameter: `f.__defaults__[i]` or `f.__kwdefaults__['k']`."""
    if isinstance(parameter, int):
        return ItemSource(AttrSource(function, "__defaults__"), parameter)
    return ItemSource(AttrSource(function, "__kwdefaults__"), parameter)
