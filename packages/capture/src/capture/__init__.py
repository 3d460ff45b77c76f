"""Capture: a symbolic CPython bytecode interpreter that turns Python functions and modules into FX graphs with guards.

Not built yet: see the open issues.
"""

__version__ = "0.0.1"
