"""Where fakes and eager CPU disagree on torch's op database, and why: the one list to update.

Keys are OpInfo names (`name` or `name.variant_test_name`). Each entry says what happens
and why; `op_db_check.py` uses these to tell expected outcomes from regressions. Entries that
hold only on some torch versions say from which version on they no longer hold.
"""

import torch

# The op's result depends on tensor data, so on fakes it raises DataDependentError by design
# (capture turns that into a graph break).
DATA_DEPENDENT = {
    "__getitem__": "boolean-mask indexing selects a data-dependent number of elements",
    "allclose": "returns a Python bool computed from the values",
    "argwhere": "output length = number of nonzero elements",
    "bincount": "output length = the input's max value + 1",
    "combinations": "implemented with masked_select",
    "corrcoef": "checks its input with aten.equal (a value read)",
    "cov": "checks its weights with aten.equal (a value read)",
    "equal": "returns a Python bool computed from the values",
    "istft": "checks its window's overlap-add envelope with aten.equal (a value read)",
    "item": "returns a Python number read from the tensor",
    "linalg.lstsq": "tagged dynamic_output_shape: residuals' size depends on the computed rank",
    "linalg.lstsq.grad_oriented": "tagged dynamic_output_shape: residuals' size depends on the computed rank",
    "masked_select": "output length = number of True mask elements",
    "narrow": "samples with a tensor `start` read it with .item()",
    "nn.functional.ctc_loss": "tagged dynamic_output_shape (target lengths are read from a tensor)",
    "nn.functional.gaussian_nll_loss": "validates `var >= 0` by reading the result into Python",
    "nn.functional.one_hot": "without num_classes the class count is the input's max value",
    "nonzero": "output length = number of nonzero elements",
    "repeat_interleave": "without output_size the output length is the sum of the repeats",
    "tensor_split": "samples with a 0-dim tensor of sections read it with .item()",
    "unique": "output length = number of distinct values",
    "unique_consecutive": "output length = number of runs of equal values",
}

# Data-dependent before a torch version (the key), statically answered from it on.
_DATA_DEPENDENT_BEFORE = {
    "2.13": {
        # Seen on torch 2.11 (GPU machine run 1): the CPU kernel checks `q` in [0, 1] through
        # at::equal on a 0-dim bool tensor. torch 2.13 makes no value read that reaches fakes.
        "quantile": "torch < 2.13 checks q in [0, 1] on CPU with aten.equal (a value read)",
        "nanquantile": "torch < 2.13 checks q in [0, 1] on CPU with aten.equal (a value read)",
    },
}
for _version, _entries in _DATA_DEPENDENT_BEFORE.items():
    if torch.__version__ < _version:
        DATA_DEPENDENT.update(_entries)

# Outputs match in shape, dtype, device and aliasing, but the CPU kernel lays them out
# differently from the meta kernel (which follows the CUDA kernel or a generic rule), so
# their strides are not compared.
NOT_STRIDE_EXACT = {
    "fft.hfft2": "the CPU FFT (MKL) lays multi-dim outputs out its own way; meta follows cuFFT",
    "fft.hfftn": "the CPU FFT (MKL) lays multi-dim outputs out its own way; meta follows cuFFT",
    "fft.rfft2": "the CPU FFT (MKL) lays multi-dim outputs out its own way; meta follows cuFFT",
    "fft.rfftn": "the CPU FFT (MKL) lays multi-dim outputs out its own way; meta follows cuFFT",
}

# Fake metadata differs from eager CPU beyond strides.
MISMATCHED: dict[str, str] = {}

# Fakes cannot run the op (UnsupportedFakeOpError, or a conversion error).
UNSUPPORTED = {
    "to_sparse": "no meta kernel for aten._to_sparse; fakes are strided only",
    "sparse.mm.reduce": "sparse CSR inputs: fakes are strided only",
    "sparse.sampled_addmm": "sparse CSR inputs: fakes are strided only",
    "tensor_split": "with a 1-d tensor of indices, the C++ kernel reads the indices' data directly",
}
