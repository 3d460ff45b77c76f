"""Inductor: lowers ATen graphs to a loop-level IR, fuses, and writes Triton (CUDA) or C++ (CPU)
kernels plus a Python wrapper.

    compile_fx(gm, example_inputs)          the "inductor" backend (aot_autograd first)
    compile_aten_graph(gm, example_inputs)  compile one functional ATen graph
    CompileOptions                          what mode= and options= ask for (options.py)
"""

from .compile_fx import CompiledGraph, compile_aten_graph, compile_fx
from .errors import CacheWarning, CppCompileError, InductorError, LoweringError, UnsupportedDevice
from .options import CompileOptions

__version__ = "0.0.1"

__all__ = [
    "CompileOptions", "CompiledGraph", "compile_aten_graph", "compile_fx",
    "InductorError", "LoweringError", "CppCompileError", "UnsupportedDevice", "CacheWarning",
]
