"""Python numbers as CPython's test_int, test_float, test_bool, test_math, test_operator and
test_complex check them (recast in our own words; dynamo's cpython/3_13 port of these files
guided the choice), computed from sizes read off the input (symbolic at the third call, at a
new size) and fed back into tensor code: floor division and modulo with negative operands and
float divisors, divmod, int() truncation against math.floor, round half to even with ndigits,
pow with negative exponents and a modulus, shifts and bit operations, bool arithmetic and
bool's type after arithmetic, int/float conversions of strings and of tensors, float's
is_integer/as_integer_ratio/hex, math functions of sizes (gcd, lcm, isqrt, comb, perm, factorial,
log with bases, ceil/floor/trunc, copysign, fmod against %, prod, dist, hypot), operator module
functions (index, length_hint, concat, iadd aliasing, itemgetter over sizes), and complex
arithmetic with sizes."""

import math
import operator

import torch

from . import snippets

NS = {"torch": torch, "math": math, "operator": operator}

INTS = [
    ("floordiv_negative_size", "n = x.shape[0]\nreturn x * (-n // 3), -n // 3, n // -3, -n % 3, n % -3"),
    ("floordiv_by_float", "n = x.shape[0]\nreturn x * (n // 2.5), n // 2.5, n % 2.5, -n // 2.5"),
    ("divmod_size", "n = x.shape[0]\nq, r = divmod(n, 3)\nq2, r2 = divmod(-n, 3)\nreturn x[:q + r], (q, r, q2, r2)"),
    ("int_truncates_toward_zero", "n = x.shape[0]\nv = -n / 3\nreturn x, int(v), math.floor(v), math.ceil(v), math.trunc(v)"),
    ("round_half_even", "n = x.shape[0]\nreturn x, round(n / 2), round(n + 0.5), round(2.5), round(3.5), round(-0.5)"),
    ("round_ndigits", "n = x.shape[0]\nreturn x, round(n / 3, 2), round(n * 123, -2), round(n, 1), type(round(n, 1)).__name__"),
    ("pow_negative_exponent", "n = x.shape[0]\nr = n ** -1\nreturn x * r, r, type(r).__name__, (-n) ** 2, 2 ** n"),
    ("pow_with_modulus", "n = x.shape[0]\nreturn x, pow(n, 3, 5), pow(3, n, 7), pow(n, -1, 11)"),
    ("shifts_and_bits", "n = x.shape[0]\nreturn x, n << 3, n >> 1, -n >> 1, n & 6, n | 8, n ^ 5, ~n"),
    ("shift_negative_count", "n = x.shape[0]\ntry:\n    return x, n << -1\nexcept ValueError as e:\n    return x, str(e)"),
    ("bit_length_and_count", "n = x.shape[0]\nreturn x, n.bit_length(), (n * 37).bit_count(), (-n).bit_length()"),
    ("int_from_string_bases", "return x, int('ff', 16), int('0b101', 0), int(' -12 '), int('1_000')"),
    ("int_from_bad_string", "try:\n    int('12a')\nexcept ValueError as e:\n    return x, str(e)"),
    ("int_of_float_inf", "try:\n    int(float('inf'))\nexcept OverflowError as e:\n    return x, str(e)"),
    ("int_of_tensor_item", "v = int(x.sum() * 0 + 3.7)\nreturn x * v, v"),
    ("int_to_bytes_roundtrip", "n = x.shape[0] * 1000\nb = n.to_bytes(4, 'big')\nreturn x, b, int.from_bytes(b, 'big'), int.from_bytes(b, 'little', signed=True)"),
    ("zero_division_messages", "n = x.shape[0] - x.shape[0]\nout = []\nfor op in (lambda: 1 // n, lambda: 1 % n, lambda: 1 / n, lambda: divmod(1, n)):\n    try:\n        op()\n    except ZeroDivisionError as e:\n        out.append(str(e))\nreturn x, out"),
    ("int_comparisons_chain", "n = x.shape[0]\nreturn x, 1 < n < 10, n == n + 0.0, n != float(n), 0 < -n"),
    ("abs_neg_pos_size", "n = x.shape[0]\nreturn x, abs(-n), -(-n), +n, abs(n - 10)"),
    ("int_hash_equal_float", "n = x.shape[0]\nreturn x, hash(n) == hash(float(n)), {n: 'i'}[float(n)]"),
    ("size_in_range_and_index", "n = x.shape[0]\nr = range(0, 20, 3)\nreturn x, n in r, r.index(6), r[n % len(r)], len(range(n, 2, -1))"),
    ("size_sum_of_list", "n = x.shape[0]\nreturn x.new_zeros(sum([n, 1, n])), sum([n, 0.5])"),
]
snippets("cpython/test_int", "int3", INTS, namespace=NS)

FLOATS = [
    ("float_is_integer_ratio", "v = x.shape[0] / 2\nreturn x, v.is_integer(), v.as_integer_ratio(), (0.1).as_integer_ratio()"),
    ("float_hex_fromhex", "v = x.shape[0] / 4\nreturn x, v.hex(), float.fromhex(v.hex()) == v"),
    ("float_from_strings", "return x, float('  1.5 '), float('-inf'), float('1e3'), math.isnan(float('nan'))"),
    ("float_bad_string", "try:\n    float('1.5x')\nexcept ValueError as e:\n    return x, str(e)"),
    ("float_nan_comparisons", "nan = float('nan')\nreturn x, nan == nan, nan != nan, nan < 1, max(nan, 1.0), max(1.0, nan)"),
    ("float_negative_zero", "z = -0.0\nreturn x, z == 0.0, math.copysign(1, z), str(z), repr(0.0 * -x.shape[0])"),
    ("float_floordiv_mod_signs", "n = float(x.shape[0])\nreturn x, n // -3, n % -3, -n % 3, math.fmod(-n, 3)"),
    ("float_round_to_int_type", "v = x.shape[0] / 3\nreturn x, type(round(v)).__name__, type(round(v, 0)).__name__, round(v, 0)"),
    ("float_int_mixed_equality", "n = x.shape[0]\nreturn x, n / 1 == n, (n / 1) is n, type(n * 1.0).__name__"),
    ("float_overflow_pow", "try:\n    return x, 10.0 ** 400\nexcept OverflowError as e:\n    return x, str(e)"),
    ("float_repr_shortest", "return x, repr(0.1 + 0.2), str(1e16), str(1e-5), repr(x.shape[0] / 10)"),
    ("float_of_tensor_scalar", "v = float(x.mean())\nreturn x - v, type(v).__name__"),
    ("float_format_specs", "v = x.shape[0] / 3\nreturn x, format(v, '.3f'), format(v, 'e'), format(v, '%'), format(v, 'g'), f'{v:+08.2f}'"),
]
snippets("cpython/test_float", "float3", FLOATS, namespace=NS)

BOOLS = [
    ("bool_arithmetic_types", "b = x.shape[0] > 2\nreturn x, b + b, type(b + b).__name__, b * 3, -b, ~b, b / 2"),
    ("bool_bitwise_stays_bool", "b = x.shape[0] > 2\nc = x.shape[0] > 100\nreturn x, b & c, type(b | c).__name__, b ^ True, type(b & 1).__name__"),
    ("bool_of_containers", "return x, bool([]), bool([0]), bool(''), bool({}), bool(0.0), bool(-0.0), bool(range(0))"),
    ("bool_subclass_of_int", "b = x.shape[0] > 2\nreturn x, isinstance(b, int), True == 1, True is (1 == 1), {True: 'a', 1: 'b'}"),
    ("bool_str_and_repr", "b = x.shape[0] > 2\nreturn x, str(b), repr(not b), f'{b}', f'{b:d}', int(b)"),
    ("bool_of_user_len", "class L:\n    def __len__(self):\n        return x.shape[0] - x.shape[0]\nreturn x, bool(L()), not L()"),
    ("bool_of_tensor_in_condition", "return x * 2 if (x.sum() > 0) else x * 3"),
    ("bool_sum_of_comparisons", "return x, sum(v > 0 for v in range(-3, x.shape[0]))"),
]
snippets("cpython/test_bool", "bool3", BOOLS, namespace=NS)

MATHS = [
    ("math_integer_functions", "n = x.shape[0]\nreturn x, math.gcd(n, 6), math.lcm(n, 6), math.isqrt(n * 10), math.factorial(n), math.comb(n, 2), math.perm(n, 2)"),
    ("math_gcd_many_and_zero", "n = x.shape[0]\nreturn x, math.gcd(), math.gcd(0, n), math.gcd(n * 4, n * 6, n * 10), math.lcm(n, 0)"),
    ("math_logs", "n = x.shape[0]\nreturn x, math.log(n), math.log(n, 2), math.log2(n), math.log10(n * 10), math.log1p(n)"),
    ("math_log_domain_error", "n = x.shape[0] - x.shape[0]\ntry:\n    math.log(n)\nexcept ValueError as e:\n    return x, str(e)"),
    ("math_sqrt_negative", "try:\n    math.sqrt(-x.shape[0])\nexcept ValueError as e:\n    return x, str(e)"),
    ("math_rounding_of_size_ratio", "n = x.shape[0]\nv = n / 3\nreturn x[:math.ceil(v)], math.floor(v), math.trunc(-v), math.ceil(-v)"),
    ("math_prod_fsum", "n = x.shape[0]\nreturn x, math.prod(range(1, n)), math.prod([n, 0.5]), math.fsum([0.1] * n)"),
    ("math_hypot_dist", "n = x.shape[0]\nreturn x, math.hypot(3, n), math.dist((0, 0), (n, 3)), math.hypot()"),
    ("math_isclose_tolerances", "n = x.shape[0]\nreturn x, math.isclose(n, n + 1e-10), math.isclose(n, n + 0.1, rel_tol=0.1), math.isclose(0, 1e-10), math.isclose(0, 1e-10, abs_tol=1e-9)"),
    ("math_inf_nan_checks", "n = x.shape[0]\nreturn x, math.isinf(n * math.inf), math.isfinite(n), math.isnan(n * math.inf - math.inf)"),
    ("math_copysign_fmod_remainder", "n = x.shape[0]\nreturn x, math.copysign(n, -0.0), math.fmod(n, -3), math.remainder(n, 3)"),
    ("math_trig_of_size", "n = x.shape[0]\nreturn x * math.sin(n), math.atan2(n, -1), math.degrees(math.pi / n)"),
    ("math_exp_overflow", "try:\n    math.exp(1000 + x.shape[0])\nexcept OverflowError as e:\n    return x, str(e)"),
    ("math_frexp_ldexp_modf", "n = x.shape[0]\nm, e = math.frexp(n)\nreturn x, (m, e), math.ldexp(m, e), math.modf(n / 3)"),
    ("math_comb_errors", "try:\n    math.comb(-x.shape[0], 2)\nexcept ValueError as e:\n    return x, str(e)"),
    ("math_factorial_float_error", "try:\n    math.factorial(x.shape[0] / 2)\nexcept TypeError as e:\n    return x, 'type error'\nexcept ValueError as e:\n    return x, 'value error'"),
]
snippets("cpython/test_math", "math3", MATHS, namespace=NS)

OPERATORS = [
    ("operator_index_of_size", "n = x.shape[0]\nreturn x, operator.index(n), [0, 1, 2, 3, 4, 5, 6, 7, 8][operator.index(n)]"),
    ("operator_index_of_float_error", "try:\n    operator.index(1.5)\nexcept TypeError as e:\n    return x, str(e)"),
    ("operator_length_hint", "class H:\n    def __length_hint__(self):\n        return x.shape[0]\nreturn x, operator.length_hint([1, 2]), operator.length_hint(iter(range(5))), operator.length_hint(H()), operator.length_hint(object(), 9)"),
    ("operator_iadd_aliases_list", "a = [x]\nb = operator.iadd(a, [x + 1])\nreturn b is a, len(a)"),
    ("operator_iadd_tuple_new", "a = (x,)\nb = operator.iadd(a, (x + 1,))\nreturn b is a, len(a), len(b)"),
    ("operator_concat_and_errors", "r = operator.concat([1], [x.shape[0]])\ntry:\n    operator.concat(1, 2)\nexcept TypeError:\n    return x, r, 'error'"),
    ("operator_itemgetter_sizes", "g = operator.itemgetter(0, -1)\nreturn x, g(x.shape + (5,)), operator.itemgetter(slice(1, None))([1, 2, 3])"),
    ("operator_attrgetter_dotted", "class A:\n    pass\na = A()\na.b = A()\na.b.c = x\nreturn operator.attrgetter('b.c')(a) * 2"),
    ("operator_methodcaller_kwargs", "m = operator.methodcaller('split', ',', maxsplit=1)\nreturn x, m('a,b,c')"),
    ("operator_truth_not", "return x, operator.truth([]), operator.not_(x.shape[0]), operator.is_(None, None), operator.is_not(1, None)"),
    ("operator_contains_countof_indexof", "l = [1, x.shape[0], 1]\nreturn x, operator.contains(l, 1), operator.countOf(l, 1), operator.indexOf(l, x.shape[0])"),
    ("operator_setitem_delitem", "d = {}\noperator.setitem(d, 'a', x)\noperator.setitem(d, 'b', x + 1)\noperator.delitem(d, 'a')\nreturn d"),
    ("operator_on_tensors", "return operator.add(x, 1), operator.mul(x, x), operator.neg(x), operator.truediv(x, 2), operator.pow(x, 2)"),
    ("operator_inplace_on_tensor", "y = x.clone()\nz = operator.iadd(y, 1)\nreturn z is y, y"),
    ("operator_call", "return operator.call(lambda a, b=1: a * b, x, b=3)"),
]
snippets("cpython/test_operator", "operator3", OPERATORS, namespace=NS)

COMPLEX = [
    ("complex_from_sizes", "n = x.shape[0]\nc = complex(n, -1)\nreturn x, c * c, abs(complex(3, n)), c.conjugate(), c.real, c.imag"),
    ("complex_division_and_pow", "n = x.shape[0]\nc = complex(1, n)\nreturn x, c / 2, c ** 2, 1j ** 2"),
    ("complex_equality_and_hash", "return x, complex(x.shape[0], 0) == x.shape[0], hash(complex(2, 0)) == hash(2)"),
    ("complex_ordering_error", "try:\n    return x, 1j < 2j\nexcept TypeError:\n    return x, 'unorderable'"),
    ("complex_from_string", "return x, complex('1+2j'), complex(' 3j ')"),
]
snippets("cpython/test_complex", "complex3", COMPLEX, namespace=NS)
