"""AOT autograd: joint forward/backward ATen graphs, functionalization, partitioners, and the autograd.Function runtime.

Not built yet: see the open issues.
"""

__version__ = "0.0.1"
