"""What generated code calls at run time: C++ kernel building/loading, and the wrapper's helpers."""
