"""Reading CPython code objects: decoded instructions and the exception table.

Exports `decode(code) -> CodeListing`; version differences of the encoding stay in `dis`, the
ones of meaning stay next to each opcode's handler in `capture.instructions`.
"""

from .listing import CodeListing, ExceptionTableEntry, decode

__all__ = ["CodeListing", "ExceptionTableEntry", "decode"]
