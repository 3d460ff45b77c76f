"""Slices, function attributes, the numeric tower, set comprehensions, UserString and the
generator/exception base protocols as CPython's test_slice, test_funcattrs, test_numeric_tower,
test_int_literal, test_setcomps, test_userstring, test_generator_stop and test_baseexception
check them (recast in our own words; dynamo's cpython/3_13 port of these files guided the
choice), around tensors and sizes that become symbolic at the third call: slice objects built
from sizes and used on tensors and lists, slice.indices clamping, slices with __index__ objects,
__setitem__ receiving a slice; __defaults__/__kwdefaults__ changed between calls, function
__dict__ attributes, __name__/__qualname__/__module__, closures' cells; hash equality across
int/float/complex/Fraction/Decimal, mixed comparisons, int literal bases; set comprehensions'
scopes and orders; UserString methods returning their own type; StopIteration inside a
generator turned into RuntimeError, and BaseException args/str/repr/with_traceback/add_note."""

import collections
import decimal
import fractions
import functools
import math
import operator

import torch

from .round5_support import sampled_snippets
from .upstream4_support import graph_break


class Idx:
    """An object with __index__ (accepted as a slice bound and by slice.indices)."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


class Recorder:
    """Records the keys its __setitem__/__getitem__ receive (a slice object for a[i:j])."""

    def __init__(self):
        self.seen = []

    def __getitem__(self, key):
        self.seen.append(("get", key))
        return key

    def __setitem__(self, key, value):
        self.seen.append(("set", key, value))


def with_defaults(t, k=2, *, scale=1.0):
    return t * k * scale


def plain(t):
    return t + 1


NS = {
    "torch": torch,
    "collections": collections,
    "decimal": decimal,
    "fractions": fractions,
    "functools": functools,
    "math": math,
    "operator": operator,
    "Idx": Idx,
    "Recorder": Recorder,
    "with_defaults": with_defaults,
    "plain": plain,
    "brk": graph_break,
}

SLICES = [
    ("slice_members", "s = slice(x.shape[0])\nt = slice(1, x.shape[0], 2)\nreturn x[s], x[t], (s.start, s.stop, s.step), (t.start, t.stop, t.step)"),
    ("slice_indices_positive", "n = x.shape[0]\nreturn x, slice(None).indices(n), slice(1, None, 2).indices(n), slice(None, None, -1).indices(n)"),
    ("slice_indices_clamps", "n = x.shape[0]\nreturn x, slice(-100, 100).indices(n), slice(100, -100, -1).indices(n), slice(None, -n - 1, -1).indices(n)"),
    ("slice_indices_negative_bounds", "n = x.shape[0]\nreturn x, slice(None, -1).indices(n), slice(-2, None).indices(n), slice(3, None, -2).indices(n)"),
    ("slice_indices_range_agrees", "n = x.shape[0]\ns = slice(1, -1, 2)\nreturn x, list(range(*s.indices(n))), list(range(n)[s])"),
    ("slice_indices_errors", "out = []\nfor s, n in ((slice(0, 10, 0), 5), (slice(None), -1), (slice(0.0, 10), 5)):\n    try:\n        out.append(s.indices(n))\n    except (ValueError, TypeError) as e:\n        out.append(type(e).__name__)\nreturn x, out"),
    ("slice_indices_index_objects", "n = x.shape[0]\nreturn x, slice(Idx(1), Idx(n), Idx(2)).indices(Idx(n)), x[Idx(1):Idx(n - 1)]"),
    ("slice_equality", "n = x.shape[0]\ns1 = slice(1, n, 2)\ns2 = slice(1, n, 2)\nreturn x, s1 == s2, s1 != slice(1, n, 3), s1 == (1, n, 2), s1 == None"),
    ("slice_repr", "return x, repr(slice(1, x.shape[0], None)), str(slice(None))"),
    ("slice_unhashable", "try:\n    hash(slice(1, 2))\n    r = 'hashable'\nexcept TypeError:\n    r = 'unhashable'\nreturn x, r"),
    ("slice_on_tensor_from_size", "n = x.shape[0]\nhalf = slice(n // 2, None)\nfront = slice(None, n // 2)\nreturn x[half] - x[front][: x[half].shape[0]]"),
    ("slice_negative_step_list", "n = x.shape[0]\nl = list(range(n))\nreturn x, l[::-1], l[-2::-2], l[slice(None, None, -3)]"),
    ("slice_flip_tensor_via_list", "idx = list(range(x.shape[0]))[::-1]\nreturn x[idx]"),
    ("slice_object_reused_on_two_tensors", "s = slice(1, None, 2)\ny = x * 2\nreturn x[s] + y[s]"),
    ("slice_setitem_receives_slice", "r = Recorder()\nn = x.shape[0]\nr[1:n] = x\nv = r[::2]\nreturn x, len(r.seen), r.seen[0][1], v"),
    ("slice_assign_tensor_region", "y = x.clone()\ny[slice(1, x.shape[0] - 1)] = 0\nreturn y"),
    ("slice_with_tensor_bound", "k = torch.tensor(2)\nreturn x[k:], x[:k]"),
    ("slice_stop_beyond_size", "return x[: x.shape[0] + 10], x[x.shape[0]:], x[-100:2]"),
    ("slice_empty_and_step", "n = x.shape[0]\nreturn x[n:n], x[::n], x[1::n - 1]"),
    ("slice_copy_is_same", "import copy\ns = slice(1, x.shape[0])\nreturn x, copy.copy(s) is s, copy.deepcopy(s) == s"),
    ("slice_constructor_errors", "out = []\nfor args in ((), (1, 2, 3, 4)):\n    try:\n        slice(*args)\n    except TypeError:\n        out.append('TypeError')\nreturn x, out"),
    ("slice_of_mutable_members", "s = slice([1], [2])\ns.start.append(x.shape[0])\nreturn x, s.start, s.stop"),
    ("slice_multi_dim_tuple", "m = x.reshape(1, -1).expand(3, -1)\nreturn m[(slice(None), slice(1, None))], m[1:, ::2]"),
    ("slice_across_break", "s = slice(1, x.shape[0] - 1)\nbrk()\nreturn x[s], s.indices(x.shape[0])"),
]
sampled_snippets("cpython/test_slice", "slice5", SLICES, namespace=NS)

FUNCATTRS = [
    ("defaults_read", "return with_defaults(x), with_defaults.__defaults__, with_defaults.__kwdefaults__"),
    ("defaults_of_local_function", "def g(t, a=x.shape[0], b='s'):\n    return t * a\nreturn g(x), g.__defaults__[1], len(g.__defaults__)"),
    ("defaults_replaced_inside", "def g(t, a=1):\n    return t * a\nr1 = g(x)\ng.__defaults__ = (3,)\nr2 = g(x)\nreturn r1, r2"),
    ("kwdefaults_replaced_inside", "def g(t, *, a=1):\n    return t + a\nr1 = g(x)\ng.__kwdefaults__ = {'a': 10}\nreturn r1, g(x)"),
    ("defaults_removed", "def g(t, a=1):\n    return t * a\ng.__defaults__ = None\ntry:\n    return g(x)\nexcept TypeError:\n    return x, 'missing'"),
    ("function_dict_attribute", "def g(t):\n    return t * g.factor\ng.factor = x.shape[0]\nreturn g(x), g.__dict__"),
    ("function_attribute_counter", "def g(t):\n    g.calls = getattr(g, 'calls', 0) + 1\n    return t + g.calls\nreturn g(x), g(x), g.calls"),
    ("function_names", "def outer():\n    def inner(t):\n        return t\n    return inner\ni = outer()\nreturn i(x), i.__name__, i.__qualname__, plain.__name__, plain.__module__.split('.')[-1]"),
    ("function_name_set", "def g(t):\n    return t\ng.__name__ = 'renamed'\ng.__qualname__ = 'Q.renamed'\nreturn g(x), g.__name__, g.__qualname__"),
    ("function_doc", "def g(t):\n    'doc here'\n    return t\nreturn g(x), g.__doc__, plain.__doc__"),
    ("closure_cells", "k = x.shape[0]\ndef g(t):\n    return t * k\nreturn g(x), len(g.__closure__), g.__closure__[0].cell_contents, g.__code__.co_freevars"),
    ("closure_cell_write", "k = 1\ndef g(t):\n    return t * k\ng.__closure__[0].cell_contents = x.shape[0]\nreturn g(x), k"),
    ("code_attributes", "def g(a, b, *c, d, **e):\n    z = 1\n    return a\nco = g.__code__\nreturn x, co.co_argcount, co.co_kwonlyargcount, co.co_varnames[:4], co.co_name"),
    ("method_attributes", "class C:\n    def m(self, t):\n        return t * 2\nc = C()\nbm = c.m\nreturn bm(x), bm.__self__ is c, bm.__func__ is C.m, bm.__name__"),
    ("method_function_attribute_via_bound", "class C:\n    def m(self, t):\n        return t * C.m.k\nC.m.k = x.shape[0]\nreturn C().m(x), C().m.k"),
    ("lambda_name", "f = lambda t: t * 2\nreturn f(x), f.__name__, (lambda: 0).__qualname__.split('.')[-1]"),
    ("partial_attributes", "p = functools.partial(with_defaults, k=3)\nreturn p(x), p.func is with_defaults, p.args, p.keywords"),
    ("wraps_copies_attributes", "def deco(fn):\n    @functools.wraps(fn)\n    def w(*a, **k):\n        return fn(*a, **k) * 2\n    return w\ng = deco(plain)\nreturn g(x), g.__name__, g.__wrapped__ is plain"),
    ("builtin_function_attributes", "return x, len.__name__, torch.add.__name__, abs.__self__ is not None"),
    ("function_equality_and_hash", "def g(t):\n    return t\nd = {g: 1, plain: 2}\nreturn x, d[g], g == g, g != plain"),
    ("annotations", "def g(t: torch.Tensor, k: int = 2) -> torch.Tensor:\n    return t * k\nreturn g(x), sorted(g.__annotations__), g.__annotations__['k'] is int"),
    ("defaults_mutable_shared", "def g(t, acc=[]):\n    acc.append(t.shape[0])\n    return len(acc)\nreturn x, g(x), g(x), g.__defaults__[0]"),
]
sampled_snippets("cpython/test_funcattrs", "funcattrs5", FUNCATTRS, namespace=NS)

NUMBERS = [
    ("hash_int_float_equal", "n = x.shape[0]\nreturn x, hash(n) == hash(float(n)), hash(n) == hash(complex(n, 0)), hash(-1) == hash(-1.0)"),
    ("hash_fraction_decimal", "n = x.shape[0]\nreturn x, hash(fractions.Fraction(n, 1)) == hash(n), hash(decimal.Decimal(n)) == hash(n), hash(fractions.Fraction(1, 2)) == hash(0.5)"),
    ("dict_key_collapse", "n = x.shape[0]\nd = {n: 'int'}\nd[float(n)] = 'float'\nd[complex(n, 0)] = 'complex'\nreturn x, d, list(d.keys())[0] is n or type(list(d.keys())[0]).__name__"),
    ("mixed_comparisons", "n = x.shape[0]\nreturn x, n == n + 0.0, n < n + 0.5, fractions.Fraction(n * 2, 2) == n, 0.1 + 0.2 == 0.3, n == complex(n, 0)"),
    ("fraction_arithmetic", "n = x.shape[0]\nf = fractions.Fraction(n, 3)\nreturn x * float(f), f + 1, f * 3 == n, f.numerator, f.denominator"),
    ("fraction_with_float", "f = fractions.Fraction(1, 4)\nreturn x * (f + 0.25), type(f + 0.25).__name__, type(f + 1).__name__"),
    ("decimal_arithmetic", "d = decimal.Decimal('1.5') * x.shape[0]\nreturn x * float(d), str(d)"),
    ("int_float_conversion", "n = x.shape[0]\nreturn x, int(n / 2), n // 2, float(n) / 2, round(n / 2), round(2.5), round(3.5)"),
    ("int_literal_bases", "return x * 0b101, 0o17, 0xff, 1_000, int('0x1f', 16), int('z', 36), int('0b11', 0)"),
    ("int_of_strings", "n = x.shape[0]\nreturn x, int(str(n) * 2), int(' 42 '), int('-0'), int('1_0')"),
    ("int_invalid_literal", "try:\n    int('4.5')\nexcept ValueError as e:\n    return x, str(e)"),
    ("float_special", "inf = float('inf')\nnan = float('nan')\nreturn x.clamp(max=inf), math.isinf(-inf), nan != nan, math.isnan(inf - inf), inf > x.shape[0]"),
    ("divmod_mixed_signs", "n = x.shape[0]\nreturn x, divmod(n, 3), divmod(-n, 3), divmod(n, -3), divmod(n + 0.5, 2), -n % 3, -n // 3"),
    ("power_forms", "n = x.shape[0]\nreturn x ** 2, n ** 2, n ** -1, (-n) ** 0.5 if False else 2 ** n, pow(n, 2, 5), pow(2, -1)"),
    ("complex_parts", "z = complex(x.shape[0], 2)\nreturn x * z.real, z.imag, abs(z), z.conjugate(), z * 1j"),
    ("bool_arithmetic", "b = x.shape[0] > 5\nreturn x * b, b + b, True + 1, -True, ~True if False else True * 3, sum([True, True, False])"),
    ("numbers_abc_checks", "import numbers\nn = x.shape[0]\nreturn x, isinstance(n, numbers.Integral), isinstance(1.5, numbers.Real), isinstance(1j, numbers.Complex), isinstance(fractions.Fraction(1, 2), numbers.Rational), isinstance(True, numbers.Integral)"),
    ("int_methods", "n = x.shape[0]\nreturn x, n.bit_length(), (n * 1000).bit_count(), n.to_bytes(2, 'big'), int.from_bytes(b'\\x01\\x00', 'little'), (n).as_integer_ratio()"),
    ("float_methods", "v = x.shape[0] / 4\nreturn x * v, v.is_integer(), v.as_integer_ratio(), (0.5).hex(), float.fromhex('0x1.8p1')"),
    ("math_functions_on_sizes", "n = x.shape[0]\nreturn x, math.gcd(n, 12), math.lcm(n, 6), math.isqrt(n * n + 1), math.comb(n, 2), math.perm(n, 2), math.factorial(n)"),
    ("math_float_functions", "n = x.shape[0]\nreturn x * math.sqrt(n), math.floor(n / 3), math.ceil(n / 3), math.trunc(-n / 3), math.copysign(n, -0.0), math.fsum([0.1] * n)"),
    ("operator_index_on_size", "n = x.shape[0]\nreturn x, operator.index(n), [1, 2, 3, 4, 5, 6, 7, 8][operator.index(n) - 1], operator.index(Idx(n))"),
    ("tensor_python_number_mix", "n = x.shape[0]\nreturn x + fractions.Fraction(1, 2) if False else x + 0.5 * n, x * True, x / n, x // 2, x % n"),
]
sampled_snippets("cpython/test_numeric_tower", "numbers5", NUMBERS, namespace=NS)

SETCOMPS = [
    ("setcomp_basic", "return x, sorted({i * i for i in range(x.shape[0])})"),
    ("setcomp_dedup", "return x, sorted({i % 3 for i in range(x.shape[0] * 2)})"),
    ("setcomp_nested_loops", "n = x.shape[0]\nreturn x, sorted({(i, j) for i in range(n) for j in range(i) if (i + j) % 2})"),
    ("setcomp_loop_var_not_leaked", "i = 'outer'\ns = {i for i in range(x.shape[0])}\nreturn x, i, len(s)"),
    ("setcomp_closure_over_loop", "fs = {(lambda: i) for i in range(3)}\nreturn x, sorted(f() for f in fs)"),
    ("setcomp_of_tensor_sizes", "parts = x.split(2)\nreturn x, sorted({p.shape[0] for p in parts})"),
    ("setcomp_with_walrus", "s = {(y := i * 2) for i in range(x.shape[0])}\nreturn x, sorted(s), y"),
    ("setcomp_over_string", "return x, sorted({c.upper() for c in 'hello world' if c != ' '})"),
    ("setcomp_membership_then_tensor", "keep = {i for i in range(x.shape[0]) if i % 2 == 0}\nreturn x[[i for i in range(x.shape[0]) if i in keep]]"),
    ("setcomp_class_scope", "class C:\n    vals = {v * 2 for v in range(3)}\nreturn x, sorted(C.vals)"),
    ("dictcomp_and_setcomp_together", "n = x.shape[0]\nd = {i: {j for j in range(i)} for i in range(n)}\nreturn x, {k: sorted(v) for k, v in d.items()}"),
    ("genexp_to_frozenset", "return x, sorted(frozenset(i % 4 for i in range(x.shape[0] * 3)))"),
    ("setcomp_exception_inside", "try:\n    {1 // (i - 2) for i in range(x.shape[0])}\nexcept ZeroDivisionError:\n    return x, 'zde'"),
    ("set_ops_after_comp", "a = {i for i in range(x.shape[0])}\nb = {i for i in range(2, 9)}\nreturn x, sorted(a & b), sorted(a ^ b), a <= set(range(10)), sorted(a - b)"),
]
sampled_snippets("cpython/test_setcomps", "setcomps5", SETCOMPS, namespace=NS)

USERSTRINGS = [
    ("userstring_methods_type", "u = collections.UserString('Hello')\nr = u.upper()\nreturn x, type(r).__name__, str(r), type(u + 'x').__name__, type(u[1:]).__name__"),
    ("userstring_compare_and_contains", "u = collections.UserString('abc')\nreturn x, u == 'abc', u < 'abd', 'b' in u, collections.UserString('b') in u, len(u)"),
    ("userstring_format_size", "u = collections.UserString('n={}')\nreturn x, str(u.format(x.shape[0])), str(u * 2)"),
    ("userstring_subclass", "class Tag(collections.UserString):\n    def shout(self):\n        return self.upper() + '!'\nt = Tag('dim%d' % x.shape[0])\nreturn x, str(t.shout()), type(t.shout()).__name__"),
    ("str_methods_on_sizes", "s = f'{x.shape[0]:03d}|{x.shape[0]:>5}|{x.shape[0]:x}'\nreturn x, s, s.split('|'), s.zfill(20), s.partition('|')"),
    ("str_join_split_roundtrip", "parts = [str(i) for i in range(x.shape[0])]\ns = ','.join(parts)\nreturn x, s, s.split(',', 2), s.rsplit(',', 1), s.count(','), s.find('3'), s.rfind('0')"),
    ("str_translate_and_maketrans", "t = str.maketrans('abc', 'xyz', 'd')\nreturn x, 'abcd' .translate(t), 'aabbcc'.replace('b', 'B', 1)"),
    ("str_predicates", "s = str(x.shape[0])\nreturn x, s.isdigit(), s.isalpha(), 'ab1'.isalnum(), ' '.isspace(), 'Ab'.istitle(), 'abc'.startswith(('x', 'a'))"),
    ("str_encode_decode", "s = 'héllo' * x.shape[0]\nb = s.encode('utf-8')\nreturn x, len(b), b.decode('utf-8') == s, s.encode('ascii', 'replace')[:3]"),
    ("str_expandtabs_center", "s = 'a\\tb'\nreturn x, s.expandtabs(4), 'x'.center(x.shape[0], '*'), 'x'.ljust(3, '-'), 'x'.rjust(3)"),
    ("str_percent_format", "n = x.shape[0]\nreturn x, '%d-%s-%r-%.2f-%5.1f' % (n, n, 'a', n / 3, n), '%(a)s' % {'a': n}"),
    ("str_as_dict_key_and_tensor_name", "names = {f'w{i}': x * i for i in range(3)}\nreturn names['w2'], sorted(names)"),
]
sampled_snippets("cpython/test_userstring", "strings5", USERSTRINGS, namespace=NS)

GENERATORS = [
    ("stopiteration_in_generator_is_runtimeerror", "def gen():\n    yield x\n    raise StopIteration\ntry:\n    out = list(gen())\nexcept RuntimeError as e:\n    return x * 2, type(e.__cause__).__name__, str(e)\nreturn out"),
    ("next_in_generator_exhausted", "def gen(it):\n    while True:\n        yield next(it) * 2\ntry:\n    return list(gen(iter([x, x + 1])))\nexcept RuntimeError as e:\n    return x, 'RuntimeError'"),
    ("return_value_in_stopiteration", "def gen():\n    yield x\n    return x.shape[0]\ng = gen()\nfirst = next(g)\ntry:\n    next(g)\nexcept StopIteration as e:\n    return first, e.value, e.args"),
    ("stopiteration_outside_generator_passes", "def f(it):\n    return next(it)\ntry:\n    f(iter([]))\nexcept StopIteration as e:\n    return x, type(e).__name__, e.value"),
    ("generator_close_runs_finally", "log = []\ndef gen():\n    try:\n        yield x\n        yield x + 1\n    finally:\n        log.append('closed')\ng = gen()\nv = next(g)\ng.close()\nreturn v, log"),
    ("generator_throw_caught", "def gen():\n    try:\n        yield x\n    except KeyError:\n        yield x * 10\ng = gen()\na = next(g)\nb = g.throw(KeyError('k'))\nreturn a, b"),
    ("generator_yield_from_return", "def inner():\n    yield x\n    return x.shape[0]\ndef outer():\n    r = yield from inner()\n    yield r\nreturn list(outer())"),
    ("generator_send_accumulate", "def acc():\n    total = 0\n    while True:\n        v = yield total\n        total = total + v\ng = acc()\nnext(g)\nfor i in range(x.shape[0]):\n    t = g.send(i)\nreturn x * t, t"),
    ("generator_expression_stop", "g = (v * 2 for v in x.unbind(0))\nfirst = next(g)\nrest = list(g)\nreturn first, len(rest), list(g)"),
    ("generator_state_attributes", "import inspect\ndef gen():\n    yield x\ng = gen()\ns0 = inspect.getgeneratorstate(g)\nnext(g)\ns1 = inspect.getgeneratorstate(g)\nlist(g)\nreturn x, s0, s1, inspect.getgeneratorstate(g)"),
]
sampled_snippets("cpython/test_generator_stop", "genstop5", GENERATORS, namespace=NS)

EXCEPTIONS = [
    ("args_str_repr", "n = x.shape[0]\ne = ValueError('bad', n)\nreturn x, e.args, str(e), repr(e), str(ValueError()), str(ValueError('one'))"),
    ("exception_hierarchy", "return x, issubclass(KeyError, LookupError), issubclass(StopIteration, Exception), issubclass(KeyboardInterrupt, Exception), issubclass(GeneratorExit, BaseException), ArithmeticError in ZeroDivisionError.__mro__"),
    ("keyerror_str_quotes", "try:\n    {}['k']\nexcept KeyError as e:\n    return x, str(e), repr(e), e.args"),
    ("add_note", "try:\n    e = ValueError('v')\n    e.add_note('size %d' % x.shape[0])\n    raise e\nexcept ValueError as err:\n    return x, err.__notes__"),
    ("with_traceback_returns_self", "e = RuntimeError('r')\nreturn x, e.with_traceback(None) is e, e.__traceback__ is None"),
    ("custom_exception_attrs", "class Err(Exception):\n    def __init__(self, code, t):\n        super().__init__(code)\n        self.code = code\n        self.t = t\ntry:\n    raise Err(x.shape[0], x * 2)\nexcept Err as e:\n    return e.t, e.code, e.args"),
    ("exception_args_assigned", "e = Exception(1)\ne.args = ('a', x.shape[0])\nreturn x, e.args, str(e)"),
    ("base_exception_not_caught_by_exception", "class Stop(BaseException):\n    pass\ntry:\n    try:\n        raise Stop()\n    except Exception:\n        return x, 'wrong'\nexcept BaseException as e:\n    return x * 3, type(e).__name__"),
    ("exception_context_and_cause", "try:\n    try:\n        raise KeyError('a')\n    except KeyError as k:\n        raise ValueError('b') from k\nexcept ValueError as e:\n    return x, type(e.__cause__).__name__, e.__suppress_context__, type(e.__context__).__name__"),
    ("exception_group_split", "eg = ExceptionGroup('g', [ValueError(1), TypeError(2), ValueError(3)])\nmatch_, rest = eg.split(ValueError)\nreturn x, len(match_.exceptions), len(rest.exceptions), str(eg)"),
    ("oserror_errno", "e = OSError(2, 'missing', 'file.txt')\nreturn x, e.errno, e.strerror, e.filename, type(e).__name__"),
    ("exception_equality_identity", "a = ValueError(1)\nb = ValueError(1)\nreturn x, a == b, a is a, a.args == b.args"),
]
sampled_snippets("cpython/test_baseexception", "baseexc5", EXCEPTIONS, namespace=NS)
