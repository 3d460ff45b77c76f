"""Python numbers inside compiled code: the operator module's functions (CPython
test_operator), int and float arithmetic semantics (test_int, test_float: floor division and
modulo of negatives, true division, powers, shifts, zero division, conversions, rounding),
bool arithmetic (test_bool) and the math module (test_math: values, domain errors, integer
functions). Each operation runs on constants, on sizes read from the input tensor (which become
symbolic on the third call, at a new size), and, where defined, on tensors."""

import math
import operator

import torch

from . import snippets, two_vecs

NS = {"torch": torch, "math": math, "operator": operator}

BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and_", "or_", "xor",
          "lt", "le", "eq", "ne", "gt", "ge"]
INT_ONLY = {"lshift", "rshift", "and_", "or_", "xor"}
COMPARE = {"lt", "le", "eq", "ne", "gt", "ge"}

table = []
for op in BINARY:
    table.append((f"{op}_int_constants", f"a, b = -7, 3\nr = operator.{op}(a, b)\nreturn x + r, r"))
    table.append((f"{op}_float_constants", f"a, b = 7.5, -2\nr = operator.{op}(a, b)\nreturn x + r, r"))
    table.append((f"{op}_bool_constants", f"r = operator.{op}(True, 3)\nreturn x + r, r"))
    table.append((f"{op}_by_zero", f"r = operator.{op}(5, 0)\nreturn x + r, r"))
snippets("cpython/test_operator", "operator", table, namespace=NS)

sym = []
for op in BINARY:
    sym.append((f"{op}_size_by_int", f"n = x.shape[0]\nr = operator.{op}(n, 3)\nreturn x + r, r"))
    sym.append((f"{op}_int_by_size", f"n = x.shape[0]\nr = operator.{op}(3, n)\nreturn x + r, r"))
    sym.append((f"{op}_negative_size_by_int", f"n = -x.shape[0]\nr = operator.{op}(n, 3)\nreturn x + r, r"))
    sym.append((f"{op}_size_by_float", f"n = x.shape[0]\nr = operator.{op}(n, 2.5)\nreturn x + r, r"))
snippets("cpython/test_int", "int_size", sym, namespace=NS)

tensor_ops = []
for op in BINARY:
    if op in INT_ONLY:
        tensor_ops.append((f"{op}_int_tensors", f"return operator.{op}(a, b.abs() % 4)",
                           {"params": "a, b", "make_args": lambda n: (torch.randint(-8, 8, (n,)), torch.randint(-8, 8, (n,)))}))
    elif op == "pow":
        tensor_ops.append((f"{op}_tensors", f"return operator.{op}(a.abs(), b)", {"params": "a, b", "make_args": two_vecs}))
    else:
        tensor_ops.append((f"{op}_tensors", f"return operator.{op}(a, b)", {"params": "a, b", "make_args": two_vecs}))
    if op not in INT_ONLY:
        tensor_ops.append((f"{op}_tensor_scalar", f"return operator.{op}(x, 2)"))
        tensor_ops.append((f"{op}_scalar_tensor", f"return operator.{op}(2, x)"))
tensor_ops += [
    ("matmul_tensors", "return operator.matmul(a, b.t())", {"params": "a, b", "make_args": lambda n: (torch.randn(n, 3), torch.randn(n, 3))}),
    ("iadd_tensor_inplace_alias", "y = x\ny = operator.iadd(y, 1)\nreturn y is x, x"),
    ("isub_list_raises", "l = [1]\nl = operator.isub(l, [1])\nreturn x"),
    ("iadd_list_extends_in_place", "l = [1]\nm = l\nl = operator.iadd(l, [2])\nreturn x + len(m)"),
    ("imul_int", "a = 3\na = operator.imul(a, x.shape[0])\nreturn x + a"),
    ("ipow_float", "a = 2.0\na = operator.ipow(a, 3)\nreturn x + a"),
    ("itruediv_tensor", "y = x.clone()\ny = operator.itruediv(y, 2)\nreturn y"),
    ("ifloordiv_tensor", "y = x.clone()\ny //= 0.5\nreturn y"),
    ("imod_tensor_int", "y = x * 10\ny %= 3\nreturn y"),
]
snippets("cpython/test_operator", "operator_tensor", tensor_ops, namespace=NS)

UNARY = [
    ("neg_int", "return x + operator.neg(-3)"),
    ("pos_bool", "r = operator.pos(True)\nreturn x + r, r"),
    ("abs_negative_float", "return x + operator.abs(-2.5)"),
    ("invert_int", "r = operator.invert(5)\nreturn x + r, r"),
    ("invert_bool", "r = operator.invert(True)\nreturn x + r, r"),
    ("invert_size", "r = ~x.shape[0]\nreturn x + r, r"),
    ("not_zero", "return x + operator.not_(0)"),
    ("not_list", "return x + operator.not_([])"),
    ("truth_values", "return x, [operator.truth(v) for v in (0, 1, '', 'a', [], [0], None)]"),
    ("index_int", "return x + operator.index(3)"),
    ("index_float_raises", "return x + operator.index(3.0)"),
    ("index_size", "return x + operator.index(x.shape[0])"),
    ("neg_tensor", "return operator.neg(x)"),
    ("abs_tensor", "return operator.abs(x)"),
    ("invert_bool_tensor", "return operator.invert(x > 0)"),
    ("not_tensor_multi_element_raises", "return operator.not_(x)"),
    ("concat_lists", "return x, operator.concat([1], [2])"),
    ("concat_int_raises", "return x, operator.concat(1, 2)"),
    ("contains", "return x + operator.contains([1, 2], 2)"),
    ("countOf", "return x + operator.countOf([1, 2, 1], 1)"),
    ("indexOf", "return x + operator.indexOf('abc', 'c')"),
    ("indexOf_missing_raises", "return x + operator.indexOf([1], 5)"),
    ("getitem_list", "return x + operator.getitem([5, 6], 1)"),
    ("getitem_slice", "return x, operator.getitem('abcdef', slice(1, 4))"),
    ("setitem_list", "l = [1, 2]\noperator.setitem(l, 0, 9)\nreturn x, l"),
    ("delitem_dict", "d = {'a': 1, 'b': 2}\noperator.delitem(d, 'a')\nreturn x, d"),
    ("itemgetter_single", "g = operator.itemgetter(1)\nreturn x + g([4, 5, 6])"),
    ("itemgetter_multi", "g = operator.itemgetter(0, 2)\nreturn x, g('abc')"),
    ("itemgetter_tensor_rows", "g = operator.itemgetter(0, -1)\nreturn g(x)"),
    ("itemgetter_sort_key", "return x, sorted([(1, 'b'), (0, 'c'), (2, 'a')], key=operator.itemgetter(1))"),
    ("attrgetter_shape", "g = operator.attrgetter('shape')\nreturn x + g(x)[0]"),
    ("attrgetter_multi", "g = operator.attrgetter('real', 'imag')\nreturn x, g(3 + 4j)"),
    ("attrgetter_dotted", "g = operator.attrgetter('T.shape')\nreturn x, g(x.reshape(2, -1))"),
    ("methodcaller_tensor", "m = operator.methodcaller('sum', 0)\nreturn m(x)"),
    ("methodcaller_kwargs", "m = operator.methodcaller('split', ',', maxsplit=1)\nreturn x, m('a,b,c')"),
    ("is_and_is_not", "a = [1]\nreturn x + operator.is_(a, a) + operator.is_not(a, [1])"),
    ("length_hint", "return x + operator.length_hint(iter([1, 2, 3]))"),
    ("call", "return operator.call(torch.sin, x)"),
    ("and_sets", "return x, sorted(operator.and_({1, 2}, {2, 3}))"),
    ("or_dicts", "return x, operator.or_({'a': 1}, {'b': 2})"),
    ("mul_str", "return x, operator.mul('ab', 3)"),
    ("add_tuples", "return x, operator.add((1,), (2,))"),
    ("eq_tensor_python_list", "return operator.eq(x.shape, [x.shape[0]])"),
    ("lt_str", "return x + operator.lt('abc', 'abd')"),
    ("lt_mixed_raises", "return x + operator.lt('a', 1)"),
]
snippets("cpython/test_operator", "operator_unary", UNARY, namespace=NS)

INT = [
    ("int_from_float_truncates", "return x + int(-2.7), int(-2.7)"),
    ("int_from_string", "return x + int('12'), int('ff', 16), int('0b101', 0)"),
    ("int_from_bad_string_raises", "return x + int('1.5')"),
    ("int_from_bool", "return x + int(True)"),
    ("int_of_size_times_float", "r = int(x.shape[0] * 1.5)\nreturn x + r, r"),
    ("int_bit_length", "return x + (255).bit_length() + (x.shape[0]).bit_length()"),
    ("int_divmod_negative", "q, r = divmod(-7, 2)\nreturn x + q * 10 + r, (q, r)"),
    ("int_divmod_size", "q, r = divmod(x.shape[0], 3)\nreturn x + q * 10 + r, (q, r)"),
    ("int_pow_negative_exponent_is_float", "r = 2 ** -1\nreturn x + r, r"),
    ("int_pow_three_args", "r = pow(3, 4, 5)\nreturn x + r, r"),
    ("int_big", "r = 2 ** 70 // 2 ** 68\nreturn x + r, r"),
    ("int_abs_of_size_difference", "r = abs(3 - x.shape[0])\nreturn x + r, r"),
    ("int_round_half_even", "return x, [round(v) for v in (0.5, 1.5, 2.5, -0.5)]"),
    ("int_round_ndigits", "return x, round(1234, -2), round(2.675, 2)"),
    ("int_from_size_str", "return x, str(x.shape[0])"),
    ("int_true_division_of_sizes", "r = x.shape[0] / 2\nreturn x + r, r"),
    ("int_floor_division_result_type", "r = x.shape[0] // 2\nreturn x + r, type(r).__name__"),
    ("int_min_max_of_sizes", "r = max(x.shape[0], 5) - min(x.shape[0], 5)\nreturn x + r, r"),
    ("int_comparison_chain", "n = x.shape[0]\nreturn x + (2 < n < 10), 2 < n < 5"),
    ("int_sum_of_shape", "return x + sum(x.reshape(2, -1).shape)"),
    ("int_shape_arithmetic_reshape", "n = x.shape[0]\nreturn x.reshape(n // 2 if n % 2 == 0 else n, -1)"),
    ("int_hex_oct_bin", "return x, hex(255), oct(8), bin(5)"),
    ("int_conjugate_real", "return x + (5).conjugate() + (5).real + (5).imag"),
    ("int_from_bytes", "return x + int.from_bytes(b'\\x01\\x00', 'little')"),
    ("int_to_bytes", "return x, (258).to_bytes(2, 'big')"),
    ("int_gcd_via_math", "return x + math.gcd(12, 18)"),
    ("int_negative_modulo_of_size", "r = -x.shape[0] % 3\nreturn x + r, r"),
    ("int_negative_floordiv_of_size", "r = -x.shape[0] // 3\nreturn x + r, r"),
    ("int_isinstance_of_size", "return x + isinstance(x.shape[0], int)"),
    ("int_size_as_range_bound", "return x + sum(range(x.shape[0]))"),
]
snippets("cpython/test_int", "int", INT, namespace=NS)

FLOAT = [
    ("float_from_string", "return x + float('1.5') + float(' -2e1 ')"),
    ("float_special_strings", "v = [float('inf'), float('-inf')]\nreturn x + v[0] * 0 + 1, v"),
    ("float_nan_comparisons", "n = float('nan')\nreturn x, n == n, n != n, n < 1"),
    ("float_from_bad_string_raises", "return x + float('abc')"),
    ("float_is_integer", "return x + (2.0).is_integer() + (2.5).is_integer()"),
    ("float_as_integer_ratio", "return x, (0.75).as_integer_ratio()"),
    ("float_floor_division_negative", "r = -7.5 // 2\nreturn x + r, r"),
    ("float_mod_negative", "r = -7.5 % 2\nreturn x + r, r"),
    ("float_divmod", "return x, divmod(7.5, -2)"),
    ("float_zero_division_raises", "return x + 1.0 / 0"),
    ("float_int_conversion_of_inf_raises", "return x + int(float('inf'))"),
    ("float_of_size", "r = float(x.shape[0])\nreturn x + r, r"),
    ("float_size_division", "r = x.shape[0] / 3.0\nreturn x * r, r"),
    ("float_round_ndigits", "return x, round(3.14159, 2), round(-0.5)"),
    ("float_hex", "return x, (1.5).hex()"),
    ("float_fromhex", "return x + float.fromhex('0x1.8p1')"),
    ("float_repr_roundtrip", "return x, repr(0.1 + 0.2)"),
    ("float_negative_zero", "z = -0.0\nreturn x, math.copysign(1, z), z == 0.0"),
    ("float_power_fractional_negative_base", "return x, (-8.0) ** (1 / 3)"),
    ("float_scalar_times_tensor", "return x * 0.1 + 1e-3"),
    ("float_int_mix_result_type", "r = 3 + 0.5\nreturn x + r, type(r).__name__"),
    ("float_sum_precision", "return x + sum([0.1] * 10), sum([0.1] * 10)"),
    ("float_min_max_mixed", "return x, max(1, 2.0), min(2.0, 1)"),
    ("float_abs_tensor_scalar_mix", "return x.abs() * abs(-1.5)"),
    ("float_comparison_with_int", "return x + (1.0 == 1) + (0.1 + 0.2 == 0.3)"),
]
snippets("cpython/test_float", "float", FLOAT, namespace=NS)

BOOL = [
    ("bool_arithmetic", "r = True + True\nreturn x + r, r"),
    ("bool_is_int_subclass", "return x + isinstance(True, int)"),
    ("bool_constructor", "return x, [bool(v) for v in (0, 1, -1, 0.0, '', 'x', [], (0,), None)]"),
    ("bool_and_or_values", "return x, (0 or 'a'), (1 and []), (None or 0)"),
    ("bool_bitwise_stays_bool", "r = True & False, True | False, True ^ True\nreturn x, r"),
    ("bool_invert_is_int", "r = ~False\nreturn x + r, r"),
    ("bool_str", "return x, str(True), repr(False)"),
    ("bool_of_size_compare", "b = x.shape[0] > 5\nreturn x + b, b"),
    ("bool_of_single_element_tensor_branch", "if x[0] > 0:\n    return x + 1\nreturn x - 1"),
    ("bool_tensor_from_python_bool", "return torch.tensor(True) & (x > 0)"),
    ("bool_sum_of_bools", "return x + sum([True, False, True])"),
    ("bool_not_chain", "return x + (not not [1])"),
    ("bool_custom_dunder_bool", "class B:\n    def __bool__(self):\n        return False\nreturn x + (1 if B() else 2)"),
    ("bool_custom_dunder_len", "class L:\n    def __len__(self):\n        return 0\nreturn x + (1 if L() else 2)"),
    ("bool_dunder_bool_wrong_type_raises", "class B:\n    def __bool__(self):\n        return 1\nreturn x + (1 if B() else 2)"),
    ("bool_any_all", "return x + any([0, 0, 1]) + all([1, 1, 0]) + all([])"),
    ("bool_tensor_any_python", "return x + any([x.shape[0] == 4, x.shape[0] == 7])"),
    ("bool_multiplication_of_list", "return x, [0] * True"),
    ("bool_hash_equals_int", "return x + (hash(True) == hash(1))"),
    ("bool_as_index", "return x + ['no', 'yes'][x.shape[0] > 5].count('y')"),
]
snippets("cpython/test_bool", "bool", BOOL, namespace=NS)

MATH1 = {"sqrt": [4.0, -1.0], "exp": [1.0, 1000.0], "log": [math.e, 0.0], "log2": [8.0, -2.0], "log10": [1000.0, 0.0],
         "log1p": [0.5, -1.0], "expm1": [1e-10, 1.0], "sin": [0.5, float("inf")], "cos": [0.5, 0.0], "tan": [0.5, 0.0],
         "asin": [0.5, 2.0], "acos": [0.5, -2.0], "atan": [10.0, -1.0], "sinh": [1.0, 0.0], "cosh": [1.0, 0.0],
         "tanh": [1.0, -30.0], "asinh": [1.0, 0.0], "acosh": [2.0, 0.5], "atanh": [0.5, 1.0], "erf": [0.5, -3.0],
         "erfc": [0.5, 3.0], "gamma": [5.0, 0.0], "lgamma": [5.5, -1.0], "floor": [-2.5, 3.0], "ceil": [-2.5, 3.0],
         "trunc": [-2.5, 2.9], "fabs": [-2.0, 3], "degrees": [math.pi, 1], "radians": [180.0, 1], "isfinite": [1.0, float("inf")],
         "isinf": [float("-inf"), 1.0], "isnan": [float("nan"), 1.0], "factorial": [5, -1], "isqrt": [17, -1]}

math_table = []
for fn, (ok, edge) in MATH1.items():
    math_table.append((f"{fn}_constant", f"r = math.{fn}({ok!r})\nreturn x + r, r"))
    math_table.append((f"{fn}_edge", f"r = math.{fn}({edge!r})\nreturn x + r, r"))
    if fn not in ("isnan",):
        math_table.append((f"{fn}_of_size", f"r = math.{fn}(x.shape[0])\nreturn x + r, r"))
for fn, args in {"atan2": (1.0, -1.0), "copysign": (3.0, -0.0), "fmod": (-7.0, 3.0), "hypot": (3.0, 4.0),
                 "pow": (2.0, 0.5), "remainder": (7.0, 2.0), "ldexp": (0.5, 3), "gcd": (12, 18), "lcm": (4, 6),
                 "comb": (5, 2), "perm": (5, 2), "dist": ((0, 0), (3, 4)), "log": (8.0, 2.0)}.items():
    math_table.append((f"{fn}_two_args", f"r = math.{fn}{args!r}\nreturn x + r, r"))
math_table += [
    ("fsum_exact", "r = math.fsum([0.1] * 10)\nreturn x + r, r"),
    ("prod_ints", "r = math.prod([1, 2, 3, 4])\nreturn x + r, r"),
    ("prod_start", "r = math.prod([2, 3], start=10)\nreturn x + r, r"),
    ("prod_of_shape", "r = math.prod(x.reshape(2, -1).shape)\nreturn x + r, r"),
    ("frexp", "return x, math.frexp(8.0)"),
    ("modf", "return x, math.modf(-3.25)"),
    ("isclose_default", "return x + math.isclose(1.0, 1.0 + 1e-10) + math.isclose(1.0, 1.1)"),
    ("isclose_abs_tol", "return x + math.isclose(0.0, 1e-9, abs_tol=1e-8)"),
    ("constants", "return x * math.pi + math.e + math.tau, math.inf > 1e308, math.isnan(math.nan)"),
    ("ceil_of_size_division", "r = math.ceil(x.shape[0] / 3)\nreturn x + r, r"),
    ("floor_of_size_division", "r = math.floor(x.shape[0] / 3)\nreturn x + r, r"),
    ("sqrt_of_size_in_reshape", "n = x.shape[0]\nm = int(math.sqrt(n))\nreturn x[: m * m].reshape(m, m)"),
    ("log_of_size_scale", "return x / math.log(x.shape[0] + 1)"),
    ("math_on_tensor_scalar_raises_or_converts", "return x + math.sqrt(torch.tensor(4.0))"),
    ("math_sqrt_of_multi_element_tensor_raises", "return math.sqrt(x)"),
    ("exp_overflow_raises", "return x + math.exp(1000)"),
    ("math_trunc_returns_int", "r = math.trunc(-3.7)\nreturn x + r, type(r).__name__"),
    ("math_floor_of_int_subclass_bool", "r = math.floor(True)\nreturn x + r, type(r).__name__"),
    ("math_nextafter", "r = math.nextafter(1.0, 2.0) - 1.0\nreturn x + r, r"),
    ("math_ulp", "return x, math.ulp(1.0)"),
    ("math_sumprod_via_fsum", "return x + math.fsum(a * b for a, b in zip([1, 2], [3, 4]))"),
]
snippets("cpython/test_math", "math", math_table, namespace=NS)
