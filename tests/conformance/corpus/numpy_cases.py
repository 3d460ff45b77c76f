"""NumPy interop inside compiled code (dynamo's test_numpy / test_interop): tensor<->ndarray
conversion, numpy functions applied to tensors' arrays, numpy scalars mixing with tensors,
numpy dtypes and shapes as Python values."""

import numpy as np
import torch

from . import snippets

NS = {"torch": torch, "np": np}

NUMPY = [
    ("tensor_numpy_roundtrip", "a = x.numpy()\nreturn torch.from_numpy(a * 2)"),
    ("numpy_sum_to_tensor", "a = x.numpy()\nreturn x + float(np.sum(a))"),
    ("numpy_ufuncs", "a = x.numpy()\nreturn torch.from_numpy(np.exp(a) + np.sin(a))"),
    ("numpy_mean_std", "a = x.numpy()\nreturn x - a.mean(), float(a.std() >= 0)"),
    ("numpy_array_from_list", "a = np.array([1.0, 2.0, 3.0])\nreturn x + float(a.sum())"),
    ("numpy_arange_reshape", "a = np.arange(6).reshape(2, 3)\nreturn x + int(a[1, 2])"),
    ("numpy_concatenate", "a = x.numpy()\nreturn torch.from_numpy(np.concatenate([a, a]))"),
    ("numpy_where", "a = x.numpy()\nreturn torch.from_numpy(np.where(a > 0, a, 0.0))"),
    ("numpy_argmax_int", "a = x.numpy()\nreturn x[int(np.argmax(a))]"),
    ("numpy_dtype_value", "a = x.numpy()\nreturn x, str(a.dtype)"),
    ("numpy_shape_tuple", "a = x.numpy()\nreturn x + a.shape[0], a.shape"),
    ("numpy_int64_scalar_mix", "return x * np.int64(3)"),
    ("numpy_float32_scalar_mix", "return x + np.float32(0.5)"),
    ("numpy_scalar_python_float", "v = float(np.float64(1.5) * 2)\nreturn x + v, v"),
    ("numpy_matmul", "a = x.numpy()\nm = np.outer(a, a)\nreturn torch.from_numpy(m @ a)"),
    ("numpy_astype", "a = x.numpy().astype(np.float64)\nreturn torch.from_numpy(a)"),
    ("numpy_clip", "return torch.from_numpy(np.clip(x.numpy(), -0.5, 0.5))"),
    ("numpy_sort", "return torch.from_numpy(np.sort(x.numpy()))"),
    ("numpy_cumsum", "return torch.from_numpy(np.cumsum(x.numpy()))"),
    ("numpy_inplace_on_view_mutates_tensor", "y = x.clone()\na = y.numpy()\na += 1\nreturn y"),
    ("numpy_isclose_all", "a = x.numpy()\nreturn x + bool(np.allclose(a, a))"),
    ("numpy_stack_of_tensors_arrays", "return torch.from_numpy(np.stack([x.numpy(), (x * 2).numpy()]))"),
    ("numpy_linspace", "return x + torch.from_numpy(np.linspace(0, 1, x.shape[0]).astype(np.float32))"),
    ("numpy_random_seeded", "rng = np.random.default_rng(0)\nreturn x + float(rng.random())"),
    ("numpy_pi", "return x * np.pi"),
    ("numpy_array_returned", "return x.numpy() * 2"),
    ("numpy_input_array", "return torch.from_numpy(a) * 2", {"params": "a", "make_args": lambda n: (np.random.randn(n).astype(np.float32),)}),
    ("numpy_input_array_as_tensor", "return torch.as_tensor(a) + 1", {"params": "a", "make_args": lambda n: (np.random.randn(n),)}),
    ("numpy_input_int_array_sum", "return x + int(a.sum())", {"params": "x, a", "make_args": lambda n: (torch.randn(n), np.arange(n))}),
    ("tensor_from_numpy_int_dtype", "return torch.from_numpy(np.arange(x.shape[0])) * 2 + x.long()"),
]
snippets("dynamo/test_interop", "numpy", NUMPY, namespace=NS)
