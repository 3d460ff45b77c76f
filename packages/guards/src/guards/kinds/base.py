"""The guard base class and the registry of emitters keyed by guard kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar

from fake_tensor.registries import register_once

from ..codegen import Check, EmitContext
from ..sources import Source


class Guard:
    """A condition a frame must satisfy for a compiled entry to be valid.

    Subclasses are frozen dataclasses (hashable, so a GuardSet deduplicates them) with a
    readable `__str__`. `priority` orders guards in the generated function: lower first.
    Checks that are cheap and tell cache entries apart come first; all of them run on a hit,
    so the order only changes how fast a miss is found.
    """

    priority: ClassVar[int]

    def implies(self) -> tuple[Guard, ...]:
        """Weaker guards this one makes redundant (dropped from a set that holds this one)."""
        return ()

    def reads_with_effects(self) -> bool:
        """Whether checking it changes state the program can see (Source.reads_with_effects):
        such guards come after every other, in the order capture recorded them."""
        return _any_reads_with_effects(self.__dict__.values())


def _any_reads_with_effects(values) -> bool:
    # Loops, not generators: asked of every guard of a set each time it compiles.
    for value in values:
        if isinstance(value, Source):
            if value.reads_with_effects:
                return True
        elif type(value) is tuple and _any_reads_with_effects(value):
            return True
    return False


# Priorities, one table so the order of a generated function can be read in one place.
PRIORITY_GRAD_MODE = 0  # one C call; train/eval entries differ here
PRIORITY_OBJECT = 10  # identity, type, constant, length: a pointer compare or two
PRIORITY_TENSOR = 20  # several C attribute reads per tensor
PRIORITY_SHAPE = 30  # arithmetic on sizes already read by tensor checks
PRIORITY_GLOBAL_STATE = 40  # C calls that rarely differ between entries

G = TypeVar("G", bound=Guard)
Emitter = Callable[[G, EmitContext], list[Check]]

EMITTERS: dict[type[Guard], Emitter] = {}


def emits(kind: type[G]) -> Callable[[Emitter], Emitter]:
    """Register the function that turns guards of `kind` into checks."""

    def register(emitter: Emitter) -> Emitter:
        return register_once(EMITTERS, [kind], emitter, "emitters")

    return register
