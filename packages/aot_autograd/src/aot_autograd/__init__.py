"""AOT autograd: an FX graph traced to functional ATen forward and backward graphs, run by an
autograd.Function.

- `aot_module_simplified(gm, example_inputs, fw_compiler, ...)`: the entry point backends use.
- `aot_eager`, `aot_eager_decomp_partition`: backends running the ATen graphs as they are.
- `default_partition`, `min_cut_rematerialization_partition`: forward/backward splitters.
- `default_decompositions()`: core ATen plus the ops a fusing compiler wants decomposed.
- Errors: `AotAutogradError` and its subclasses.
"""

__version__ = "0.0.1"

from .aot import aot_module_simplified
from .backends import aot_eager, aot_eager_decomp_partition
from .decompositions import default_decompositions
from .errors import AotAutogradError, DoubleBackwardError, TracingError, UnsupportedProgramError
from .partitioners import default_partition, min_cut_rematerialization_partition

__all__ = [
    "AotAutogradError",
    "DoubleBackwardError",
    "TracingError",
    "UnsupportedProgramError",
    "aot_eager",
    "aot_eager_decomp_partition",
    "aot_module_simplified",
    "default_decompositions",
    "default_partition",
    "min_cut_rematerialization_partition",
]
