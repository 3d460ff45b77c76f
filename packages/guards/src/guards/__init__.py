"""Guards: sources that name values in a frame, guard kinds, and guard sets compiled to one fast Python function.

Not built yet: see the open issues.
"""

__version__ = "0.0.1"
