"""More cases modelled on PyTorch's test/dynamo/test_unspec.py and the dynamic-shape variants of
test_misc (test_dynamic_shapes runs test_misc with sizes symbolic): Python ints, floats and
bools passed in and changing between calls, used in tensor ops, Python arithmetic, ranges and
returned; sizes as numbers (divmod, round, shifts, bit ops, min/max, abs, conversions to float
and back, bool of a size); torch.Size operations (slicing, concatenation, index/count, unpacking,
comparison with lists and tuples, building new Sizes) whose results feed factories and views;
tensor methods that return Python numbers (stride, storage_offset, nbytes, tolist of ints,
item of int and bool tensors); sizes equal at the first call and apart later, rounding and
truncation of size ratios (round half to even, int() toward zero), and inputs that alias (one
tensor passed twice, a base with its view, a list holding one tensor twice). Recast in our own
words."""

import math

import torch

from . import snippets

SOURCE_UNSPEC = "dynamo/test_unspec"
SOURCE_MISC = "dynamo/test_misc"

NS = {"torch": torch, "math": math}


def vec_and_int(n):
    return torch.randn(n), n + 1


def vec_and_float(n):
    return torch.randn(n), n / 3


def vec_and_bool(n):
    return torch.randn(n), n % 2 == 0


def vec_and_ints(n):
    return torch.randn(n), [n, n + 1, 2]


def matrix(n):
    return (torch.randn(n, 3),)


UNSPEC = [
    ("int_arg_in_factory_and_view", "return torch.arange(k) * 2, x.repeat(k).view(k, -1).sum(0)", {"params": "x, k", "make_args": vec_and_int}),
    ("int_arg_python_arith_returned", "a = k * 3 - 1\nb = k // 2\nc = k % 3\nreturn x + a, a, b, c, -k, k ** 2", {"params": "x, k", "make_args": vec_and_int}),
    ("int_arg_in_slice", "return x[: k - 2], x[k - 3 :], x[::2][: k // 2]", {"params": "x, k", "make_args": vec_and_int}),
    ("int_arg_in_range_loop_accumulate", "acc = 0\nfor i in range(1, k):\n    acc += i * i\nreturn x * acc, acc", {"params": "x, k", "make_args": vec_and_int}),
    ("int_arg_as_dim_size_comparison", "if x.shape[0] + 1 == k:\n    return x + k\nreturn x - k", {"params": "x, k", "make_args": vec_and_int}),
    ("int_arg_truediv_is_float", "r = k / 2\nreturn x * r, r, type(r).__name__", {"params": "x, k", "make_args": vec_and_int}),
    ("int_arg_into_tensor_constructor", "t = torch.tensor([k, k * 2])\nreturn t, t.dtype, torch.tensor(k).dtype, torch.tensor(float(k))", {"params": "x, k", "make_args": vec_and_int}),
    ("int_arg_to_str_and_hex", "return x, str(k), hex(k), f'{k:b}'", {"params": "x, k", "make_args": vec_and_int}),
    ("float_arg_in_ops_and_math", "return x * f + math.floor(f) + math.exp(-f), math.isclose(f, 1.0), round(f, 2)", {"params": "x, f", "make_args": vec_and_float}),
    ("float_arg_int_conversions", "return x + int(f), int(f), math.ceil(f), round(f), f.is_integer(), float(int(f * 10))", {"params": "x, f", "make_args": vec_and_float}),
    ("float_arg_in_clamp_and_where", "return x.clamp(-f, f), torch.where(x > f, f, x), torch.full((2,), f)", {"params": "x, f", "make_args": vec_and_float}),
    ("float_arg_compare_branch", "if f > 1.5:\n    return x * f, 'big'\nreturn x / f, 'small'", {"params": "x, f", "make_args": vec_and_float}),
    ("float_arg_divmod", "q, r = divmod(f, 0.5)\nreturn x + q + r, q, r", {"params": "x, f", "make_args": vec_and_float}),
    ("bool_arg_flags", "y = x * 2 if flag else x / 2\nreturn y, not flag, flag + 1, int(flag), flag and 'yes'", {"params": "x, flag", "make_args": vec_and_bool}),
    ("list_of_ints_arg_into_view_and_sum", "total = sum(ks)\nreturn x + total, max(ks), torch.zeros(ks[2], 1) + 1, ks[::-1]", {"params": "x, ks", "make_args": vec_and_ints}),
    ("list_of_ints_arg_mutated", "ks.append(x.shape[0])\nks[0] += 1\nreturn x * len(ks)", {"params": "x, ks", "make_args": vec_and_ints}),
    ("zero_dim_tensor_arg_item_math", "v = s.item()\nreturn x * v, math.sqrt(abs(v)), type(v).__name__", {"params": "x, s", "make_args": lambda n: (torch.randn(n), torch.tensor(n / 2))}),
    ("int_tensor_item_in_range", "k = s.item()\nreturn [x * i for i in range(k)]", {"params": "x, s", "make_args": lambda n: (torch.randn(n), torch.tensor(n % 3 + 1))}),
    ("bool_tensor_item_branch", "if b.item():\n    return x + 1\nreturn x - 1", {"params": "x, b", "make_args": lambda n: (torch.randn(n), torch.tensor(n % 2 == 0))}),
    ("python_int_and_float_mixed_result_types", "a = k + 0.5\nb = k * True\nc = k - False\nreturn x, a, b, c, type(a).__name__, type(b).__name__", {"params": "x, k", "make_args": vec_and_int}),
]
snippets(SOURCE_UNSPEC, "unspec_more", UNSPEC, namespace=NS)

SIZES = [
    ("divmod_of_size", "q, r = divmod(x.shape[0], 3)\nreturn x[: q + r], q, r"),
    ("round_of_size_ratio", "n = x.shape[0]\nreturn x + round(n / 3), round(n / 3), round(n * 0.5)"),
    ("shifts_and_bitops_of_size", "n = x.shape[0]\nreturn x, n << 2, n >> 1, n & 1, n | 8, n ^ 5, ~n"),
    ("min_max_abs_of_sizes", "n = x.shape[0]\nreturn x[: min(n, 5)], max(n, 5), abs(n - 6), min(n, 5, 6 - n)"),
    ("float_of_size_and_back", "n = x.shape[0]\nf = float(n) / 2\nreturn x * f, f, int(f), int(f * 3)"),
    ("bool_of_size_difference", "n = x.shape[0]\nif bool(n - 4):\n    return x + 1, 'other'\nreturn x - 1, 'four'"),
    ("size_in_math_functions", "n = x.shape[0]\nreturn x, math.floor(n / 2), math.ceil(n / 2), math.sqrt(n) > 2, math.log(n) > 1"),
    ("size_power_and_negative_floordiv", "n = x.shape[0]\nreturn x, n ** 2, 2 ** n, -n // 3, -n % 3, n ** 0.5"),
    ("size_as_float_tensor_arith", "n = x.shape[0]\nreturn x / n, x * (n - 0.5), n / x.abs().add(1)"),
    ("sizes_used_to_build_factories", "n = x.shape[0]\nreturn torch.zeros(n * 2), torch.ones(n, n // 2 + 1), torch.eye(n)[0], torch.linspace(0, 1, n)"),
    ("size_ratio_in_interpolate", "n = x.shape[0]\ny = torch.nn.functional.interpolate(x.view(1, 1, -1), size=n * 2, mode='nearest')\nreturn y.flatten()"),
    ("size_from_numel_and_division", "n = x.numel()\nreturn x.view(n // n, n), n // 2, x.numel() == len(x)"),
    ("size_index_select_computed", "n = x.shape[0]\nidx = torch.arange(0, n, 2)\nreturn x.index_select(0, idx), idx.numel() == (n + 1) // 2"),
    ("chunk_count_from_size", "parts = x.chunk(3)\nreturn [p.shape[0] for p in parts], len(parts), torch.cat(parts)"),
    ("split_sizes_from_size", "n = x.shape[0]\na, b = x.split([n // 2, n - n // 2])\nreturn a * 2, b - 1"),
    ("repeat_interleave_by_size", "return x.repeat_interleave(2)[: x.shape[0] + 1]"),
]
snippets(SOURCE_MISC, "dynshape", SIZES, namespace=NS)

TORCH_SIZE = [
    ("size_slice_is_size", "s = x.shape[1:]\nreturn x, type(s).__name__, s, x.shape[:1] + s"),
    ("size_concat_with_tuple_to_view", "return x.view(x.shape + (1,)), x.reshape((1,) + x.shape).shape"),
    ("size_index_and_count", "s = x.shape\nreturn x, s.index(3), s.count(3), 3 in s"),
    ("size_unpack_star", "a, *rest = x.shape\nreturn x.reshape(a, *rest, 1), rest"),
    ("size_compared_with_list_and_tuple", "s = x.shape\nreturn x, s == [s[0], 3], s == (s[0], 3), list(s) == [s[0], 3], s != torch.Size([1, 3])"),
    ("new_size_built_from_sizes", "s = torch.Size([x.shape[0] * 3])\nreturn x.reshape(s), s, s.numel()"),
    ("size_reversed_and_sorted", "s = x.shape\nreturn x.permute(*reversed(range(x.ndim))), tuple(reversed(s)), sorted(s)"),
    ("size_times_int", "s = x.shape[:1] * 2\nreturn x.new_zeros(s), type(s).__name__, s"),
    ("size_len_and_negative_index", "return x.sum(len(x.shape) - 1), x.shape[-1], x.size(-2), x.size()[-2:]"),
    ("size_in_set_and_dict", "seen = {x.shape, x.t().shape}\nd = {x.shape: 'a'}\nreturn x, len(seen), d[torch.Size([x.shape[0], 3])]"),
    ("size_as_expand_target", "row = x[:1]\nreturn row.expand(x.shape), row.expand(*x.shape).shape, x.expand_as(x).shape"),
    ("tensor_of_size", "return torch.tensor(x.shape), torch.tensor(x.shape).prod(), torch.as_tensor(x.shape[0])"),
    ("size_unflatten_and_flatten", "y = x.flatten()\nreturn y.unflatten(0, x.shape), y.unflatten(0, (-1, 3)).shape"),
    ("stride_and_storage_offset", "y = x[1:, 1:]\nreturn y.stride(), y.storage_offset(), y.is_contiguous(), x.t().stride(0), y * 1"),
    ("nbytes_itemsize_element_size", "return x + x.itemsize, x.nbytes, x.element_size(), x.half().nbytes"),
    ("tolist_of_int_tensor", "v = x.argmax(1).tolist()\nreturn x + len(v), v, type(v[0]).__name__"),
    ("item_of_bool_and_int_tensors", "b = (x > 0).any().item()\ni = (x > 0).sum().item()\nreturn x * i, b, i, type(b).__name__, type(i).__name__"),
    ("dim_queries", "return x + x.dim(), x.ndim, x.ndimension(), x.t().dim(), x.unsqueeze(0).ndim"),
]
snippets(SOURCE_MISC, "torch_size", TORCH_SIZE, namespace=NS, make_args=matrix)


def rows_of_four(n):
    return (torch.randn(n, 4),)


def vec_and_four(n):
    return torch.randn(n), torch.randn(4)


# Sizes equal at the first call (4 and 4) and apart at the third (7 and 4): an answer that
# assumed them equal must not be reused.
EQUAL_AT_FIRST = [
    ("square_check_branch", "a, b = x.shape\nif a == b:\n    return x.t() + x, 'square'\nreturn x * 2, 'rect'", {"make_args": rows_of_four}),
    ("reshape_by_swapped_sizes", "a, b = x.shape\nreturn x.reshape(b, a), a == b, a - b", {"make_args": rows_of_four}),
    ("two_inputs_sizes_compared", "n, m = x.shape[0], y.shape[0]\nreturn torch.cat([x, y]), n == m, n + m, x[:m] + y[:n]", {"params": "x, y", "make_args": vec_and_four}),
    ("max_min_of_shape", "return x + 0, max(x.shape), min(x.shape), sum(x.shape), x.shape[::-1]", {"make_args": rows_of_four}),
]
snippets(SOURCE_MISC, "dynshape_equal", EQUAL_AT_FIRST, namespace=NS)

ROUNDING = [
    ("round_half_to_even_of_size", "n = x.shape[0]\nreturn x, round(n / 2), round(n * 0.5 + 0.5), round(n / 4, 1)"),
    ("int_truncates_negative_ratio", "n = x.shape[0]\nreturn x, int(-n / 2), int(n / -4), math.trunc(-n / 3), math.floor(-n / 3)"),
    ("int_methods_of_size", "n = x.shape[0]\nreturn x, n.bit_length(), n.real, n.numerator, n.conjugate(), pow(n, -1), pow(n, 2, 5)"),
    ("ranges_from_size", "n = x.shape[0]\nr = range(n, 0, -2)\nreturn x, list(r), len(range(0, n, 3)), sum(range(n)), 3 in range(n), list(reversed(range(n)))[:2]"),
    ("size_division_by_zero_caught", "n = x.shape[0]\ntry:\n    r = n // (n - n)\nexcept ZeroDivisionError as e:\n    r = str(e)\nreturn x, r"),
    ("float_format_of_size_ratio", "n = x.shape[0]\nreturn x, f'{n / 3:.2f}', f'{n:5d}|{-n:<4}|', '%.3e' % (n / 7)"),
]
snippets(SOURCE_MISC, "dynshape_rounding", ROUNDING, namespace=NS, sizes=(5, 9))


def same_tensor_twice(n):
    t = torch.randn(n)
    return t, t


def base_and_view(n):
    t = torch.randn(n)
    return t, t[1:]


def list_with_alias(n):
    t = torch.randn(n)
    return ([t, t, torch.randn(n)],)


ALIASES = [
    ("same_tensor_passed_twice_mutated", "x.add_(1)\nreturn y * 2, x is y", {"params": "x, y", "make_args": same_tensor_twice}),
    ("base_and_view_passed_mutate_base", "x.mul_(2)\nreturn y + 1", {"params": "x, y", "make_args": base_and_view}),
    ("base_and_view_passed_mutate_view", "y.zero_()\nreturn x * 3", {"params": "x, y", "make_args": base_and_view}),
    ("list_holding_alias_mutated", "l[0].add_(10)\nreturn l[1] - l[2], l[0] is l[1]", {"params": "l", "make_args": list_with_alias}),
]
snippets(SOURCE_UNSPEC, "unspec_aliases", ALIASES, namespace=NS)
