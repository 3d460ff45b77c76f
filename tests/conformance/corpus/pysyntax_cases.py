"""Cases modelled on CPython's test_patma/test_grammar/test_scope/test_string/test_slice/
test_heapq/test_bisect and PyTorch's test/dynamo/test_functions.py and test_misc.py: match
statements, the walrus, late-binding closures in comprehensions, nonlocal/global rebinding seen
after an inner call, mutable default arguments, recursion, try/finally overriding return and
break, for-else/while-else, key= and default= of sorted/min/max, zip(strict=), enumerate(start=),
reversed() of user sequences, containers changed while iterated, heapq and bisect, string
formatting with sizes, slice objects and negative steps, torch.Size arithmetic, and tensors'
__bool__/__index__/__len__ in Python control flow, recast in our own words."""

import bisect
import dataclasses
import heapq
import math
import operator

import torch

from . import snippets


@dataclasses.dataclass
class Pt:
    x: int
    y: int


class Countdown:
    """A sequence by the old protocol (__len__/__getitem__), reversed() through __reversed__."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return self.n - i

    def __reversed__(self):
        return iter(range(1, self.n + 1))


class OldSeq:
    """__len__ and __getitem__ only: reversed() indexes from the end."""

    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class Index:
    """A user class usable as an index (`__index__`), formatted its own way (`__format__`)."""

    def __init__(self, i):
        self.i = i

    def __index__(self):
        return self.i

    def __format__(self, spec):
        return f"<{self.i}:{spec}>"

    def __repr__(self):
        return f"Index({self.i})"


class Countup:
    """An iterator class (`__iter__` returning self, `__next__`)."""

    def __init__(self, n):
        self.i, self.n = 0, n

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return self.i


class Suppress:
    """A context manager whose __exit__ swallows ValueError and records what it saw."""

    def __init__(self):
        self.seen = []

    def __enter__(self):
        self.seen.append("enter")
        return self

    def __exit__(self, kind, value, tb):
        self.seen.append(kind.__name__ if kind else "none")
        return kind is not None and issubclass(kind, ValueError)


class BadBool:
    def __bool__(self):
        return 1


class BadLen:
    def __len__(self):
        return -1


class IterOnly:
    """Membership through __iter__ (no __contains__)."""

    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)


class MyError(Exception):
    def __init__(self, code, detail="none"):
        super().__init__(f"code {code}")
        self.code = code
        self.detail = detail


NAMESPACE_G = {"value": 0}
REBOUND = 1


NS = {
    "torch": torch, "math": math, "heapq": heapq, "bisect": bisect, "operator": operator,
    "Pt": Pt, "Countdown": Countdown, "OldSeq": OldSeq, "NAMESPACE_G": NAMESPACE_G, "Index": Index,
    "Countup": Countup, "Suppress": Suppress, "BadBool": BadBool, "BadLen": BadLen, "IterOnly": IterOnly,
    "MyError": MyError,
}

SYNTAX = [
    # match statements
    ("match_literal_on_size", "match x.shape[0]:\n    case 4:\n        return x + 1\n    case 7:\n        return x * 2\n    case _:\n        return x"),
    ("match_sequence_pattern_on_shape", "m = x.reshape(2, -1) if x.shape[0] % 2 == 0 else x.reshape(1, -1)\nmatch m.shape:\n    case (1, n):\n        return m * n\n    case (a, b) if b > 2:\n        return m + a + b\n    case _:\n        return m"),
    ("match_mapping_pattern", "cfg = {'op': 'scale', 'k': x.shape[0], 'extra': 1}\nmatch cfg:\n    case {'op': 'shift', 'k': k}:\n        return x + k\n    case {'op': 'scale', 'k': k, **rest}:\n        return x * k, rest\n    case _:\n        return x"),
    ("match_class_pattern_dataclass", "p = Pt(x.shape[0], 2)\nmatch p:\n    case Pt(x=0):\n        return x\n    case Pt(x=n, y=2) if n > 5:\n        return x * n\n    case Pt(n, m):\n        return x + n + m"),
    ("match_or_and_as_patterns", "out = []\nfor v in (1, 'a', [x, x], (3, 4), None):\n    match v:\n        case 1 | 2 as small:\n            out.append(small * 10)\n        case str() as s:\n            out.append(s + '!')\n        case [torch.Tensor() as t, *_]:\n            out.append(t.sum())\n        case (a, b):\n            out.append(a * b)\n        case None:\n            out.append(-1)\nreturn out"),
    ("match_tensor_isinstance_class_pattern", "match x:\n    case torch.Tensor() if x.dim() == 1:\n        return x + 1\n    case _:\n        return x"),
    # walrus
    ("walrus_in_if_and_comprehension", "if (n := x.shape[0]) > 3:\n    y = x * n\nelse:\n    y = x\nsq = [s for i in range(n) if (s := i * i) % 2 == 0]\nreturn y, sq, s"),
    ("walrus_in_while", "i = 0\nacc = x\nwhile (i := i + 1) < 4:\n    acc = acc + i\nreturn acc, i"),
    # closures and scopes
    ("comprehension_lambdas_late_binding", "fs = [lambda t: t * i for i in range(3)]\nreturn [f(x) for f in fs]"),
    ("comprehension_lambdas_default_binding", "fs = [lambda t, i=i: t * i for i in range(3)]\nreturn [f(x) for f in fs]"),
    ("closure_cell_rebound_after_creation", "k = 1\ndef g(t):\n    return t * k\nk = 3\nr = g(x)\nk = 5\nreturn r, g(x)"),
    ("nonlocal_rebound_seen_after_call", "count = 0\ndef bump(t):\n    nonlocal count\n    count += t.shape[0]\n    return t + count\na = bump(x)\nb = bump(a)\nreturn a, b, count"),
    ("nested_nonlocal_two_levels", "total = x\ndef outer():\n    def inner():\n        nonlocal total\n        total = total * 2\n    inner()\n    inner()\nouter()\nreturn total"),
    ("global_rebound_in_inner_function", "def setg(v):\n    global REBOUND_T\n    REBOUND_T = v\nsetg(x.shape[0])\nr = x + REBOUND_T\nsetg(1)\nreturn r, REBOUND_T"),
    ("class_scope_does_not_leak_into_comprehension", "k = 2\nclass C:\n    k = 10\n    vals = [k * i for i in range(3)]\nreturn x + sum(C.vals), C.vals"),
    ("mutable_default_argument_accumulates", "def acc(t, into=[]):\n    into.append(t)\n    return len(into)\nreturn x + acc(x) + acc(x), acc.__defaults__[0][0]"),
    ("mutable_default_dict_memo", "def fib(n, memo={}):\n    if n < 2:\n        return n\n    if n not in memo:\n        memo[n] = fib(n - 1) + fib(n - 2)\n    return memo[n]\nreturn x * fib(x.shape[0] + 5), len(fib.__defaults__[0])"),
    ("recursion_on_nested_lists", "def total(v):\n    if isinstance(v, torch.Tensor):\n        return v\n    return sum((total(u) for u in v), torch.zeros_like(x))\nreturn total([x, [x * 2, [x * 3]], []])"),
    ("recursion_depth_from_size", "def down(t, n):\n    return t if n == 0 else down(t + n, n - 1)\nreturn down(x, x.shape[0])"),
    ("recursion_limit_raises", "def forever(t):\n    return forever(t + 1)\nreturn forever(x)"),
    # try/finally and loops with else
    ("finally_overrides_return", "def g(t):\n    try:\n        return t + 1\n    finally:\n        return t * 2\nreturn g(x)"),
    ("finally_runs_on_break", "log = []\nfor i in range(5):\n    try:\n        if i == 2:\n            break\n        x = x + i\n    finally:\n        log.append(i)\nreturn x, log"),
    ("finally_runs_on_continue", "log = []\nfor i in range(4):\n    try:\n        if i % 2:\n            continue\n        x = x * 2\n    finally:\n        log.append(i)\nreturn x, log"),
    ("finally_mutation_after_return_value", "log = [x]\ndef g():\n    try:\n        return log[-1]\n    finally:\n        log.append(log[-1] + 1)\nr = g()\nreturn r, log"),
    ("finally_swallows_exception_with_return", "def g(t):\n    try:\n        raise ValueError('x')\n    finally:\n        return t + 3\nreturn g(x)"),
    ("for_else_no_break", "for i in range(x.shape[0]):\n    if i > 10:\n        break\nelse:\n    return x + 100\nreturn x"),
    ("for_else_with_break", "for i in range(x.shape[0]):\n    if i == 2:\n        break\nelse:\n    return x + 100\nreturn x + i"),
    ("while_else", "i = 0\nwhile i < x.shape[0]:\n    i += 3\nelse:\n    x = x - i\nreturn x, i"),
    ("nested_loop_break_only_inner", "hits = []\nfor i in range(3):\n    for j in range(3):\n        if j > i:\n            break\n        hits.append((i, j))\n    else:\n        hits.append('full')\nreturn x + len(hits), hits"),
    # builtins with keys and options
    ("sorted_key_reverse_stable", "ts = [x, x * 2, -x, x + 0]\nby = sorted(range(4), key=lambda i: ts[i].shape[0] + (i % 2), reverse=True)\nreturn by, sorted(['bb', 'a', 'ccc', 'dd'], key=len)"),
    ("min_max_key_and_default", "ts = [x, x * 3, x - 1]\nbig = max(ts, key=lambda t: t.abs().sum())\nreturn big, min([], default=x), max([3, 1, 2], key=lambda v: -v), min('abc', 'ab', key=len)"),
    ("max_of_empty_raises", "return x + max([])"),
    ("zip_strict_ok", "return [a * b for a, b in zip([x, x + 1], [2, 3], strict=True)]"),
    ("zip_strict_mismatch_raises", "return [a * b for a, b in zip([x, x + 1], [2, 3, 4], strict=True)]"),
    ("enumerate_start_and_reversed_range", "return [t * i for i, t in enumerate([x, x + 1], start=5)], list(reversed(range(1, x.shape[0], 2)))"),
    ("reversed_user_sequence", "return x + sum(reversed(Countdown(3))), list(reversed(Countdown(3))), list(Countdown(4))"),
    ("reversed_old_protocol_sequence", "s = OldSeq([x, x * 2, x * 3])\nreturn [t for t in reversed(s)], [t + 1 for t in s]"),
    ("reversed_dict_and_list", "d = {'a': x, 'b': x * 2}\nreturn list(reversed(d)), [t for t in reversed([x, x + 1])]"),
    # containers changed while iterated
    ("dict_changed_size_while_iterated_raises", "d = {'a': x, 'b': x}\nfor k in d:\n    d[k + '!'] = x\nreturn d"),
    ("dict_values_changed_while_iterated_raises", "d = {'a': x, 'b': x}\nfor v in d.values():\n    d.pop('b')\nreturn d"),
    ("set_changed_size_while_iterated_raises", "s = {1, 2}\nfor v in s:\n    s.add(v + 10)\nreturn x + len(s)"),
    ("dict_value_replaced_while_iterated_ok", "d = {'a': x, 'b': x}\nfor k in d:\n    d[k] = d[k] + 1\nreturn d"),
    ("list_appended_while_iterated_bounded", "xs = [1, 2]\nfor v in xs:\n    if v < 5:\n        xs.append(v + 2)\nreturn x + len(xs), xs"),
    ("list_removed_while_iterated_skips", "xs = [1, 2, 3, 4]\nfor v in xs:\n    xs.remove(v)\nreturn x + len(xs), xs"),
    # heapq and bisect
    ("heapq_push_pop_tuples", "h = []\nfor i, t in enumerate([x, x * 2, x - 1]):\n    heapq.heappush(h, (float(3 - i), i))\nfirst = heapq.heappop(h)\nreturn x * first[0], h, heapq.nsmallest(1, [5, 1, 3])"),
    ("heapq_heapify_and_nlargest_key", "h = [5, 1, x.shape[0], 3]\nheapq.heapify(h)\nreturn x + h[0], h, heapq.nlargest(2, ['aa', 'b', 'ccc'], key=len)"),
    ("bisect_insort_and_search", "xs = [1, 3, 5, 7]\nbisect.insort(xs, x.shape[0])\ni = bisect.bisect_left(xs, 5)\nj = bisect.bisect_right(xs, 5)\nreturn x * i + j, xs"),
    ("bisect_key", "xs = [(1, 'a'), (4, 'b'), (9, 'c')]\nreturn x + bisect.bisect(xs, x.shape[0], key=lambda p: p[0])"),
    # strings with sizes
    ("fstring_format_specs_of_size", "n = x.shape[0]\nreturn x + n, f'{n:03d}|{n / 3:.2f}|{n!r}|{n:>4}|{n:x}|{n:,}'"),
    ("percent_and_format_of_size", "n = x.shape[0]\nreturn x, '%d-%s-%5.1f' % (n, 'a', n / 2), '{}:{:b}'.format(n, n), '{k}'.format(k=n)"),
    ("string_of_shape_and_dtype", "return x, str(x.shape), f'{x.shape}', repr(x.dtype), str(x.device)"),
    ("string_methods_on_derived_names", "name = f'layer_{x.shape[0]}'\nparts = name.split('_')\nreturn x * int(parts[1]), name.upper(), '-'.join(parts), name.startswith('layer'), name.replace('layer', 'L').zfill(8)"),
    ("string_as_dict_key_built_from_size", "d = {f'k{i}': x * i for i in range(3)}\nkey = 'k' + str(x.shape[0] % 3)\nreturn d[key], sorted(d)"),
    ("int_of_string_from_size", "s = str(x.shape[0] * 11)\nreturn x + int(s[::-1]), s[::-1], len(s)"),
    # slices
    ("slice_object_on_list_and_tensor", "s = slice(1, None, 2)\nts = [x, x + 1, x + 2, x + 3]\nreturn ts[s], x[s], s.indices(x.shape[0])"),
    ("negative_step_list_slicing", "ts = list(range(x.shape[0]))\nreturn x + ts[::-2][0], ts[::-1], ts[-2:0:-1], ts[5:1:-2]"),
    ("tensor_negative_step_raises", "return x[::-1]"),
    ("tensor_negative_start_stop", "n = x.shape[0]\nreturn x[-3:], x[:-1], x[-n:1 - n], x[-100:2]"),
    ("slice_assignment_and_deletion_on_list", "ts = [x, x + 1, x + 2, x + 3]\nts[1:3] = [x * 10]\ndel ts[::2]\nreturn ts, len(ts)"),
    ("extended_slice_assignment_length_mismatch_raises", "ts = [x, x, x, x]\nts[::2] = [x]\nreturn ts"),
    ("tensor_slice_with_size_derived_bounds", "n = x.shape[0]\nh = n // 2\nreturn x[h:], x[:h], x[h - 1::h]"),
    ("slice_object_from_size_indices", "n = x.shape[0]\ns = slice(-2, None)\nstart, stop, step = s.indices(n)\nreturn x[start:stop:step] + 1, (start, stop, step)"),
    # torch.Size
    ("size_concat_and_slice_types", "s = x.shape + (2,)\nt = x.reshape(2, -1).shape[1:]\nreturn torch.zeros(s) + 1, type(s).__name__, type(t).__name__, t, s"),
    ("size_repeat_and_compare", "s = x.shape * 2\nreturn x + len(s), s, s == (x.shape[0], x.shape[0]), x.shape == [x.shape[0]], type(s).__name__"),
    ("size_numel_and_index", "m = x.reshape(1, -1, 1)\ns = m.shape\nreturn x * s.numel(), s.index(1), s.count(1), s[-2], list(s)"),
    ("size_hash_as_dict_key", "d = {x.shape: 'v'}\nreturn x + len(d), d.get(torch.Size([x.shape[0]]), 'miss'), d.get((x.shape[0],), 'miss')"),
    ("size_unpack_star", "m = x.reshape(1, -1)\nfirst, *rest = m.shape\nreturn m * first + rest[0], rest"),
    # tensor dunders in Python control flow
    ("tensor_len_and_range", "acc = torch.zeros(())\nfor i in range(len(x)):\n    acc = acc + x[i] * i\nreturn acc, len(x)"),
    ("zero_dim_int_tensor_index", "i = torch.tensor(1)\nitems = ['a', 'b', 'c']\nreturn x * operator.index(i), items[i], [10, 20, 30][i]"),
    ("tensor_bool_of_shape_predicate", "if torch.tensor(x.shape[0] > 3):\n    return x + 1\nreturn x"),
    ("tensor_bool_multi_element_raises", "if x:\n    return x\nreturn x + 1"),
    ("tensor_iteration_unbinds", "return [t * 2 for t in x.reshape(2, -1)], list(x)[0]"),
    ("tensor_in_list_membership_raises_or_compares", "return x in [x]"),
    ("math_on_item_values", "v = x.abs().max().item()\nreturn x / v, math.floor(v * 10), math.isclose(v, v + 1e-12), round(v, 2) > -1"),
    ("int_item_in_range_loop", "n = int(x.abs().sum().item() > 0) + 2\nacc = x\nfor _ in range(n):\n    acc = acc * 2\nreturn acc, n"),
]
snippets("cpython/test_grammar", "pysyntax", SYNTAX, namespace=NS)

PROTOCOLS = [
    ("user_index_in_list_and_range", "i = Index(2)\nreturn x * [1, 2, 3][i] + len(range(i)), operator.index(i), [10, 20, 30, 40][i:]"),
    ("user_index_slicing_tensor", "return x[Index(1):], x[:Index(2)]"),
    ("user_format_and_repr_in_fstring", "i = Index(x.shape[0])\nreturn x, f'{i:>3}|{i!r}|{i}', format(i, 'z')"),
    ("iterator_class_in_for_and_sum", "total = x * 0\nfor k in Countup(3):\n    total = total + x * k\nreturn total, sum(Countup(x.shape[0])), list(Countup(2))"),
    ("iterator_class_exhausted", "it = Countup(2)\na = list(it)\nb = list(it)\nreturn x + len(a) + len(b), next(it, 'done')"),
    ("exit_suppresses_value_error", "s = Suppress()\nwith s:\n    x = x + 1\n    raise ValueError('boom')\nreturn x, s.seen"),
    ("exit_does_not_suppress_key_error", "s = Suppress()\nwith s:\n    raise KeyError('k')\nreturn x"),
    ("bool_returning_int_raises", "if BadBool():\n    return x\nreturn x + 1"),
    ("len_negative_raises", "return x + len(BadLen())"),
    ("membership_through_iter", "it = IterOnly([1, 2, x.shape[0]])\nreturn x + (4 in it) + (9 in it), 7 in it"),
    ("custom_exception_attributes", "try:\n    raise MyError(x.shape[0], detail='d')\nexcept MyError as e:\n    return x + e.code, str(e), e.detail, e.args"),
    ("exception_chaining_cause", "try:\n    try:\n        raise KeyError('inner')\n    except KeyError as e:\n        raise ValueError('outer') from e\nexcept ValueError as e:\n    return x, type(e.__cause__).__name__, e.__suppress_context__"),
    ("exception_context_implicit", "try:\n    try:\n        raise KeyError('inner')\n    except KeyError:\n        raise ValueError('outer')\nexcept ValueError as e:\n    return x, type(e.__context__).__name__, e.__cause__ is None"),
    ("try_except_else_finally_order", "log = []\nfor v in (0, 1):\n    try:\n        log.append('try')\n        if v:\n            raise ValueError\n    except ValueError:\n        log.append('except')\n    else:\n        log.append('else')\n    finally:\n        log.append('finally')\nreturn x + len(log), log"),
    ("exception_in_finally_replaces", "try:\n    try:\n        raise KeyError('a')\n    finally:\n        raise ValueError('b')\nexcept Exception as e:\n    return x, type(e).__name__, type(e.__context__).__name__"),
]
snippets("cpython/test_class", "protocols", PROTOCOLS, namespace=NS)

SEMANTICS = [
    ("and_or_return_operands", "n = x.shape[0]\nreturn x, (n and 'a'), (0 or n), ([] or [n]), (n > 2 and n), (None or 'z')"),
    ("chained_comparison_evaluates_once", "calls = []\ndef mid():\n    calls.append(1)\n    return x.shape[0]\nok = 1 < mid() < 100\nreturn x + ok, len(calls)"),
    ("augmented_assign_subscript_and_attribute", "d = {'k': 1, 'ts': [x]}\nd['k'] += x.shape[0]\nd['ts'][0] += 1\nreturn d['k'], d['ts'][0]"),
    ("star_unpacking_forms", "a, *mid, z = range(x.shape[0])\n(p, q), r = (1, 2), 3\nreturn x + a + z + len(mid), mid, p + q + r"),
    ("unpacking_too_many_raises", "a, b = range(x.shape[0])\nreturn x + a"),
    ("unpacking_too_few_raises", "a, b, c, d, e, f, g, h = range(x.shape[0])\nreturn x + a"),
    ("duplicate_keyword_raises", "def g(**kw):\n    return len(kw)\nkw = {'a': 1}\nreturn x + g(a=2, **kw)"),
    ("keyword_only_and_positional_only", "def g(a, /, b, *, c=3):\n    return a + b * c\nreturn g(x, 2), g(x, b=1, c=x.shape[0])"),
    ("positional_only_by_keyword_raises", "def g(a, /):\n    return a\nreturn g(a=x)"),
    ("missing_argument_raises", "def g(a, b):\n    return a + b\nreturn g(x)"),
    ("unbound_local_raises", "def g(t):\n    if t.shape[0] > 100:\n        y = t\n    return y\nreturn g(x)"),
    ("deleted_local_raises", "y = x + 1\ndel y\nreturn y"),
    ("int_methods_on_size", "n = x.shape[0]\nreturn x, n.bit_length(), divmod(-n, 3), round(n * 10 + 5, -1), pow(n, 2, 5), int(str(n) * 2), (-n) // 3, (-n) % 3"),
    ("float_specials", "n = x.shape[0] / 2\nnan = float('nan')\nreturn x * n, nan != nan, math.inf > n, -0.0 == 0.0, str(-0.0), math.copysign(1.0, -0.0), float('-inf') < -n"),
    ("dict_merge_order_and_equality", "a = {'p': 1, 'q': x.shape[0]}\nb = {'q': 9, 'r': 2}\nm = {**a, **b}\nc = a | b\na |= {'s': 3}\nreturn x + len(m), list(m), m == c, list(a), {'p': 1, 'q': 2} == {'q': 2, 'p': 1}"),
    ("dict_setdefault_fromkeys_popitem", "d = dict.fromkeys(['a', 'b'], 0)\nv = d.setdefault('c', x.shape[0])\nw = d.setdefault('a', 5)\nlast = d.popitem()\nreturn x + v + w, d, last"),
    ("list_index_with_start_and_sort_stability", "xs = [3, 1, 3, 2, 3]\nfirst = xs.index(3, 1)\npairs = [(1, 'b'), (0, 'a'), (1, 'a')]\npairs.sort(key=lambda p: p[0], reverse=True)\nreturn x + first, pairs"),
    ("list_reverse_slice_assignment", "xs = list(range(6))\nxs[::-1] = [10, 11, 12, 13, 14, 15]\nxs[-1] = x.shape[0]\ndel xs[-2]\nreturn x + xs[-1], xs"),
    ("list_extend_generator_and_iadd_tuple", "xs = [x]\nxs.extend(t * 2 for t in list(xs))\nxs += (x + 1,)\nreturn xs, len(xs)"),
    ("tuple_lexicographic_mixed_lengths", "n = x.shape[0]\nreturn x, (1, n) < (1, n, 0), (2,) > (1, 99), (n, 'a') <= (n, 'b'), [1, 2] < [1, 3]"),
    ("isinstance_nested_tuple_of_types", "v = [x]\nreturn x, isinstance(v, (int, (list, tuple))), isinstance(x.shape[0], (float, (str, (int,)))), isinstance(x, ())"),
    ("generator_return_value_via_yield_from", "def inner():\n    yield 1\n    return x.shape[0]\ndef outer(out):\n    r = yield from inner()\n    out.append(r)\n    yield r\nout = []\nvals = list(outer(out))\nreturn x + sum(vals), out, vals"),
    ("nonlocal_in_generator", "count = 0\ndef gen():\n    nonlocal count\n    for i in range(3):\n        count += 1\n        yield i\nvals = [v for v in gen()]\nreturn x + count, vals"),
    ("multiple_context_managers_exit_order", "a, b = Suppress(), Suppress()\nwith a, b:\n    x = x * 2\nreturn x, a.seen, b.seen"),
]
snippets("cpython/test_grammar", "semantics", SEMANTICS, namespace=NS)

ORDERS = [
    ("set_of_strings_iteration_order", "n = x.shape[0]\ns = {'b', 'a', f'k{n}', 'c'}\ns.discard('a')\ns.add('z')\nreturn x, list(s), sorted(s)"),
    ("set_of_ints_iteration_order", "n = x.shape[0]\ns = {n * 8, 3, n, 64, -1}\ns.add(n * 16)\nreturn x + len(s), list(s)"),
    ("dict_pop_and_reinsert_order", "d = {'a': 1, 'b': 2, 'c': 3}\nd.pop('a')\nd['a'] = x.shape[0]\ndel d['b']\nd['b'] = 0\nreturn x, list(d.items())"),
    ("sort_list_of_sizes", "m = x.reshape(2, -1)\ndims = [m.shape[1], m.shape[0], 3, x.shape[0]]\ndims.sort()\nreturn x + dims[0], dims, sorted(dims, reverse=True)"),
    ("big_int_arithmetic_from_size", "n = x.shape[0]\nbig = 2 ** (n * 20) + 10 ** 20\nreturn x + big % 7, big // 10 ** 19, big.bit_length()"),
    ("math_integer_functions_on_size", "n = x.shape[0]\nreturn x + math.comb(n, 2), math.factorial(n), math.isqrt(n * 10), math.lcm(n, 6), math.prod([n, 2, 3])"),
    ("float_to_int_conversions_on_size", "f = x.shape[0] / 3\nreturn x * f, int(f), round(f), math.trunc(-f), math.floor(-f), math.ceil(f), round(2.5), round(f, 1)"),
    ("bool_arithmetic_and_sum_of_bools", "flags = [t > 0 for t in range(-2, x.shape[0])]\nreturn x + sum(flags), True + True, flags.count(True), any(flags), all(flags)"),
    ("string_multiplication_and_slicing_from_size", "n = x.shape[0]\ns = 'ab' * n\nreturn x + len(s), s[::n], s[-n:], s.find('ba', n), s.count('a')"),
    ("set_in_place_operators_keep_identity", "n = x.shape[0]\ns = {1, 2, n}\nalias = s\ns |= {n + 1}\ns -= {1}\ns &= {2, n, n + 1}\nreturn x + len(alias), s is alias, sorted(alias), list(s)"),
    ("set_methods_with_iterators_and_order", "s = {'a', 'b', f'c{x.shape[0]}'}\ni = s.intersection(v for v in ['b', 'zz', 'a'])\nu = s.union(iter(['q']))\nreturn x + len(i), list(i), list(u), list(s ^ {'a', 'w'})"),
    ("list_repeat_in_place_keeps_identity", "lst = [x, 1]\nalias = lst\nlst *= x.shape[0] - 2\nreturn len(alias), lst is alias, alias[-1]"),
    ("bytes_and_ord_chr_from_size", "n = x.shape[0]\nb = bytes([n, n + 1])\nreturn x + b[1], chr(ord('a') + n), b.hex(), len(b * 2)"),
]
snippets("cpython/test_grammar", "orders", ORDERS, namespace=NS)

ITERATION = [
    ("genexpr_late_binding_in_list_of_generators", "gens = [(x * i for _ in range(1)) for i in range(3)]\nreturn [next(g) for g in gens]"),
    ("list_iterator_sees_appended_items", "xs = [x, x + 1]\nit = iter(xs)\nfirst = next(it)\nxs.append(x * 10)\nreturn first, list(it)"),
    ("zip_consumes_one_extra_item", "it = iter([1, 2, 3, x.shape[0]])\npairs = list(zip(it, [10]))\nreturn x + next(it), pairs, list(it)"),
    ("map_with_uneven_iterables", "return list(map(lambda a, b: a * b, [x, x + 1, x + 2], [1, 2])), list(map(len, ['ab', 'c']))"),
    ("max_min_return_first_of_ties", "ts = [(1, 'a'), (3, 'b'), (3, 'c'), (1, 'd')]\nreturn x, max(ts, key=lambda p: p[0]), min(ts, key=lambda p: p[0]), max([2, x.shape[0], 2])"),
    ("sorted_reverse_keeps_ties_stable", "items = [('a', 1), ('b', 2), ('c', 1), ('d', 2)]\nreturn x, sorted(items, key=lambda p: p[1], reverse=True), sorted(items, key=lambda p: -p[1])"),
    ("sum_with_list_start_and_floats", "return x + sum([0.1] * 10), sum([[1], [x.shape[0]]], []), sum((t for t in [x, x]), x)"),
    ("any_all_stop_early_on_a_generator", "it = iter([0, 0, 3, 4, 0])\nfound = any(v > 1 for v in it)\nrest = list(it)\nit2 = iter([1, 0, 5])\nok = all(v for v in it2)\nreturn x + found, rest, ok, list(it2)"),
    ("dict_from_zip_with_duplicate_keys", "d = dict(zip(['a', 'b', 'a'], [x, x + 1, x + 2]))\nreturn list(d), d['a']"),
    ("list_remove_first_and_index_error", "xs = [1, 2, 1, 3]\nxs.remove(1)\ntry:\n    xs.index(9)\nexcept ValueError as e:\n    msg = str(e)\nreturn x + xs[0], xs, msg"),
    ("str_join_non_str_raises", "return x, ','.join(['a', x.shape[0]])"),
    ("enumerate_dict_while_updating_values", "d = {'a': x, 'b': x * 2}\nfor i, k in enumerate(d):\n    d[k] = d[k] + i\nreturn d"),
    ("nested_generators_closing_order", "log = []\ndef gen(tag):\n    try:\n        yield tag\n        yield tag + '2'\n    finally:\n        log.append(tag)\ng1, g2 = gen('a'), gen('b')\nvals = [next(g1), next(g2)]\ng2.close()\ng1.close()\nreturn x + len(log), log, vals"),
    ("iter_with_sentinel_callable", "vals = iter([3, 2, 1, 0, 5])\nout = list(iter(lambda: next(vals), 0))\nreturn x + len(out), out, next(vals)"),
]
snippets("cpython/test_iter", "iteration", ITERATION, namespace=NS)

STRINGS = [
    ("nested_format_spec_from_sizes", "n = x.shape[0]\nw = n + 2\nreturn x, f'{n:{w}d}|{n:>{w}}|{3.14159:.{n}f}', '{:{}}'.format(n, w)"),
    ("str_partition_rsplit_strip", "s = f'  a.b.c{x.shape[0]}  '\nreturn x, s.strip(), s.strip(' a'), s.partition('.'), s.rpartition('.'), s.rsplit('.', 1), s.split('.', maxsplit=1)"),
    ("str_translate_and_maketrans", "s = 'abc' * x.shape[0]\nreturn x + len(s), s.translate(str.maketrans('ab', 'xy', 'c')), s.casefold().title()"),
    ("str_splitlines_and_expandtabs", "s = f'a\\tb\\nc{x.shape[0]}\\r\\nd'\nreturn x, s.splitlines(), s.splitlines(True), s.expandtabs(4)"),
    ("str_comparisons_and_sorting", "names = [f'k{i}' for i in range(x.shape[0], 0, -3)] + ['K1', 'k10']\nreturn x, sorted(names), max(names), 'k2' < 'k10', sorted(names, key=str.lower)"),
    ("str_encode_decode_roundtrip", "s = f'n={x.shape[0]}'\nb = s.encode()\nreturn x + len(b), b.decode(), s.isdigit(), s[2:].isdigit(), s.zfill(8), s.center(9, '*')"),
]
snippets("cpython/test_string", "strings", STRINGS, namespace=NS)

NUMBERS = [
    ("size_against_float_in_min_max", "n = x.shape[0]\nreturn x * max(n, 5.0), max(n, 5.0), min(n, 5.0), max(5.0, n), type(max(n, 5.0)).__name__, sorted([n, 4.0, 4])"),
    ("size_compared_with_fractional_floats", "n = x.shape[0]\nreturn x + (n < 4.5) + (n >= 6.5) * 2, n > 5.5, n <= 4.0"),
    ("float_and_int_methods_of_sizes", "n = x.shape[0]\nreturn x, (n / 2).is_integer(), (n * 1.5).as_integer_ratio(), n.to_bytes(2, 'little'), int.from_bytes(b'\\x01\\x02', 'big') + n"),
    ("number_formatting_specs", "n = x.shape[0]\nreturn x, round(n / 3, 2), round(-2.5), round(3.5), f'{n/3:.3e}', f'{n:08.3f}', f'{-n:+d}', f'{n:%}', f'{n * 1000:_}'"),
    ("float_modulo_and_fsum", "n = x.shape[0]\nreturn x, divmod(n * 1.5, 2), math.fsum([0.1] * n), math.fmod(-n, 3), -n % 3, pow(n, -1), n ** -2"),
]
snippets("cpython/test_float", "numbers", NUMBERS, namespace=NS)

# Errors the program catches and reads (type and message), raised by the builtins capture models.
ERRORS = [
    ("int_of_bad_string", "try:\n    r = int('abc')\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("missing_dict_key", "try:\n    r = {}['k']\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("empty_list_index", "try:\n    r = [][0]\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("none_plus_int", "try:\n    r = None + 1\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("size_floordiv_zero", "try:\n    r = x.shape[0] // 0\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("true_div_zero", "try:\n    r = 1 / (x.shape[0] - x.shape[0])\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("list_index_by_size", "try:\n    r = [1, 2][x.shape[0]]\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("str_index_past_end", "try:\n    r = 'abc'[9]\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("dict_missing_size_key", "try:\n    r = {'a': 1}[x.shape[0]]\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("list_pop_past_end", "try:\n    r = [1].pop(5)\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("pop_empty_list", "try:\n    r = [].pop()\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("popitem_empty_dict", "try:\n    r = {}.popitem()\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("pop_empty_set", "try:\n    r = set().pop()\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("next_exhausted", "try:\n    r = next(iter([]))\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("shape_index_past_rank", "try:\n    r = x.shape[5]\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("range_index_past_end", "try:\n    r = range(3)[7]\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("divmod_by_zero", "try:\n    r = divmod(x.shape[0], 0)\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("sqrt_of_negative_size", "try:\n    r = math.sqrt(-x.shape[0])\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("int_of_infinity", "try:\n    r = int(float('inf'))\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("list_plus_int", "try:\n    r = [0] * x.shape[0] + 1\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("sum_of_strings", "try:\n    r = sum(['a', 'b'])\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("sorted_mixed_types", "try:\n    r = sorted([x.shape[0], 'a'])\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("len_of_int", "try:\n    r = len(5)\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("max_without_arguments", "try:\n    r = max()\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("min_of_empty", "try:\n    r = min([])\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("iter_of_int", "try:\n    r = iter(5)\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("size_less_than_str", "try:\n    r = x.shape[0] < 'a'\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
    ("hash_of_list", "try:\n    r = hash([])\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nreturn x, r"),
]
snippets("cpython/test_exceptions", "errors", ERRORS, namespace=NS)
