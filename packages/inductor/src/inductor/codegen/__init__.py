"""Code generation: one package per kernel target (`cpp/`, `triton/`), each with a KernelBackend
object (`backend.py` says what one provides) that prints, builds and describes the calls of its
kernels; `targets.py` picks each device's backend; `wrapper.py` prints the Python module that
allocates buffers and calls kernels and extern ops."""
