"""Sources capture adds to the `guards` ones: objects the compiled entry holds by identity.

A value met while tracing that no frame input leads to (a tensor default argument, an object
returned by a constant-folded call) is named by `HeldSource`: the compiled entry keeps the
object itself. No guard is ever placed on a held object.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from guards.sources import Source


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class HeldSource(Source):
    obj: Any
    name: str

    def __str__(self) -> str:
        return f"<held {self.name}>"

    @property
    def hint(self) -> str:
        return self.name
