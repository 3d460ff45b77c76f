"""What generated code calls at run time: C++ kernel building/loading, Triton kernel loading,
launching and autotuning (with the device helpers kernels import), CUDA graphs, and the
wrapper's helpers."""
