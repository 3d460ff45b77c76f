"""What every source shares: the base class, the frozen-value decorator that caches a source's
hash, text and hint, and the spelling helpers of generated code."""

from __future__ import annotations

import ast
import dataclasses
import functools
import keyword
import math
import re
from typing import Protocol


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


class ReadOfBase(Source):
    """A source computed from its base alone that prints as the code reading it; its local's
    name is the base's with `hint_suffix`."""

    hint_suffix = ""

    def __str__(self) -> str:
        return self.code(str(self.base))

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_{self.hint_suffix}"


def _attribute(base: str, attr: str) -> str:
    if attr.isidentifier() and not keyword.iskeyword(attr):
        return f"{base}.{attr}"
    return f"getattr({base}, {attr!r})"
