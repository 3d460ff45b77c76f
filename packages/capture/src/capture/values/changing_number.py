"""An int or float frame input whose value changed between calls (`n` in
`n = x.sum().item()`, handed to the resume function after the `.item()` graph break; a float
argument; the loop index a resume function receives).

Baking such a number into the graph would recompile for every value (the guard on it fails
each call). torch.compile turns it into a symbolic float or int; our fake tensors have no
symbolic floats, and their symbolic ints stand for sizes (>= 2), so capture keeps the number
out of the graph instead: it is guarded only by its type,
it may be stored, passed and returned, and any operation that needs its value (`y * n`,
`n > 0`, `float(n)`) breaks the graph there. The operation then runs natively and its result
reaches the rest of the function as an input, so no entry depends on the value.
"""

from __future__ import annotations

from ..errors import Unsupported
from .base import Value


# bool is left out: a flag that changes selects another path, worth an entry of its own.
CHANGING_NUMBER_TYPES = (int, float)


class ChangingNumberValue(Value):
    def __init__(self, obj: int | float, source):
        super().__init__(source)
        self.obj = obj

    def python_type(self) -> type:
        return type(self.obj)

    def describe(self) -> str:
        return f"the {type(self.obj).__name__} {self.source}, whose value changes between calls"

    def as_python_constant(self):
        raise Unsupported(
            f"{self.describe()} is used here (capture would otherwise recompile for every value)",
            hint="keep the value in a tensor (`x.sum()` rather than `x.sum().item()`) to keep this in the graph",
        )

    def truth(self, frame) -> bool:
        return self.as_python_constant()
