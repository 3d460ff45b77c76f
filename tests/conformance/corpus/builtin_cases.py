"""Builtins inside compiled code: CPython's test_builtin and test_sort (abs, all/any, callable,
chr/ord, divmod, enumerate, filter, getattr/setattr/hasattr/delattr, isinstance/issubclass,
len, map, max/min with key and default, pow, repr, round, sorted (stability, key, reverse,
errors), sum with start, type, vars, zip) and dynamo's test_builtins (the same builtins on
tensors, sizes and user objects)."""

import torch

from . import snippets


class Box:
    def __init__(self, v):
        self.v = v

    def __len__(self):
        return 3

    def __repr__(self):
        return f"Box({self.v!r})"


class WithSlots:
    __slots__ = ("a",)

    def __init__(self):
        self.a = 1


NS = {"torch": torch, "Box": Box, "WithSlots": WithSlots}

BUILTIN = [
    ("abs_values", "return x, [abs(v) for v in (-3, 2.5, -0.0, True)]"),
    ("abs_custom", "class A:\n    def __abs__(self):\n        return 7\nreturn x + abs(A())"),
    ("all_any_short_circuit", "calls = []\ndef f(v):\n    calls.append(v)\n    return v\nr = any(f(v) for v in (0, 1, 2))\nreturn x + r, calls"),
    ("callable_checks", "return x, [callable(v) for v in (len, 1, Box, Box(1), lambda: 0, torch.sin)]"),
    ("chr_ord", "return x + ord('a'), chr(98)"),
    ("chr_out_of_range_raises", "return x, chr(-1)"),
    ("divmod_mixed", "return x, divmod(7, 2), divmod(-7, 2.0)"),
    ("divmod_by_zero_raises", "return x, divmod(1, 0)"),
    ("enumerate_start_negative", "return x, list(enumerate('abc', -2))"),
    ("getattr_setattr_delattr", "b = Box(1)\nsetattr(b, 'w', 5)\nv = getattr(b, 'w')\ndelattr(b, 'w')\nreturn x + v + hasattr(b, 'w')"),
    ("delattr_missing_raises", "b = Box(1)\ndelattr(b, 'nope')\nreturn x"),
    ("setattr_on_slots_missing_raises", "s = WithSlots()\ns.b = 3\nreturn x"),
    ("slots_attribute_read", "s = WithSlots()\nreturn x + s.a"),
    ("isinstance_tuple_of_types", "return x + isinstance(1, (str, int)) + isinstance(x, (list, torch.Tensor))"),
    ("isinstance_bool_int", "return x + isinstance(True, int) + isinstance(1, bool)"),
    ("issubclass_checks", "return x + issubclass(bool, int) + issubclass(torch.nn.Linear, torch.nn.Module)"),
    ("len_custom", "return x + len(Box(0))"),
    ("len_custom_negative_raises", "class L:\n    def __len__(self):\n        return -1\nreturn x + len(L())"),
    ("len_of_tensor", "return x + len(x)"),
    ("len_of_0d_tensor_raises", "return x + len(x.sum())"),
    ("max_key_default", "return x, max([], default=None), max(['a', 'bbb', 'cc'], key=len)"),
    ("max_ties_first_wins", "return x, max([(1, 'a'), (1, 'b')], key=lambda p: p[0])"),
    ("min_multiple_args", "return x + min(3, 1, 2)"),
    ("max_no_args_raises", "return x + max()"),
    ("min_of_mixed_types_raises", "return x, min([1, 'a'])"),
    ("max_of_tensors_elementwise_error", "return max(x, x + 1)"),
    ("max_of_sizes", "return x + max(x.shape[0], 5)"),
    ("pow_builtin_mod", "return x + pow(2, 10, 7)"),
    ("pow_negative_mod", "return x + pow(3, -1, 7)"),
    ("pow_tensor", "return pow(x, 2)"),
    ("repr_of_values", "return x, repr([1, 'a', None, 2.5, (1,)])"),
    ("repr_custom", "return x, repr(Box(3))"),
    ("round_tensor", "return round(x * 10)"),
    ("round_builtin_float_ndigits", "return x, round(2.5), round(3.5), round(1.25, 1)"),
    ("sum_start_list", "return x, sum([[1], [2]], [])"),
    ("sum_strings_raises", "return x, sum(['a', 'b'], '')"),
    ("sum_floats", "return x + sum([0.5, 0.25])"),
    ("sum_tensors_with_start", "return sum([x, x], torch.ones_like(x))"),
    ("type_of_values", "return x, [type(v).__name__ for v in (1, 1.0, 'a', [], (), {}, None, x.shape)]"),
    ("type_three_args_creates_class", "C = type('C', (), {'v': 3})\nreturn x + C.v + C().v"),
    ("type_of_tensor", "return x, type(x) is torch.Tensor"),
    ("vars_of_object", "b = Box(5)\nreturn x + vars(b)['v']"),
    ("dir_contains_attr", "b = Box(5)\nreturn x + ('v' in dir(b))"),
    ("id_equal_for_same_object", "a = [1]\nreturn x + (id(a) == id(a))"),
    ("hash_of_int_str_tuple_stable", "return x + (hash(5) == 5) + (hash((1, 'a')) == hash((1, 'a')))"),
    ("zip_three", "return x, list(zip('ab', [1, 2], (True, False)))"),
    ("map_with_builtin", "return x, list(map(str, [1, 2]))"),
    ("filter_with_lambda_over_sizes", "return x, list(filter(lambda d: d > 2, (x.shape[0], 1, 3)))"),
    ("bin_hex_format", "return x, format(255, '08b'), format(3.14159, '.2f'), f'{x.shape[0]:03d}'"),
    ("str_methods", "s = ' Hello World '\nreturn x + len(s.strip()), s.lower().split(), s.replace('o', '0')"),
    ("str_join_split", "return x, '-'.join(['a', 'b']), 'a,b,,c'.split(',')"),
    ("str_format_method", "return x, '{}-{:>3}'.format(1, 'b')"),
    ("str_startswith_endswith", "s = 'layer.0.weight'\nreturn x + s.startswith('layer') + s.endswith('bias')"),
    ("str_index_find", "s = 'abcabc'\nreturn x + s.find('c') + s.rfind('a') + s.find('z')"),
    ("str_index_missing_raises", "return x + 'abc'.index('z')"),
    ("str_concat_and_mul", "return x, 'ab' + 'c', 'ab' * 2"),
    ("str_in_contains", "return x + ('ell' in 'hello')"),
    ("str_isdigit_etc", "return x, ['12'.isdigit(), 'ab'.isalpha(), 'A'.isupper(), ' '.isspace()]"),
    ("str_partition", "return x, 'a.b.c'.partition('.'), 'a.b.c'.rpartition('.')"),
    ("str_encode_bytes", "return x + len('héllo'.encode()), 'ab'.encode()"),
    ("str_f_string_of_tensor_shape", "return x, f'shape={tuple(x.shape)}'"),
    ("isinstance_str_subclass_enum", "import enum\nclass Color(str, enum.Enum):\n    RED = 'red'\nreturn x + (Color.RED == 'red') + isinstance(Color.RED, str)"),
    ("enum_members", "import enum\nclass Mode(enum.Enum):\n    A = 1\n    B = 2\nreturn x * Mode.B.value, Mode(1).name, [m.name for m in Mode]"),
    ("int_enum_arithmetic", "import enum\nclass K(enum.IntEnum):\n    ONE = 1\n    TWO = 2\nreturn x * (K.TWO + 1), K.ONE < K.TWO"),
    ("globals_builtin_lookup_shadowed_locally", "len = lambda v: 42\nreturn x + len([1])"),
    ("object_identity_none", "v = None\nreturn x + (v is None) + (v is not None)"),
    ("slice_builtin_indices", "s = slice(1, None, 2)\nreturn x, s.indices(10)"),
    ("complex_arithmetic", "c = complex(1, 2) * (3 - 1j)\nreturn x + c.real, c"),
    ("bytes_and_bytearray", "b = bytearray(b'ab')\nb.append(99)\nreturn x + len(b), bytes(b)"),
    ("memoryless_iter_sorted_unique", "return x, sorted(set('mississippi'))"),
    ("print_is_harmless", "print('hello from compiled code', x.shape)\nreturn x + 1"),
    ("isinstance_size_tuple", "return x + isinstance(x.shape, tuple) + isinstance(x.shape, torch.Size)"),
    ("tensor_truthiness_single", "t = x[:1]\nreturn x + (1 if t.abs() >= 0 else 0)"),
    ("tensor_truthiness_multi_raises", "return x + (1 if x else 0)"),
    ("getattr_dynamic_name", "name = 'sh' + 'ape'\nreturn x + getattr(x, name)[0]"),
    ("setattr_on_tensor_attribute_name", "y = x * 2\ny.tag = 'hello'\nreturn y, y.tag"),
    ("isinstance_parameter", "p = torch.nn.Parameter(torch.ones(2))\nreturn x + isinstance(p, torch.Tensor) + isinstance(x, torch.nn.Parameter)"),
]
snippets("cpython/test_builtin", "builtin", BUILTIN, namespace=NS)

SORT = [
    ("sorted_ints", "return x, sorted([3, 1, 2])"),
    ("sorted_reverse", "return x, sorted([3, 1, 2], reverse=True)"),
    ("sorted_stable_by_key", "data = [('b', 1), ('a', 1), ('c', 0)]\nreturn x, sorted(data, key=lambda p: p[1])"),
    ("sorted_stable_reverse", "data = [('b', 1), ('a', 1), ('c', 0)]\nreturn x, sorted(data, key=lambda p: p[1], reverse=True)"),
    ("sorted_strings", "return x, sorted(['b', 'A', 'a'])"),
    ("sorted_key_str_lower", "return x, sorted(['b', 'A', 'a'], key=str.lower)"),
    ("sorted_tuples_lexicographic", "return x, sorted([(2, 'a'), (1, 'b'), (1, 'a')])"),
    ("sorted_mixed_raises", "return x, sorted([1, 'a'])"),
    ("sorted_none_raises", "return x, sorted([None, 1])"),
    ("sorted_empty", "return x, sorted([])"),
    ("sorted_returns_new_list", "l = [2, 1]\nm = sorted(l)\nreturn x, l, m"),
    ("list_sort_returns_none", "l = [2, 1]\nr = l.sort()\nreturn x, r, l"),
    ("sorted_generator", "return x, sorted(v % 4 for v in range(8))"),
    ("sorted_dict_items_by_value", "d = {'a': 3, 'b': 1}\nreturn x, sorted(d.items(), key=lambda kv: kv[1])"),
    ("sorted_floats_with_nan", "return x, sorted([3.0, 1.0, 2.0])"),
    ("sorted_bools", "return x, sorted([True, False, True])"),
    ("sorted_key_must_be_keyword", "return x, sorted([1], len)"),
    ("sort_key_with_side_effects_count", "calls = []\ndef key(v):\n    calls.append(v)\n    return -v\nl = sorted([1, 2, 3], key=key)\nreturn x + len(calls), l"),
    ("sort_in_place_key_reverse", "l = ['aa', 'b', 'ccc']\nl.sort(key=len, reverse=True)\nreturn x, l"),
    ("sort_mutation_during_sort_raises", "l = [3, 1, 2]\ndef key(v):\n    l.append(v)\n    return v\nl.sort(key=key)\nreturn x"),
    ("sorted_sizes", "return x, sorted([x.shape[0], 5, 1])"),
    ("sorted_tensors_by_sum", "ts = [x * 3, x, x * 2]\nreturn sorted(ts, key=lambda t: t.abs().sum().item())[0]"),
    ("sorted_objects_by_attr", "import operator\nbs = [Box(3), Box(1), Box(2)]\nreturn x, [b.v for b in sorted(bs, key=operator.attrgetter('v'))]"),
    ("sorted_custom_lt", "class V:\n    def __init__(self, v):\n        self.v = v\n    def __lt__(self, o):\n        return self.v > o.v\nreturn x, [v.v for v in sorted([V(1), V(3), V(2)])]"),
    ("reversed_sorted", "return x, list(reversed(sorted([2, 3, 1])))"),
    ("sorted_large_range_reversed", "return x + sorted(range(100), reverse=True)[0]"),
    ("min_max_key_sizes", "shapes = [(2, 3), (1, 5), (4, 1)]\nreturn x, min(shapes, key=lambda s: s[0] * s[1]), max(shapes)"),
    ("torch_sort_matches_python", "v, i = torch.sort(x)\nreturn v, i"),
    ("sorted_dict_keys_ints", "d = {3: 'c', 1: 'a', 2: 'b'}\nreturn x, [d[k] for k in sorted(d)]"),
    ("sorted_tuple_input_returns_list", "return x, sorted((3, 1))"),
]
snippets("cpython/test_sort", "sort", SORT, namespace=NS)

BUILTINS_TENSOR = [
    ("abs_of_tensor", "return abs(x)"),
    ("sum_of_tensor_iterates_rows", "return sum(x.reshape(2, -1) if x.shape[0] % 2 == 0 else x.reshape(1, -1))"),
    ("min_of_two_tensors_raises", "return min(x, x)"),
    ("max_of_tensor_and_scalar_item", "return x * max(x.abs().max().item(), 1.0)"),
    ("divmod_tensor", "q, r = divmod(x, 0.3)\nreturn q, r"),
    ("isinstance_tensor_subclass_check", "return x + isinstance(x, torch.Tensor), type(x).__name__"),
    ("len_of_shape", "return x + len(x.shape)"),
    ("list_of_shape", "return x, list(x.shape)"),
    ("tuple_of_size_arith", "s = x.shape + (2,)\nreturn x, s"),
    ("size_numel_and_dim", "return x + x.numel() + x.dim() + x.ndim"),
    ("size_index_negative", "return x + x.shape[-1] + x.size(-1)"),
    ("size_out_of_range_raises", "return x + x.size(1)"),
    ("int_of_tensor_element", "return x + int(x.shape[0] * 2)"),
    ("float_of_zero_d_tensor", "return x * float(x.sum())"),
    ("bool_of_zero_d_tensor", "return x + bool(x.sum() > 0)"),
    ("int_of_multi_element_raises", "return int(x)"),
    ("range_of_tensor_len", "return [x[i] * i for i in range(len(x))]"),
    ("zip_of_tensors", "return [a + b for a, b in zip(x, x.flip(0))]"),
    ("enumerate_of_tensor", "return [v * i for i, v in enumerate(x)]"),
    ("map_over_tensor_rows", "return list(map(torch.sum, x.reshape(2, -1) if x.shape[0] % 2 == 0 else x.reshape(1, -1)))"),
    ("sorted_of_tensor_elements", "return sorted(x)[0]"),
    ("any_of_bool_tensor_python", "return x + any(x > 100)"),
    ("hasattr_tensor_methods", "return x + hasattr(x, 'relu') + hasattr(x, 'bogus_method')"),
    ("getattr_tensor_method_call", "return getattr(x, 'relu')()"),
    ("setattr_tensor_python_attr_input", "x.note = 5\nreturn x * 2"),
    ("callable_tensor_method", "return x + callable(x.relu)"),
    ("id_of_tensor_stable", "return x + (id(x) == id(x))"),
    ("pow_builtin_tensor_scalar_exponent", "return pow(x.abs(), 0.5)"),
    ("round_ndigits_tensor", "return round(x, 2)"),
    ("type_call_on_tensor", "return type(x)([1.0, 2.0]) + x[:2]"),
]
snippets("dynamo/test_builtins", "builtins_tensor", BUILTINS_TENSOR, namespace=NS)
