"""Reading and writing CPython code objects: decoded instructions with the exception table
(`decode`), which locals are live where (`liveness.live_locals`), resume functions that
continue a function from the middle (`resume.resume_code`), and code taking its arguments in a
list it empties (`boxed.boxed_code`).

Version differences of the encoding stay in `dis` and the `bytecode` library, the ones of
meaning next to each opcode's handler in `capture.instructions`.
"""

from .listing import CodeListing, ExceptionTableEntry, decode

__all__ = ["CodeListing", "ExceptionTableEntry", "decode"]
