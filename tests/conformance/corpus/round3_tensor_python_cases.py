"""Tensors in Python control flow and Python protocols: bool() of one-element tensors and its
error for many, item() and tolist() feeding Python arithmetic, indexing and range, len() and
iteration (rows, 0-d errors), `in` on tensors and on lists of tensors (identity before ==),
tensors as dict keys and set members (by identity), Python builtins (sum, max, any, sorted,
zip, enumerate) over tensors, torch.Size arithmetic/slicing/comparison/hash, dtype and device
objects as dict keys and in comparisons, finfo/iinfo, grad-mode managers used as decorators on
functions made inside the compiled function, and requires_grad_ toggled inside. Modelled on
PyTorch's dynamo test_misc, test_functions, test_ctx_manager and test_unspec, recast in our
own words."""

import torch

from . import int_vec, matrix, snippets, two_vecs, vec_grad

NS = {"torch": torch}


def one(n):
    return (torch.randn(1) + 0.5,)


def scalar(n):
    return (torch.tensor(float(n)),)


def small_ints(n):
    return (torch.arange(n) % 3,)


CONTROL = [
    ("bool_of_one_element_branch", "if x:\n    return x + 1\nreturn x - 1", {"make_args": one}),
    ("bool_of_many_elements_raises", "try:\n    if x:\n        return x\nexcept RuntimeError:\n    return x * 2"),
    ("not_of_comparison_tensor", "return x * 2 if not (x.sum() > 100) else x"),
    ("item_in_python_arithmetic", "v = x.sum().item()\nreturn x * (v * 2 + 1), type(v)"),
    ("item_of_int_tensor_as_list_index", "names = ['a', 'b', 'c']\ni = x[0].item()\nreturn names[i], x + i", {"make_args": small_ints}),
    ("item_drives_range", "n = x.max().item() + 1\nout = []\nfor i in range(n):\n    out.append(i)\nreturn x + len(out), out", {"make_args": small_ints}),
    ("tolist_nested_mutated_then_back", "rows = x.tolist()\nrows[0][0] = 100.0\nrows.append([0.0] * 3)\nreturn torch.tensor(rows) + 1, len(rows)", {"make_args": matrix}),
    ("tolist_of_bool_and_int", "return (x > 0).tolist(), x.round().int().tolist()"),
    ("len_of_tensor_and_0d_raises", "n = len(x)\ntry:\n    len(x.sum())\nexcept TypeError as e:\n    return x * n, 'len' in str(e)"),
    ("iterate_rows_of_matrix", "out = []\nfor row in x:\n    out.append(row.sum())\nreturn out, torch.stack(out)", {"make_args": matrix}),
    ("iterate_0d_raises_typeerror", "try:\n    for v in x.sum():\n        pass\nexcept TypeError:\n    return x + 1\nreturn x"),
    ("enumerate_zip_over_tensors", "acc = torch.zeros(())\nfor i, (a, b) in enumerate(zip(x, y)):\n    acc = acc + a * b * i\nreturn acc", {"params": "x, y", "make_args": two_vecs}),
    ("python_sum_max_over_tensor", "return sum(x), max(x), min(x, key=lambda v: v.abs())"),
    ("python_any_all_over_bool_tensor", "return any(x > 0), all(x > -10), x + any(x > 100)"),
    ("sorted_of_tensor_elements", "vals = sorted(x.tolist())\nreturn x.sort().values - torch.tensor(vals)"),
    ("in_on_tensor_value", "return 1 in x, 7 in x, x * (2 in x)", {"make_args": small_ints}),
    ("tensor_in_list_by_identity", "items = [x, y]\nreturn x in items, x + 1", {"params": "x, y", "make_args": two_vecs}),
    ("tensor_not_in_list_raises_on_eq", "items = [y]\ntry:\n    found = x in items\nexcept RuntimeError:\n    found = 'ambiguous'\nreturn found, x", {"params": "x, y", "make_args": two_vecs}),
    ("tensors_as_dict_keys", "d = {x: 'x', y: 'y'}\nd[x] = 'again'\nreturn d[x], len(d), [k is x for k in d], y in d", {"params": "x, y", "make_args": two_vecs}),
    ("tensor_set_members_by_identity", "s = {x, y, x}\nz = x + 0\nreturn len(s), x in s, z in s", {"params": "x, y", "make_args": two_vecs}),
    ("tensor_key_dict_values_math", "weights = {x: 2.0, y: -1.0}\nreturn sum(k * w for k, w in weights.items())", {"params": "x, y", "make_args": two_vecs}),
    ("while_on_tensor_condition", "steps = 0\nwhile (x.abs() > 0.5).any() and steps < 10:\n    x = x * 0.5\n    steps += 1\nreturn x, steps"),
    ("float_int_complex_of_one_element", "return float(x), int(x * 10), complex(x), x.sum().__float__()", {"make_args": one}),
    ("item_formatted_in_fstring", "return f'{x.sum().item():.2f}', x"),
    ("tensor_index_with_python_int_from_item", "i = int(x.argmax())\nreturn x[i], i"),
    ("divmod_of_items", "a = int(x.sum().abs().item() * 10)\nreturn divmod(a, 3), x", {"make_args": one}),
    ("scalar_tensor_as_bound", "return torch.arange(int(x)) * 2", {"make_args": scalar}),
    ("tensor_eq_python_number_branch", "return x + 1 if (x == x).all() else x", {"make_args": int_vec}),
]
snippets("dynamo/test_misc", "r3_tensor_flow", CONTROL, namespace=NS)

SIZES = [
    ("size_plus_tuple_and_tuple_plus_size", "s = x.shape\nreturn s + (2,), (1,) + s, type(s + (2,)).__name__, type((1,) + s).__name__", {"make_args": matrix}),
    ("size_times_int_and_slice_types", "s = x.shape\nreturn s * 2, type(s * 2).__name__, s[1:], type(s[1:]).__name__, s[::-1]", {"make_args": matrix}),
    ("size_comparisons_with_tuples", "s = x.shape\nreturn s == (s[0], 3), s != (0, 3), s < (100,), s > (1, 2), s == [s[0], 3]", {"make_args": matrix}),
    ("size_hash_equals_tuple_hash", "s = x.shape\nreturn hash(s) == hash(tuple(s)), {s: 1}[tuple(s)], x", {"make_args": matrix}),
    ("size_numel_count_index", "s = torch.Size([x.shape[0], 3, x.shape[0]])\nreturn s.numel(), s.count(x.shape[0]), s.index(3), x"),
    ("size_built_from_list_and_compared", "s = torch.Size([x.shape[0], 3])\nreturn s == x.shape, x.new_zeros(s), isinstance(s, tuple)", {"make_args": matrix}),
    ("size_unpacked_into_view", "n, m = x.shape\nreturn x.view(m, n), x.reshape(*x.shape[::-1])", {"make_args": matrix}),
    ("size_in_set_and_as_dict_key", "seen = {x.shape, y.shape}\nd = {x.shape: 'a'}\nreturn len(seen), d[y.shape], x + y", {"params": "x, y", "make_args": two_vecs}),
    ("size_max_min_and_sum", "s = x.shape\nreturn max(s), min(s), sum(s), x * sum(s)", {"make_args": matrix}),
    ("size_concat_then_zeros", "return torch.zeros(x.shape + (2,)).shape, torch.ones((2,) + x.shape).sum()", {"make_args": matrix}),
    ("size_list_and_tuple_conversions", "s = x.shape\nl = list(s)\nl[0] += 1\nreturn l, tuple(s), type(tuple(s)).__name__, torch.Size(l)", {"make_args": matrix}),
    ("size_repr_and_str", "return str(x.shape), repr(x.shape), x", {"make_args": matrix}),
    ("size_of_dim_negative_index", "return x.size(-1), x.size()[-2], x.shape[-1] * x", {"make_args": matrix}),
]
snippets("dynamo/test_misc", "r3_size", SIZES, namespace=NS)

DTYPES = [
    ("dtype_as_dict_key", "names = {torch.float32: 'f32', torch.int64: 'i64'}\nreturn names[x.dtype], names.get(x.long().dtype), x"),
    ("dtype_in_tuple_and_compare", "return x.dtype in (torch.float16, torch.float32), x.dtype == torch.float, x.dtype != torch.double, x"),
    ("dtype_properties", "d = x.dtype\nreturn d.is_floating_point, d.is_complex, d.itemsize, d.is_signed, x.to(torch.int32).dtype.is_floating_point"),
    ("dtype_chooses_branch", "if x.dtype in {torch.int64, torch.int32}:\n    return x.float() / 2\nreturn x * 2", {"make_args": int_vec}),
    ("finfo_iinfo_of_dtype", "fi = torch.finfo(x.dtype)\nii = torch.iinfo(torch.int16)\nreturn x.clamp(min=fi.min, max=fi.max) + fi.eps, ii.max, fi.bits"),
    ("device_comparisons_and_key", "d = x.device\ntable = {torch.device('cpu'): 1}\nreturn d.type, d == torch.device('cpu'), table[d], x * table[d], str(d)"),
    ("dtype_str_and_repr", "return str(x.dtype), repr(x.long().dtype), x"),
    ("promote_types_and_result_type", "return torch.promote_types(x.dtype, torch.int64), torch.result_type(x, 2), x.int() + 1"),
    ("dtype_set_membership_counts", "dtypes = [x.dtype, x.int().dtype, x.double().dtype, x.dtype]\nreturn len(set(dtypes)), dtypes.count(torch.float32), x"),
    ("to_dtype_chosen_from_dict", "target = {'half': torch.float16, 'int': torch.int32}['int']\nreturn x.to(target), x.to(dtype=target).dtype"),
]
snippets("dynamo/test_misc", "r3_dtype", DTYPES, namespace=NS)

GRAD = [
    ("no_grad_decorator_on_inner_function", "@torch.no_grad()\ndef g(t):\n    return t * 2\ny = g(x)\nreturn y, y.requires_grad, (x * 3).requires_grad", {"make_args": vec_grad}),
    ("enable_grad_decorator_inner_under_no_grad", "@torch.enable_grad()\ndef g(t):\n    return t * 2\nwith torch.no_grad():\n    y = g(x)\n    z = x * 2\nreturn y.requires_grad, z.requires_grad, y", {"make_args": vec_grad}),
    ("inference_mode_decorator_on_inner", "@torch.inference_mode()\ndef g(t):\n    return t + 1\ny = g(x)\nreturn y.is_inference(), y.requires_grad, y * 1", {"make_args": vec_grad}),
    ("set_grad_enabled_false_as_decorator", "@torch.set_grad_enabled(False)\ndef g(t):\n    return t.sin(), torch.is_grad_enabled()\ny, mode = g(x)\nreturn y.requires_grad, mode, torch.is_grad_enabled(), y", {"make_args": vec_grad}),
    ("no_grad_bare_decorator_inner", "@torch.no_grad\ndef g(t):\n    return t.exp()\nreturn g(x).requires_grad, x.exp().requires_grad", {"make_args": vec_grad}),
    ("requires_grad_toggled_on_detached", "y = x.detach().clone()\ny.requires_grad_()\nz = y * 2\ny.requires_grad_(False)\nw = y * 3\nreturn z.requires_grad, w.requires_grad, z + w"),
    ("requires_grad_set_on_input", "x.requires_grad_(True)\nreturn x * 2, x.requires_grad, x.is_leaf"),
    ("requires_grad_attribute_assigned", "y = torch.ones_like(x)\ny.requires_grad = True\nz = (y * x).sum()\nreturn z.requires_grad, y.is_leaf, z"),
    ("grad_decorated_inner_in_loop", "@torch.no_grad()\ndef step(t):\n    return t - 0.1\nout = x * 1\nfor _ in range(3):\n    out = step(out)\nreturn out, out.requires_grad", {"make_args": vec_grad}),
    ("train_inner_no_grad_part_of_result", "@torch.no_grad()\ndef stat(t):\n    return t.mean()\nreturn x * 2 - stat(x)", {"make_args": vec_grad, "train": True}),
]
snippets("dynamo/test_ctx_manager", "r3_gradmode", GRAD, namespace=NS)
