"""Strings and numbers where the exact Python result matters, mixed with tensors and with sizes
(which become symbolic at the third call's new size): str methods, %-formatting, format specs
('>8.3f', 'x', 'b', ',', '_', '+', '#o', '%', 'e', '^'), f-strings with !r/!s/!a and nested
specs, int and float edge cases (floor division and modulo of negatives, round half to even,
int() with a base, NaN and -0.0 comparisons, math.fsum/isclose/copysign, divmod, three-argument
pow), bool arithmetic, and bytes. Modelled on CPython's test_format, test_fstring, test_str,
test_int, test_float, test_math and test_bytes, recast in our own words."""

import math

import torch

from . import snippets


class Named:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"Named({self.name!r})"

    def __str__(self):
        return self.name.upper()

    def __format__(self, spec):
        return f"<{self.name}:{spec}>"


NS = {"torch": torch, "math": math, "Named": Named}

STRINGS = [
    ("str_methods_from_size", "s = f'{x.shape[0]}-layer_Block'\nreturn x, s.lower(), s.title(), s.swapcase(), s.casefold(), s.split('-', 1), s.rsplit('_', 1)"),
    ("str_strip_variants_and_removeprefix", "s = '  __w.0.bias__  '\nt = s.strip()\nreturn x, t.strip('_'), t.lstrip('_w'), t.removeprefix('__').removesuffix('__'), s.rstrip()"),
    ("str_find_count_replace_limits", "s = 'a.b.a.b.a'\nreturn x + s.count('a'), s.find('b', 2), s.rfind('a', 0, 4), s.replace('a', 'A', 2), s.index('.b', 3)"),
    ("str_justify_center_zfill", "n = x.shape[0]\nreturn x, str(n).rjust(5, '*'), str(n).ljust(4) + '|', str(-n).zfill(5), 'ab'.center(7, '-'), '+7'.zfill(4)"),
    ("str_predicates", "return x, '12'.isdigit(), '1.5'.isnumeric(), 'abc'.isidentifier(), '3abc'.isidentifier(), ''.isalpha(), ' \\t'.isspace(), 'Ab Cd'.istitle()"),
    ("str_join_of_sizes_and_split_back", "parts = [str(d) for d in (x.shape[0], 3, 1)]\ns = 'x'.join(parts)\nback = [int(p) for p in s.split('x')]\nreturn x.view(back[0], -1) * back[1], s"),
    ("str_partition_and_splitlines", "s = 'k=v=w\\nline2\\r\\nline3'\nreturn x, s.partition('='), s.rpartition('='), s.splitlines(), s.splitlines(True)[1]"),
    ("str_slicing_negative_steps", "s = 'abcdefg'\nn = x.shape[0]\nreturn x, s[::-2], s[n:1:-1], s[-n:], s[:n - 10]"),
    ("str_compare_and_sort_by_key", "words = ['beta', 'Alpha', 'gamma', 'alpha']\nreturn x, sorted(words), sorted(words, key=str.lower), max(words, key=len), 'a' < 'B', 'abc' < 'abd'"),
    ("str_translate_and_maketrans", "table = str.maketrans('ab', 'xy', 'c')\nreturn x, 'aabbcc'.translate(table), ord('x'), chr(x.shape[0] + 64)"),
    ("str_multiplication_by_size_and_bool", "n = x.shape[0]\nreturn x, '-' * n, 'ab' * True, 'ab' * False, '=' * (n - 10)"),
    ("str_encode_and_bytes_methods", "b = 'héllo'.encode()\nreturn x + len(b), b, b.decode('utf-8'), b.hex(), bytes([65, 66]) + b'C', b[1], b[1:3]"),
    ("bytes_from_size_and_int_roundtrip", "n = x.shape[0]\nb = (n * 300).to_bytes(4, 'big')\nreturn x, b, int.from_bytes(b, 'big'), int.from_bytes(b, 'little'), bytearray(b'ab') + b'c'"),
    ("str_of_bool_none_float", "return x, str(True) + str(None), repr(1.0), str(1e16), str(0.1 + 0.2), repr(-0.0), str(1e-5)"),
]
snippets("cpython/test_str", "sem_strnum_str", STRINGS, namespace=NS)

FORMATS = [
    ("format_spec_width_precision_of_size", "n = x.shape[0]\nreturn x, f'{n:>8.3f}|', f'{n / 3:<9.2e}|', f'{n:^7}|', f'{-n:+05d}'"),
    ("format_spec_bases_of_size", "n = x.shape[0] * 37\nreturn x, f'{n:x}', f'{n:#X}', f'{n:b}', f'{n:#o}', f'{n:08b}'"),
    ("format_spec_grouping", "n = x.shape[0] * 1234567\nreturn x, f'{n:,}', f'{n:_}', f'{n / 7:,.2f}', format(n, '_x')"),
    ("format_spec_percent_and_general", "r = x.shape[0] / 8\nreturn x, f'{r:.1%}', f'{r:g}', f'{1e-7 * r:g}', f'{r * 1e6:.3g}', f'{r:10.4}'"),
    ("fstring_conversions", "name = 'w\\'s'\nn = Named('k')\nreturn x, f'{name!r}', f'{name!s}', f'{\"é\"!a}', f'{n!r} {n!s} {n}', f'{n:spec}'"),
    ("fstring_nested_spec_from_sizes", "w = x.shape[0] + 4\np = 2\nv = x.shape[0] / 3\nreturn x, f'{v:{w}.{p}f}|', f'{\"ab\":{\"*\"}^{w}}'"),
    ("fstring_self_documenting", "n = x.shape[0]\nreturn x, f'{n=}', f'{n * 2 = }', f'{n=:>4}'"),
    ("percent_format_mixed", "n = x.shape[0]\nreturn x, '%d|%5.2f|%-4s|%x|%r' % (n, n / 3, 'ab', n * 16, 'q'), '%(a)s-%(b)03d' % {'a': 'k', 'b': n}, '%%%d' % n"),
    ("percent_format_single_tuple_arg", "return x, '%s' % ((1, 2),), '%s' % [x.shape[0]], '%c%c' % (72, 'i')"),
    ("str_format_method_indexing", "d = {'k': x.shape[0]}\nreturn x, '{0}{1}{0}'.format('a', 'b'), '{d[k]:>3}'.format(d=d), '{0.real}'.format(x.shape[0]), '{:{}}'.format(7, 4)"),
    ("format_of_tensor_scalar_item", "v = x.sum()\ns = f'{v.item():.3f}'\nreturn x + float(s), len(s) > 0"),
    ("format_bool_and_none", "return x, f'{True:d}', f'{False!r}', format(True, '>5'), f'{None}', '{:5}'.format(True)"),
]
snippets("cpython/test_format", "sem_strnum_fmt", FORMATS, namespace=NS)

NUMBERS = [
    ("floordiv_mod_of_negative_sizes", "n = x.shape[0]\nreturn x, -n // 3, -n % 3, n // -3, n % -3, -n // -3, divmod(-n, 3), divmod(n, -3)"),
    ("float_floordiv_mod_signs", "n = x.shape[0] + 0.5\nreturn x, -n // 2, -n % 2, n % -2.0, math.fmod(-n, 2), divmod(-n, 2.0)"),
    ("round_half_even_of_size_halves", "n = x.shape[0]\nreturn x, round(n + 0.5), round(n - 0.5), round(2.5), round(-0.5), round(0.125, 2), round(n * 10, -1), round(15, -1)"),
    ("round_returns_int_or_float", "n = x.shape[0]\nreturn x, type(round(n / 2)).__name__, type(round(n / 2, 0)).__name__, round(n / 2, 0)"),
    ("int_parsing_with_bases", "return x, int('0x10', 16), int('10', 0) if False else int('0o17', 0), int('z', 36), int('-101', 2), int(' 42 '), int('1_000')"),
    ("int_truncates_toward_zero", "n = x.shape[0]\nreturn x, int(-n / 3), int(n / 3), math.trunc(-2.7), math.floor(-2.5), math.ceil(-2.5), int(True)"),
    ("nan_comparisons_and_membership", "nan = float('nan')\nl = [nan]\nreturn x, nan == nan, nan != nan, nan in l, nan < 1, math.isnan(nan), max(1.0, nan), max(nan, 1.0)"),
    ("negative_zero_behaviour", "z = -0.0\nreturn x * z, z == 0.0, math.copysign(1, z), str(z), 1 / float('inf') * -1, abs(z), (z).hex()"),
    ("fsum_isclose_and_sum", "vals = [0.1] * 10\nreturn x, sum(vals), math.fsum(vals), math.isclose(sum(vals), 1.0), math.isclose(1e-10, 0.0), math.isclose(1e-10, 0.0, abs_tol=1e-9)"),
    ("pow_with_modulo_and_negative", "n = x.shape[0]\nreturn x, pow(n, 3, 5), pow(3, -1, 7), pow(-2, 3), (-8) ** (1 / 3) if False else (-2) ** 2, 2 ** -1, pow(n, 0)"),
    ("divmod_floats_and_zero_raises", "try:\n    divmod(x.shape[0], 0)\nexcept ZeroDivisionError as e:\n    msg = str(e)\nreturn x, divmod(7.5, 2), divmod(-7.5, 2), msg"),
    ("bool_arithmetic_results", "t, f = True, False\nreturn x * (t + t), t + f, t * 3.5, -t, ~t if False else t - 2, t / 2, t // 1, type(t + t).__name__, t & f, t | f, t ^ t"),
    ("int_float_equality_and_hash", "n = x.shape[0]\nreturn x, n == float(n), hash(n) == hash(float(n)), {n: 'i', float(n): 'f'}, 0.1 + 0.2 == 0.3, 2 ** 53 + 1 == float(2 ** 53 + 1)"),
    ("int_bit_ops_on_sizes", "n = x.shape[0]\nreturn x, n << 3, n >> 1, n & 6, n | 8, n ^ 5, ~n, -n >> 1, n.bit_length(), n.bit_count()"),
    ("float_repr_roundtrip_and_integer_ratio", "v = x.shape[0] / 10\nreturn x, repr(v), float(repr(v)) == v, v.as_integer_ratio(), (0.5).is_integer(), float(x.shape[0]).is_integer()"),
    ("float_inf_arithmetic", "inf = float('inf')\nreturn x, inf - inf != inf - inf, inf * 0 != inf * 0, -inf < -1e308, math.isinf(inf / 2), 1e308 * 10, int(1e18) == 10 ** 18"),
    ("math_functions_on_sizes", "n = x.shape[0]\nreturn x, math.gcd(n, 6), math.lcm(n, 6), math.comb(n, 2), math.perm(n, 2), math.factorial(n), math.isqrt(n * 10), math.log2(n * 8), math.hypot(3, n)"),
    ("comparison_of_mixed_numbers", "n = x.shape[0]\nreturn x, n < 4.5, n == 4.0, 1 < n <= 7.0, max(n, 4.0), min(4.0, n), sorted([n, 4.0, 4, True])"),
    ("complex_arithmetic_with_size", "n = x.shape[0]\nz = complex(n, -1)\nreturn x * abs(z), z * 1j, z.conjugate(), (z ** 2).real, z == complex(n, -1)"),
    ("tensor_scalar_mix_of_python_numbers", "n = x.shape[0]\nreturn x * (n // 3) + (n % 3) - (-n // 2), x / round(n / 2), x ** (n % 2), x // -2, x % -1.5"),
    ("int_division_results_feed_tensor_ops", "n = x.shape[0]\nk = -n // 2\nreturn torch.full((abs(k),), float(n % -3)), x.roll(k), x[k:]"),
]
snippets("cpython/test_float", "sem_strnum_num", NUMBERS, namespace=NS)
