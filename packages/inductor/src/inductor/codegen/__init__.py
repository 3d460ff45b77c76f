"""Code generation: `cpp.py` prints a FusedKernel as C++/OpenMP, `wrapper.py` prints the Python
module that allocates buffers and calls kernels and extern ops. A Triton printer goes beside cpp.py."""
