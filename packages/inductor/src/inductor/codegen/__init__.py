"""Code generation: `cpp.py` prints a FusedKernel as C++/OpenMP, the `triton/` package as a Triton
kernel (`triton/calls.py` writes those to the cache), `wrapper.py` prints the Python module that
allocates buffers and calls kernels and extern ops."""
