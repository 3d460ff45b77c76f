"""The public compiler namespace: compile, backends, explain, mark_dynamic, config and logging.

Not built yet: see the open issues.
"""

__version__ = "0.0.1"
