"""f-strings and string formatting as CPython's test_fstring and test_format check them (recast in
our own words), over the values a traced program formats: sizes (a new size on the third call
must give a new string, not the first call's baked in), floats computed from sizes (their repr is
the float's, 0.7000000000000001 and all), dtypes, devices, shapes, tensor items, and objects with
their own __format__/__str__/__repr__; conversions (!r, !s, !a), nested and computed format
specs, `=` self-documenting expressions, `%` formatting and str.format's field lookups.
"""

import math

import torch

from .round5_support import sampled_snippets
from .upstream4_support import graph_break

SOURCE = "cpython/test_fstring"
SOURCE_FORMAT = "cpython/test_format"


class Money:
    def __init__(self, v):
        self.v = v

    def __format__(self, spec):
        return f"${self.v:{spec or '.2f'}}"

    def __str__(self):
        return f"Money({self.v})"

    def __repr__(self):
        return f"Money<{self.v!r}>"


class Weird:
    def __repr__(self):
        return "wéird"


NS = {"torch": torch, "math": math, "Money": Money, "Weird": Weird, "brk": graph_break}

FSTRINGS = [
    ("size_in_fstring", "n = x.shape[0]\nreturn x + n, f'n={n}'"),
    ("shape_in_fstring", "return x, f'{x.shape}', f'{x.shape!r}', f'{tuple(x.shape)}'"),
    ("size_width_from_size", "n = x.shape[0]\nreturn x, f'[{n:>{n}}]', f'[{n:<{n + 1}d}]', f'[{n:^{2 * n}}]'"),
    ("size_bases_and_sign", "n = x.shape[0]\nreturn x, f'{n:#x} {n:#o} {n:#b} {-n:+d} {n: d} {n:08.3f} {n:e}'"),
    ("size_float_div_repr", "n = x.shape[0]\nreturn x, f'{n / 3}', f'{n / 10}', repr(n * 0.1), str(0.1 * n * 3)"),
    ("size_float_arith_repr", "n = x.shape[0]\nreturn x, [repr(v) for v in (n * 1.1, n / 7 * 7, (n + 0.1) - n, n ** 0.5, n ** -1, 1 / n)]"),
    ("size_float_math_repr", "n = x.shape[0]\nreturn x, [repr(v) for v in (math.sqrt(n), math.log(n), math.exp(n / 10), math.sin(n), n * math.pi)]"),
    ("size_float_round_repr", "n = x.shape[0]\nreturn x, [repr(v) for v in (round(n / 3, 2), round(n * 0.15, 1), n // 0.3, n % 0.3)]"),
    ("size_float_formatted", "n = x.shape[0]\nv = n / 3\nreturn x * v, f'{v:.3f} {v:.0%} {v:g} {v:10.4e} {v:,.2f}'"),
    ("size_float_in_tensor_factory", "n = x.shape[0]\nreturn torch.full((2,), n * 0.1, dtype=torch.float64), n * 0.1 == 0.7"),
    ("size_grouping", "n = x.shape[0] * 123456\nreturn x, f'{n:,}', f'{n:_}', f'{n:_x}'"),
    ("self_documenting", "n = x.shape[0]\nreturn x, f'{n=}', f'{n * 2 = }', f'{x.shape[0]=:>5}', f'{n=!s}'"),
    ("conversions", "w = Weird()\nreturn x, f'{w!r}', f'{w!a}', f'{w!s}', f'{\"a\"!r}', f'{x.shape[0]!r}'"),
    ("custom_format_called", "m = Money(x.shape[0] / 4)\nreturn x, f'{m}', f'{m:.1f}', f'{m!s}', f'{m!r}', format(m, '08.3f')"),
    ("nested_quotes_and_braces", "n = x.shape[0]\nreturn x, f\"{'a' if n > 5 else 'b'}\", f'{{literal}} {n}', f'{ {\"k\": n}[\"k\"] }'"),
    ("conditional_format_spec", "n = x.shape[0]\nreturn x, f\"{n:{'<' if n > 5 else '>'}{n}}\""),
    ("lambda_and_call_in_fstring", "n = x.shape[0]\nreturn x, f'{(lambda v: v * 2)(n)}', f'{len(range(n))}', f'{str(n).zfill(3)}'"),
    ("dtype_device_in_fstring", "return x, f'{x.dtype}', f'{x.device}', f'{x.dtype!r}', str(x.dtype).split('.')[-1]"),
    ("item_in_fstring", "s = x.sum().item()\nreturn x, f'{s:.3f}', f'{s > 0}'"),
    ("int_item_in_fstring", "k = int((x > 0).sum())\nreturn x, f'{k}/{x.shape[0]}', k"),
    ("tensor_str_in_fstring", "return x, f'{x.round(decimals=2)}', str(x.shape[0])"),
    ("fstring_key_of_dict", "d = {}\nfor i in range(x.shape[0]):\n    d[f'layer{i}'] = x[i]\nreturn d"),
    ("fstring_selects_attribute", "names = [f'w{i}' for i in range(2)]\nclass P:\n    pass\np = P()\nfor k in names:\n    setattr(p, k, x.shape[0])\nreturn x, [getattr(p, f'w{i}') for i in range(2)]"),
    ("fstring_across_break", "n = x.shape[0]\nlabel = f'size {n}'\nbrk()\nreturn x, label + f' then {n + 1}'"),
    ("fstring_in_exception", "try:\n    raise ValueError(f'bad size {x.shape[0]}')\nexcept ValueError as e:\n    return x, str(e)"),
    ("fstring_len_used_as_size", "s = f'{x.shape[0] * 1000}'\nreturn torch.zeros(len(s)) + x.sum()"),
    ("fstring_padded_bool_none", "return x, f'{x.shape[0] > 5:>6}|{None!r:^8}|{True:d}'"),
    ("fstring_multiline", "n = x.shape[0]\ns = f'''a={n}\n{n * 2:>4}'''\nreturn x, s"),
    ("fstring_nested_fstring", "n = x.shape[0]\nreturn x, f'{f\"{n:03d}\":>6}'"),
    ("fstring_complex", "c = complex(x.shape[0], 1.5)\nreturn x, f'{c}', f'{c:.1f}', repr(c / 3)"),
]
sampled_snippets(SOURCE, "r6_fstr", FSTRINGS, namespace=NS)

PERCENT = [
    ("percent_size_and_float", "n = x.shape[0]\nreturn x, '%d %5.2f %x %o %e %r %s' % (n, n / 3, n, n, n, n / 3, n * 0.1)"),
    ("percent_dict", "n = x.shape[0]\nreturn x, '%(a)s-%(b)03d' % {'a': 'v', 'b': n}"),
    ("percent_star_width", "n = x.shape[0]\nreturn x, '[%*d]' % (n, n), '[%-*.*f]' % (n + 4, 2, n / 3)"),
    ("percent_shape_needs_tuple", "return x, '%s' % (x.shape,), '%s' % str(x.shape)"),
    ("percent_char_and_percent", "n = x.shape[0]\nreturn x, '%c%c %d%%' % (65 + n, 'z', n)"),
    ("percent_errors", "out = []\nfor args in ((1, 2), (), 'a'):\n    try:\n        out.append('%d' % args)\n    except TypeError as e:\n        out.append('TypeError')\nreturn x, out"),
    ("format_method_fields", "return x, '{0.shape[0]} {0.dtype} {1[k]} {1[k]!r:>4}'.format(x, {'k': x.shape[0]})"),
    ("format_method_auto_and_kw", "n = x.shape[0]\nreturn x, '{} {} {n:>{w}}'.format(n, n / 2, n=n, w=n)"),
    ("format_method_mixing_error", "try:\n    '{} {0}'.format(x.shape[0])\nexcept ValueError as e:\n    return x, str(e)"),
    ("format_builtin_specs", "n = x.shape[0]\nreturn x, [format(n, s) for s in ('', 'b', '>6', '+', 'n', '.2%', 'c')]"),
    ("format_map", "return x, '{a}-{b}'.format_map({'a': x.shape[0], 'b': 'z'})"),
    ("str_and_repr_of_floats", "n = x.shape[0]\nreturn x, str(n / 7), repr(n / 7), str(float(n)), str(n * 1e16), repr(n * 1e-5)"),
]
sampled_snippets(SOURCE_FORMAT, "r6_format", PERCENT, namespace=NS)
