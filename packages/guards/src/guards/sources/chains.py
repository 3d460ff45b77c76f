"""Chained sources: values read from another source (attributes, items, dict keys and values,
cached calls, types and hashes), and tuples of several sources' values."""

from __future__ import annotations

from ..errors import SourceError
from .base import ReadOfBase, Source, _attribute, _identifier_hint, _source_value, has_literal_spelling


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
class DictKeysSource(ReadOfBase):
    """The keys of a dict as a list, `list(base.keys())`: what `DictKeySource` sources index, read
    once for all of them."""

    base: Source
    hint_suffix = "keys"

    def code(self, base: str) -> str:
        # `.keys()`, not `list(base)`: a list or tuple must fail, not pass as its own keys.
        return f"list({base}.keys())"


@_source_value
class SetOrderSource(ReadOfBase):
    """The members of a set in its iteration order, `list(base)`: a set of the same members
    with another history (deletions, growth) iterates otherwise, which a program iterating it
    sees. Guarded beside the set's contents (its type checked there)."""

    base: Source
    hint_suffix = "order"

    def code(self, base: str) -> str:
        return f"list({base})"


@_source_value
class DictValuesSource(ReadOfBase):
    """The values of a dict as a list, `list(base.values())`: the value at a position read
    without looking its key up, which would run the key's `__hash__` (user code, for an
    object key) once more per call than the program does."""

    base: Source
    hint_suffix = "values"

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
class WeakrefReferentSource(ReadOfBase):
    """The object a weak reference points to, `base()` (None once it is gone)."""

    base: Source
    hint_suffix = "referent"

    def code(self, base: str) -> str:
        return f"{base}()"


@_source_value
class TypeSource(ReadOfBase):
    """`type(base)`."""

    base: Source
    hint_suffix = "type"

    def code(self, base: str) -> str:
        return f"type({base})"


@_source_value
class HashSource(ReadOfBase):
    """`hash(base)`: what a dict or set files an object under, where that can change between
    calls (its class given another `__hash__`, a hash over fields that changed)."""

    base: Source
    hint_suffix = "hash"

    def code(self, base: str) -> str:
        return f"hash({base})"


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


def instance_dict_source(obj: Source) -> Source:
    """`obj.__dict__`, the one source every read of an object's own dict goes through."""
    return AttrSource(obj, "__dict__")


def default_value_source(function: Source, parameter: int | str) -> Source:
    """The default of a function's parameter: `f.__defaults__[i]` or `f.__kwdefaults__['k']`."""
    if isinstance(parameter, int):
        return ItemSource(AttrSource(function, "__defaults__"), parameter)
    return ItemSource(AttrSource(function, "__kwdefaults__"), parameter)
