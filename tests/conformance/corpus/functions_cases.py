"""Cases modelled on PyTorch's test/dynamo/test_functions.py: everyday Python in small functions
over tensors (closures and nonlocal cells, default and keyword arguments, *args/**kwargs,
functools.partial/wraps/lru_cache/reduce, isinstance, tensor methods with Python scalars,
f-strings and str methods, namedtuples, sorted/min/max with keys, unpacking, slicing, dicts
built many ways, torch.Size arithmetic, dtype and device queries), recast in our own words."""

import collections
import functools
import math
import operator
from typing import NamedTuple

import torch

from . import snippets, two_vecs

MODULE_FLAG = True
MODULE_COUNTER = [0]


def clip01(t):
    return torch.clamp(t, 0, 1)


def sub_default(a, b=1.5):
    return a - b


class Pair(NamedTuple):
    first: torch.Tensor
    second: torch.Tensor

    def total(self):
        return self.first + self.second

    @staticmethod
    def arity():
        return 2

    @classmethod
    def label(cls):
        return cls.__name__


Point = collections.namedtuple("Point", ["x", "y", "z"], defaults=(1.0,))


def counted(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        MODULE_COUNTER[0] += 1
        return fn(*args, **kwargs)

    return wrapper


@counted
def wrapped_double(t):
    """Doubles t."""
    return t * 2


@functools.lru_cache(maxsize=None)
def cached_table(n):
    return tuple(i * i for i in range(n))


NS = {
    "torch": torch, "functools": functools, "collections": collections, "operator": operator, "math": math,
    "clip01": clip01, "sub_default": sub_default, "Pair": Pair, "Point": Point, "wrapped_double": wrapped_double,
    "cached_table": cached_table, "MODULE_COUNTER": MODULE_COUNTER,
}
NS["MODULE_FLAG"] = MODULE_FLAG

FUNCTIONS = [
    # closures, nonlocal cells, inner functions
    ("nonlocal_two_cells_updated_twice", "y = x + 1.0\nz = x * 0\ndef inner(k):\n    nonlocal y, z\n    z = y + k\n    y = z * 2\ninner(2.0)\ninner(3.0)\nreturn y, z"),
    ("closure_returned_and_called", "def make(k):\n    def scale(t):\n        return t * k\n    return scale\nreturn make(2)(x) + make(3)(x)"),
    ("closure_captures_loop_variable_late", "fs = [lambda t: t * i for i in range(3)]\nreturn [f(x) for f in fs]"),
    ("closure_captures_loop_variable_default", "fs = [lambda t, i=i: t * i for i in range(3)]\nreturn [f(x) for f in fs]"),
    ("closure_cell_mutated_after_definition", "k = 1\ndef g(t):\n    return t + k\nk = 5\nreturn g(x)"),
    ("nested_closure_three_levels", "a = 2\ndef outer():\n    b = 3\n    def inner(t):\n        return t * a + b\n    return inner\nreturn outer()(x)"),
    ("nonlocal_counter_across_graph_break", "n = 0\ndef bump():\n    nonlocal n\n    n += 1\nbump()\nprint('break')\nbump()\nreturn x * n, n"),
    ("closure_over_tensor_mutated_in_place", "acc = torch.zeros_like(x)\ndef add(t):\n    acc.add_(t)\nadd(x)\nadd(x * 2)\nreturn acc"),
    # defaults, keywords, *args/**kwargs
    ("default_argument_global_function", "return sub_default(x) + sub_default(x, 2)"),
    ("keyword_swap_arguments", "def g(a, b):\n    return a - 2 * b\nreturn g(b=x, a=x + 1)"),
    ("mutable_default_argument_persists", "def g(t, acc=[]):\n    acc.append(1)\n    return t + len(acc)\nreturn g(x) + g(x)"),
    ("star_args_forwarded_with_kwargs", "def g(*args, **kwargs):\n    return sum(args) * kwargs.get('scale', 1) + len(kwargs)\nargs = (x, x + 1)\nkw = {'scale': 3, 'extra': None}\nreturn g(*args, **kw)"),
    ("kwargs_merge_overrides", "def g(**kw):\n    return kw\nd = g(**{'a': 1, 'b': 2}, c=3)\nreturn x * d['a'] + d['c'], sorted(d)"),
    ("positional_only_and_keyword_only", "def g(a, /, b, *, c=2):\n    return a * b + c\nreturn g(x, 3, c=4) + g(x, b=1)"),
    ("method_indirect_with_star_args", "m = x.sub\nargs = (1.5,)\nkw = {'alpha': 2}\nreturn m(*args, **kw)"),
    ("torch_cat_from_kwargs_dict", "kw = {'tensors': (x, x * 2), 'dim': 0}\nreturn torch.cat(**kw)"),
    # functools
    ("partial_global_function", "p = functools.partial(sub_default, b=0.25)\nreturn p(x) + p(x, b=1.0)"),
    ("partial_of_partial", "p = functools.partial(torch.add, alpha=2)\nq = functools.partial(p, x)\nreturn q(x + 1)"),
    ("partial_attributes_read", "p = functools.partial(sub_default, x, b=3)\nreturn p(), len(p.args), sorted(p.keywords)"),
    ("wraps_preserves_name_and_counts", "before = MODULE_COUNTER[0]\ny = wrapped_double(x)\nreturn y, wrapped_double.__name__, wrapped_double.__doc__, MODULE_COUNTER[0] - before"),
    ("lru_cache_on_int", "t = cached_table(5)\nreturn x + t[3] + len(t)"),
    ("reduce_with_operator_mul", "return functools.reduce(operator.mul, [x, x + 1, 2.0])"),
    ("reduce_with_lambda_initial", "return functools.reduce(lambda acc, t: acc + t.sum(), [x, x * 2], 0.5)"),
    ("clip_through_global_helper", "return clip01(x + 0.5)"),
    # isinstance and type queries
    ("isinstance_tensor_and_containers", "r = []\nfor v in (x, [x], (x,), {'a': x}, 1, 1.0, None):\n    r.append((isinstance(v, torch.Tensor), isinstance(v, (list, tuple)), isinstance(v, dict)))\nreturn x, r"),
    ("isinstance_parameter_is_tensor", "p = torch.nn.Parameter(x.detach())\nreturn x + isinstance(p, torch.Tensor), isinstance(p, torch.nn.Parameter), type(p).__name__"),
    ("is_floating_point_and_complex", "i = x.long()\nreturn x + torch.is_floating_point(x), torch.is_floating_point(i), x.is_complex(), torch.is_tensor(i)"),
    ("dtype_compare_branch", "if x.dtype == torch.float16:\n    return x + 10\nif x.dtype == torch.get_default_dtype():\n    return x - 1\nreturn x"),
    ("promote_types_query", "d = torch.promote_types(torch.int32, x.dtype)\nreturn x.to(d) + 1, d"),
    ("finfo_iinfo_values", "return x.clamp(min=torch.finfo(x.dtype).min) + torch.iinfo(torch.int8).max, torch.finfo(x.dtype).eps"),
    ("element_size_and_ndim", "return x + x.element_size() + x.ndim + x.dim(), x.ndimension()"),
    # tensor methods with Python scalars
    ("add_alpha_and_addcdiv_value", "y = x.clone()\ny.add_(x, alpha=0.5)\nreturn torch.addcdiv(y, x, x.abs() + 1, value=2.0)"),
    ("scalar_on_left_of_ops", "return 2 - x, 3 / (x.abs() + 1), 2 ** x, 1.5 // (x.abs() + 1)"),
    ("tensor_len_and_dunder_len", "return x + len(x) + x.__len__()"),
    ("min_max_builtin_on_0d_tensors", "a = x.sum()\nb = x.mean()\nreturn min(max(a, 0), 1) + max(b, a) - min(a, b)"),
    ("sum_builtin_with_start_tensor", "return sum([x, x * 2, x * 3], x)"),
    ("sum_of_map_lambda", "return sum(map(lambda t: t + 1, [x, x * 2]))"),
    # strings
    ("fstring_format_spec_constant", "v = 1.229\ns = f'{v:.2f} bar'\nreturn (x + 1 if s.startswith('1.23') else x - 1), s"),
    ("fstring_of_shape", "s = f'{x.shape[0]} items of {x.dtype}'\nreturn x + len(s), s"),
    ("fstring_of_class_name", "s = f'{x.__class__.__name__}!'\nreturn (x + 1 if s.startswith('Tensor') else x), s"),
    ("percent_and_format_methods", "s = '%d-%s' % (x.shape[0], 'a') + '{}/{:>3}'.format(1, 'b')\nreturn x * len(s), s"),
    ("str_join_split_upper", "parts = 'a,b,c'.split(',')\ns = '-'.join(p.upper() for p in parts)\nreturn x + len(parts), s"),
    # namedtuples
    ("namedtuple_defaults_and_fields", "p = Point(x, x * 2)\nreturn p.x + p.y * p.z, p._fields, p._replace(z=3.0).z"),
    ("namedtuple_user_methods", "p = Pair(x, x + 1)\nreturn p.total(), p.arity(), p.label(), p[1]"),
    ("namedtuple_asdict_and_unpack", "p = Point(x, 2.0, 3.0)\na, b, c = p\nreturn a * b + c, list(p._asdict())"),
    ("namedtuple_made_inside", "T = collections.namedtuple('T', 'a b')\nt = T(x, 2)\nu = T(t.a * t.b, t[1] + 1)\nreturn tuple(u), type(u).__name__"),
    ("namedtuple_is_tuple_check", "p = Pair(x, x)\nok = isinstance(p, tuple) and hasattr(p, '_fields')\nreturn x + ok"),
    # sorting, unpacking, slicing
    ("sorted_with_key_and_reverse", "rows = [('john', 'A', 8), ('jane', 'B', 5), ('dave', 'B', 10)]\nreturn x + 1, sorted(rows), sorted(rows, key=lambda r: r[2], reverse=True)"),
    ("sorted_tensors_by_sum", "ts = [x * 3, x - 1, x + 1]\nreturn sorted(ts, key=lambda t: t.sum().item())"),
    ("star_unpack_middle", "a, *mid, d = (x, x + 1, x + 2, x + 3)\nreturn a - d / mid[0], len(mid)"),
    ("tuple_concat_with_empty_and_none", "out = (x, x + 1)\nout = (None,) + out + ()\nreturn out[1] + out[2], len(out)"),
    ("tuple_iadd", "out = (x,)\nout += (x + 1, x * 2)\nreturn out"),
    ("list_slices_of_tensors", "l = [x + i for i in range(5)]\nreturn l[::-2], l[1:-1], l[-2:]"),
    ("tensor_slices_negative_step_free", "return x[1:], x[:-1], x[::2], x[-2:]"),
    ("unsqueeze_then_slice", "return torch.unsqueeze(x, 0)[:, 1:]"),
    ("list_pop_extend_clear", "l = [x, x + 1]\nl.extend([x * 2, x * 3])\nl.pop(0)\nl.pop()\nv1, v2 = l\nl.clear()\nreturn v1 - v2, len(l)"),
    ("del_locals_then_use", "c = x + 1\nd = c + 2\ndel c\nreturn d"),
    # dicts
    ("dict_from_kwargs_and_pairs", "a = dict(p=x + 1, q=2)\nb = dict([('r', x), ('s', 3)])\nc = dict(zip('uv', [x * 2, 4]))\nreturn a['p'] * a['q'] + b['r'] * c['v'] + c['u']"),
    ("dict_fromkeys_variants", "d1 = dict.fromkeys(['a', 'b'], 2)\nd2 = collections.OrderedDict.fromkeys('cd', x)\nreturn d2['c'] * d1['a'] + d2['d'], list(d2)"),
    ("dict_setdefault_and_pop_default", "d = {'a': 1}\nd.setdefault('a', 10)\nd.setdefault('b', 20)\nv = d.pop('zz', 5)\nreturn x * d['a'] + d['b'] + v, d"),
    ("dict_keys_view_is_live", "d = {3: x}\nkeys = d.keys()\nd[4] = x + 1\nreturn x + len(keys), 4 in keys, 5 in keys"),
    ("defaultdict_of_list", "d = collections.defaultdict(list)\nfor i, t in enumerate([x, x + 1, x + 2]):\n    d[i % 2].append(t)\nreturn sum(d[0]) - sum(d[1]), sorted(d)"),
    # torch.Size arithmetic
    ("size_tuple_concat_view", "shape = x.shape[:-1] + (1, -1)\nreturn x.view(*shape)"),
    ("size_numel_and_prod", "s = x.shape\nreturn x + s.numel() + math.prod(s), type(s).__name__"),
    ("size_compared_with_tuple", "return x + (x.shape == (x.shape[0],)) + (x.size() != (1,)), tuple(x.shape)"),
    ("size_as_dict_key", "cache = {}\nif x.shape not in cache:\n    cache[x.shape] = x * 2\nreturn x + cache[x.shape]"),
    ("size_sum_of_equal_to_minus_one", "k = sum(s == -1 for s in x.size())\nreturn x + k"),
    # module flags, globals
    ("global_bool_branch", "return x + 1 if MODULE_FLAG else x - 1"),
    ("callable_checks_inside", "return x + callable(torch.abs) + callable(lambda: 0) + callable(1)"),
    ("range_of_size_to_tensor", "return x + torch.tensor(range(x.size(0)))"),
]
snippets("dynamo/test_functions", "functions", FUNCTIONS, namespace=NS)

TWO = [
    ("min_max_mixed_scalar_tensor", "a = x.sum()\nb = y.sum()\nreturn max(a, b) - min(a, b) + x"),
    ("map_two_iterables", "return list(map(lambda a, b: a * b, [x, y], [2, 3]))"),
    ("zip_enumerate_filter", "pairs = [(i, a + b) for i, (a, b) in enumerate(zip([x, y], [y, x])) if i != 1]\nreturn pairs"),
    ("is_not_none_guard", "if x is not None and y is not None:\n    return x + y\nreturn x"),
    ("inner_function_shadowing_args", "def g(x):\n    return torch.add(x, y)\nreturn g(x * 2)"),
]
snippets("dynamo/test_functions", "functions2", TWO, namespace=NS, params="x, y", make_args=two_vecs)
