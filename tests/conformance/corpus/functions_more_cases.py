"""More cases modelled on PyTorch's test/dynamo/test_functions.py, on everyday Python inside
compiled functions: closures and nonlocal cells (shared between inner functions, written by
callees, recursive inner functions, cells seen after the call), default arguments (mutable
defaults kept across calls, __defaults__ and __kwdefaults__ read and replaced), generators
(send, return values through `yield from`, finally blocks run on close, partial consumption),
try/except/else/finally (errors raised by tensor ops caught in the function, return overridden
in finally, exception chaining, custom exception attributes), with-statements over user context
managers (suppressing exceptions, __exit__ seeing the error, nesting, contextmanager
generators), string formatting of sizes and dtypes, subclasses of builtins (dict with
__missing__, list with extra methods, int and tuple subclasses), containers passed in and
mutated in place, checked after the call, dict keys equal across types (1, 1.0, True),
membership and index of tensors in lists (identity first, then ==), and the same constructs
with a graph break in the middle. Recast in our own words."""

import collections
import contextlib
import functools
import itertools
import operator

import torch

from . import snippets, two_vecs

SOURCE = "dynamo/test_functions"


def memo_square(t, cache={}):  # noqa: B006  (the mutable default is what the cases exercise)
    cache[len(cache)] = t
    return t * t + len(cache)


def kw_scaled(t, *, scale=2.0):
    return t * scale


class Missing(dict):
    def __missing__(self, key):
        return len(key)


class Stack(list):
    def push(self, value):
        self.append(value)
        return self

    def top(self):
        return self[-1]


class Meters(int):
    def doubled(self):
        return Meters(self * 2)


class Pair(tuple):
    def swap(self):
        return Pair((self[1], self[0]))


class Tracked:
    """A context manager that records its entries and exits, and swallows ValueError."""

    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, exc_type, exc, tb):
        self.log.append("exit" if exc_type is None else f"exit {exc_type.__name__}")
        return exc_type is ValueError


class ShapeError(Exception):
    def __init__(self, size, message="bad size"):
        super().__init__(message)
        self.size = size


@contextlib.contextmanager
def scaled(log, k):
    log.append(f"in {k}")
    try:
        yield k * 2
    finally:
        log.append(f"out {k}")


def dict_and_vec(n):
    return {"a": torch.randn(n), "b": torch.randn(n)}, torch.randn(n)


def list_and_vec(n):
    return [torch.randn(n), torch.randn(n)], torch.randn(n)


NS = {
    "torch": torch, "collections": collections, "contextlib": contextlib, "functools": functools,
    "itertools": itertools, "operator": operator, "memo_square": memo_square, "kw_scaled": kw_scaled,
    "Missing": Missing, "Stack": Stack, "Meters": Meters, "Pair": Pair, "Tracked": Tracked,
    "ShapeError": ShapeError, "scaled": scaled,
}

CLOSURES = [
    ("cell_shared_by_two_inner_functions", "n = 0\ndef inc():\n    nonlocal n\n    n += 1\ndef get():\n    return n\ninc()\ninc()\nreturn x * get(), n"),
    ("recursive_inner_function", "def fact(k):\n    return 1 if k <= 1 else k * fact(k - 1)\nreturn x * fact(4), fact(5)"),
    ("recursive_inner_on_size", "def tri(k):\n    return 0 if k == 0 else k + tri(k - 1)\nreturn x + tri(x.shape[0])"),
    ("closure_over_rebound_tensor", "y = x + 1\ndef g():\n    return y * 2\ny = x - 1\nreturn g()"),
    ("nonlocal_tensor_written_in_loop", "acc = x\ndef step(k):\n    nonlocal acc\n    acc = acc * 0.5 + k\nfor k in range(3):\n    step(k)\nreturn acc"),
    ("closure_list_cell_appended", "out = []\ndef push(t):\n    out.append(t * len(out))\nfor t in (x, x + 1, x + 2):\n    push(t)\nreturn out"),
    ("closure_returned_with_state", "def make():\n    hits = [0]\n    def f(t):\n        hits[0] += 1\n        return t + hits[0]\n    return f, hits\nf, hits = make()\nreturn f(x), f(x), hits"),
    ("inner_function_attributes", "def helper(t, k=3):\n    'doc'\n    return t * k\nreturn helper(x), helper.__name__, helper.__defaults__, helper.__doc__"),
    ("lambda_default_captures_now", "k = 2\nf = lambda t, k=k: t * k\nk = 10\nreturn f(x), f(x, k)"),
    ("class_in_function_closes_over_local", "offset = x.shape[0]\nclass Adder:\n    def __call__(self, t):\n        return t + offset\nreturn Adder()(x)"),
    ("nested_nonlocal_two_levels", "n = 1\ndef outer():\n    def inner():\n        nonlocal n\n        n *= 3\n    inner()\n    inner()\nouter()\nreturn x + n, n"),
    ("closure_over_loop_variable_via_factory", "def mk(i):\n    return lambda t: t + i\nfs = [mk(i) for i in range(3)]\nreturn [f(x) for f in fs]"),
    ("map_with_closure_mutation", "seen = []\ndef f(t):\n    seen.append(t.shape[0])\n    return t * 2\nr = list(map(f, [x, x[1:]]))\nreturn r, seen"),
    ("decorator_defined_inside", "def twice(fn):\n    def w(t):\n        return fn(fn(t))\n    return w\n@twice\ndef inc(t):\n    return t + 1\nreturn inc(x), inc.__name__"),
    ("functools_wraps_inside", "def logged(fn):\n    @functools.wraps(fn)\n    def w(*a):\n        return fn(*a) * 2\n    return w\n@logged\ndef add(a, b):\n    'adds'\n    return a + b\nreturn add(x, 1), add.__name__, add.__doc__, add.__wrapped__(x, 1)"),
]
snippets(SOURCE, "functions_closures", CLOSURES, namespace=NS)

DEFAULTS = [
    ("module_mutable_default_accumulates", "before = len(memo_square.__defaults__[0])\ny = memo_square(x)\nz = memo_square(x + 1)\nafter = len(memo_square.__defaults__[0])\nmemo_square.__defaults__[0].clear()\nreturn y, z, after - before"),
    ("inner_mutable_default_accumulates", "def g(t, seen=[]):\n    seen.append(t.shape[0])\n    return t * len(seen), seen\na, s1 = g(x)\nb, s2 = g(x)\nreturn a, b, s1 is s2, s2"),
    ("defaults_replaced", "def g(t, k=1):\n    return t * k\na = g(x)\ng.__defaults__ = (5,)\nreturn a, g(x)"),
    ("kwdefaults_read", "return kw_scaled(x), kw_scaled(x, scale=3), kw_scaled.__kwdefaults__"),
    ("kwdefaults_replaced_inner", "def g(t, *, k=1):\n    return t + k\ng.__kwdefaults__ = {'k': 4}\nreturn g(x)"),
    ("default_is_none_then_filled", "def g(t, mask=None):\n    if mask is None:\n        mask = torch.ones_like(t)\n    return t * mask\nreturn g(x), g(x, x > 0)"),
    ("default_tensor_evaluated_once", "def g(t, z=torch.zeros(1)):\n    z += 1\n    return t + z, z\na, za = g(x)\nb, zb = g(x)\nreturn a, b, za is zb"),
    ("keyword_only_missing_raises", "def g(t, *, k):\n    return t + k\nreturn g(x)"),
    ("too_many_positional_raises", "def g(t):\n    return t\nreturn g(x, 1)"),
    ("star_args_empty_and_kwargs_order", "def g(*args, **kw):\n    return len(args), list(kw)\nreturn x, g(), g(b=1, a=2), g(*[], **{'z': 0})"),
]
snippets(SOURCE, "functions_defaults", DEFAULTS, namespace=NS)

GENERATORS = [
    ("generator_send_accumulates", "def acc():\n    total = 0\n    while True:\n        v = yield total\n        total = total + v\ng = acc()\nnext(g)\ng.send(x)\nr = g.send(x * 2)\nreturn r"),
    ("yield_from_return_value", "def inner():\n    yield x\n    yield x + 1\n    return x * 10\ndef outer(out):\n    r = yield from inner()\n    out.append(r)\nout = []\nvals = list(outer(out))\nreturn vals, out"),
    ("generator_finally_on_close", "log = []\ndef g():\n    try:\n        yield x\n        yield x + 1\n    finally:\n        log.append('closed')\nit = g()\na = next(it)\nit.close()\nreturn a, log"),
    ("generator_partially_consumed", "def g():\n    for i in range(5):\n        yield x * i\nit = g()\nfirst = next(it)\nrest = [t.sum() for t in it]\nreturn first, len(rest)"),
    ("generator_in_zip_and_enumerate", "def g():\n    k = 0\n    while True:\n        k += 1\n        yield k\nreturn [t * i for (i, t), _ in zip(enumerate([x, x + 1]), g())]"),
    ("generator_islice_infinite", "def count_up(t):\n    while True:\n        t = t + 1\n        yield t\nreturn list(itertools.islice(count_up(x), 3))"),
    ("generator_raises_midway", "def g():\n    yield x\n    raise ValueError('stop')\nout = []\ntry:\n    for t in g():\n        out.append(t + 1)\nexcept ValueError as e:\n    out.append(str(e))\nreturn out"),
    ("generator_expression_sum_of_sizes", "ts = [x, x[1:], x[2:]]\nreturn x + sum(t.shape[0] for t in ts)"),
    ("generator_stopiteration_value", "def g():\n    yield 1\n    return 'done'\nit = g()\nnext(it)\ntry:\n    next(it)\nexcept StopIteration as e:\n    return x, e.value"),
    ("generator_throw_into", "def g():\n    try:\n        yield x\n    except KeyError:\n        yield x * 100\nit = g()\nnext(it)\nreturn it.throw(KeyError('k'))"),
]
snippets(SOURCE, "functions_generators", GENERATORS, namespace=NS)

EXCEPTIONS = [
    ("shape_error_from_op_caught", "try:\n    y = x + torch.ones(3, 2)\nexcept RuntimeError:\n    y = x - 1\nreturn y"),
    ("index_error_from_tensor_caught", "try:\n    y = x[100]\nexcept IndexError:\n    y = x * 0\nreturn y"),
    ("try_else_runs_without_error", "log = []\ntry:\n    y = x + 1\nexcept RuntimeError:\n    log.append('err')\nelse:\n    log.append('else')\n    y = y * 2\nfinally:\n    log.append('finally')\nreturn y, log"),
    ("finally_overrides_return", "def g(t):\n    try:\n        return t + 1\n    finally:\n        return t - 1\nreturn g(x)"),
    ("finally_runs_on_break", "log = []\nfor i in range(3):\n    try:\n        if i == 1:\n            break\n        x = x + i\n    finally:\n        log.append(i)\nreturn x, log"),
    ("finally_runs_on_continue", "log = []\nfor i in range(3):\n    try:\n        if i == 1:\n            continue\n        x = x * 2\n    finally:\n        log.append(i)\nreturn x, log"),
    ("exception_chaining_context", "try:\n    try:\n        raise KeyError('a')\n    except KeyError:\n        raise ValueError('b')\nexcept ValueError as e:\n    return x, type(e.__context__).__name__, str(e)"),
    ("raise_from_cause", "try:\n    try:\n        {}['k']\n    except KeyError as k:\n        raise RuntimeError('wrapped') from k\nexcept RuntimeError as e:\n    return x + 1, type(e.__cause__).__name__, e.__suppress_context__"),
    ("custom_exception_attributes", "msg = ''\ntry:\n    if x.shape[0] < 6:\n        raise ShapeError(x.shape[0])\n    y = x\nexcept ShapeError as e:\n    y = x * e.size\n    msg = str(e)\nreturn y, msg"),
    ("exception_from_callee_caught_by_caller", "def check(t):\n    if t.shape[0] > 5:\n        raise ShapeError(t.shape[0], 'too big')\n    return t\ntry:\n    return check(x) + 1, 'ok'\nexcept ShapeError as e:\n    return x - e.size, str(e)"),
    ("exception_variable_deleted_after_except", "try:\n    raise ValueError('v')\nexcept ValueError as err:\n    pass\ntry:\n    err\n    found = True\nexcept NameError:\n    found = False\nreturn x, found"),
    ("nested_try_reraise", "log = []\ntry:\n    try:\n        raise KeyError('inner')\n    except KeyError:\n        log.append('caught')\n        raise\nexcept KeyError as e:\n    log.append(repr(e))\nreturn x + len(log), log"),
    ("uncaught_error_propagates_after_mutation", "x.add_(1)\nraise ValueError('after mutation')"),
    ("assert_message_with_size", "try:\n    assert x.shape[0] == 100, f'got {x.shape[0]}'\nexcept AssertionError as e:\n    return x, str(e)\nreturn x + 1, ''"),
]
snippets(SOURCE, "functions_exceptions", EXCEPTIONS, namespace=NS)

WITH = [
    ("user_context_manager_log", "log = []\nwith Tracked(log) as t:\n    y = x * 2\n    log.append(type(t).__name__)\nreturn y, log"),
    ("user_context_manager_suppresses", "log = []\ny = x\nwith Tracked(log):\n    y = x + 1\n    raise ValueError('swallowed')\nreturn y, log"),
    ("user_context_manager_does_not_suppress", "log = []\ntry:\n    with Tracked(log):\n        raise KeyError('k')\nexcept KeyError:\n    log.append('outside')\nreturn x, log"),
    ("return_inside_with_runs_exit", "log = []\ndef g(t):\n    with Tracked(log):\n        return t + 1\ny = g(x)\nreturn y, log"),
    ("nested_with_order", "log = []\nwith Tracked(log), scaled(log, 3) as k:\n    y = x * k\nreturn y, log"),
    ("contextmanager_generator_finally", "log = []\ntry:\n    with scaled(log, 2) as k:\n        raise RuntimeError('x')\nexcept RuntimeError:\n    pass\nreturn x * k, log"),
    ("suppress_context_manager", "with contextlib.suppress(IndexError):\n    x = x + 1\n    x = x[100]\nreturn x"),
    ("nullcontext_value", "with contextlib.nullcontext(x * 2) as y:\n    z = y + 1\nreturn z"),
]
snippets(SOURCE, "functions_with", WITH, namespace=NS)

STRINGS = [
    ("fstring_repr_conversion", "s = f'{x.dtype!r}/{x.shape[0]!s}/{\"a\"!r}'\nreturn x + len(s), s"),
    ("fstring_width_from_size", "n = x.shape[0]\ns = f'{n:>{n}}|{n:03d}|{n / 3:.3f}'\nreturn x, s"),
    ("format_with_attribute_access", "s = '{0.shape}-{0.dtype}'.format(x)\nreturn x, s"),
    ("percent_format_with_dict", "s = '%(n)d items, %(f).1f' % {'n': x.shape[0], 'f': 2.25}\nreturn x, s"),
    ("str_of_size_and_dtype", "return x, str(x.shape), repr(x.size()), str(x.dtype), str(torch.device('cpu'))"),
    ("string_key_from_size", "d = {}\nkey = 'n' + str(x.shape[0])\nd[key] = x\nreturn d"),
    ("string_methods_chain", "s = 'Hello_World'.lower().replace('_', ' ').title().split()\nreturn x * len(s), s, '-'.join(s).center(15, '*')"),
    ("string_compare_branch", "mode = 'train' if x.shape[0] % 2 == 0 else 'eval'\nif mode == 'train':\n    return x * 2, mode\nreturn x / 2, mode"),
    ("thousands_and_zfill", "n = x.shape[0] * 1000\nreturn x, f'{n:,}', str(x.shape[0]).zfill(4), format(n, 'x')"),
    ("string_in_tuple_and_startswith", "names = ('weight', 'bias')\nreturn x + sum(1 for n in names if n.startswith('w')), 'bias' in names, 'b' in 'abc'"),
]
snippets(SOURCE, "functions_strings", STRINGS, namespace=NS)

BUILTIN_SUBCLASSES = [
    ("dict_subclass_missing", "d = Missing(a=x)\nreturn d['a'] + d['long_key'], d['zz'], 'zz' in d"),
    ("list_subclass_methods", "s = Stack([x])\ns.push(x + 1).push(x + 2)\nreturn s.top(), len(s), type(s).__name__, isinstance(s, list)"),
    ("int_subclass_arith", "m = Meters(x.shape[0])\nd = m.doubled()\nreturn x + d, type(d).__name__, type(m + 1).__name__, d"),
    ("tuple_subclass_method", "p = Pair((x, x * 2))\nq = p.swap()\nreturn q[0] - q[1], type(q).__name__, len(q)"),
    ("ordered_dict_move_to_end", "d = collections.OrderedDict(a=x, b=x * 2, c=x * 3)\nd.move_to_end('a')\nd.popitem(last=False)\nreturn d"),
    ("counter_most_common_of_sizes", "c = collections.Counter([x.shape[0], 3, 3, x.shape[0], 1])\nreturn x, c.most_common(1), sorted(c.items())"),
    ("chainmap_lookup", "m = collections.ChainMap({'a': x}, {'a': x * 0, 'b': x + 1})\nreturn m['a'] + m['b'], len(m)"),
    ("defaultdict_int_counts", "d = collections.defaultdict(int)\nfor t in (x, x[1:], x):\n    d[t.shape[0]] += 1\nreturn x, dict(d)"),
    ("isinstance_bool_is_int", "return x, isinstance(True, int), isinstance(x.shape[0], int), type(x.shape[0] > 1).__name__, isinstance(1.0, int)"),
]
snippets(SOURCE, "functions_builtins", BUILTIN_SUBCLASSES, namespace=NS)

MUTATED_INPUTS = [
    ("input_dict_key_added_and_popped", "d['c'] = d.pop('a') + x\nd.setdefault('z', x * 0)\nreturn len(d)", {"params": "d, x", "make_args": dict_and_vec}),
    ("input_dict_updated_and_cleared_value", "d.update(b=d['b'] * 2, n=x.shape[0])\nreturn sorted(d)", {"params": "d, x", "make_args": dict_and_vec}),
    ("input_dict_popitem_order", "k, v = d.popitem()\nd[k + '2'] = v + x\nreturn list(d)", {"params": "d, x", "make_args": dict_and_vec}),
    ("input_dict_ior", "d |= {'q': x}\nreturn d['q'] + d['a']", {"params": "d, x", "make_args": dict_and_vec}),
    ("input_list_iadd_extends_in_place", "l += [x]\nl *= 2\nreturn len(l)", {"params": "l, x", "make_args": list_and_vec}),
    ("input_list_insert_sort_reverse", "l.insert(0, x)\nl.sort(key=lambda t: t.shape[0])\nl.reverse()\nreturn l[0] + 1", {"params": "l, x", "make_args": list_and_vec}),
    ("input_list_slice_assignment", "l[:] = [t * 2 for t in l] + [x]\ndel l[0]\nreturn len(l)", {"params": "l, x", "make_args": list_and_vec}),
    ("input_list_aliased_inside", "m = l\nm.append(x)\nn = [l, l]\nn[0].append(x + 1)\nreturn len(l)", {"params": "l, x", "make_args": list_and_vec}),
    ("input_list_element_tensor_mutated", "l[0].add_(x)\nl[1] = l[1] * 2\nreturn l[0] + l[1]", {"params": "l, x", "make_args": list_and_vec}),
    ("input_list_mutated_across_break", "l.append(x + 1)\nprint('break')\nl.append(l[-1] * 2)\nreturn len(l)", {"params": "l, x", "make_args": list_and_vec}),
    ("input_nested_container_mutated", "d['a'].append(x)\nd['b']['k'] = x * 2\nreturn len(d['a'])", {"params": "d, x", "make_args": lambda n: ({"a": [torch.randn(n)], "b": {}}, torch.randn(n))}),
]
snippets(SOURCE, "functions_inputs", MUTATED_INPUTS, namespace=NS)

TWO = [
    ("swap_via_tuple_unpack", "x, y = y, x\nreturn x - y"),
    ("chained_comparison_of_sizes", "return x + (0 < x.shape[0] <= y.shape[0] < 100), x.shape[0] == y.shape[0] == 4"),
    ("walrus_in_comprehension", "r = [s for t in (x, y) if (s := t.sum()) > -100]\nreturn r"),
    ("walrus_in_while", "i = 0\nacc = x\nwhile (i := i + 1) < 4:\n    acc = acc + y * i\nreturn acc, i"),
    ("conditional_expression_chain", "a = x if x.shape[0] > 100 else y if y.shape[0] > 2 else x * 0\nreturn a"),
    ("operator_itemgetter_attrgetter", "get = operator.itemgetter(1, 0)\nshape_of = operator.attrgetter('shape')\na, b = get([x, y])\nreturn a - b, shape_of(x)"),
    ("operator_methodcaller", "f = operator.methodcaller('add', y, alpha=2)\nreturn f(x)"),
    ("starmap_and_accumulate", "r = list(itertools.starmap(torch.add, [(x, y), (y, x)]))\nacc = list(itertools.accumulate([x, y], operator.mul))\nreturn r, acc"),
    ("zip_strict_mismatch_raises", "return list(zip([x, y], [1], strict=True))"),
    ("dict_comprehension_from_zip", "d = {k: v * i for i, (k, v) in enumerate(zip('ab', (x, y)))}\nreturn d"),
]
snippets(SOURCE, "functions_two", TWO, namespace=NS, params="x, y", make_args=two_vecs)

# The same everyday Python with a graph break (print) in the middle: the resume function must
# continue with the cells, iterators, handlers, context managers and pending writes as eager has them.
BREAKS = [
    ("nonlocal_written_on_both_sides_of_break", "n = 1\ndef bump(k):\n    nonlocal n\n    n = n * 10 + k\nbump(1)\nprint('break')\nbump(2)\nreturn x * n, n"),
    ("closure_made_before_break_called_after", "k = x.shape[0]\ndef scale(t):\n    return t * k\nprint('break')\nk = k + 1\nreturn scale(x)"),
    ("generator_resumed_after_break", "def g():\n    yield x + 1\n    yield x + 2\n    yield x + 3\nit = g()\na = next(it)\nprint('break')\nreturn a, list(it)"),
    ("try_finally_spanning_break", "log = []\ntry:\n    y = x + 1\n    print('break')\n    log.append('body')\nfinally:\n    log.append('finally')\nreturn y, log"),
    ("exception_raised_after_break_caught", "try:\n    y = x * 2\n    print('break')\n    raise KeyError('k')\nexcept KeyError as e:\n    y = y + 1\n    msg = str(e)\nreturn y, msg"),
    ("user_context_manager_spanning_break", "log = []\nwith Tracked(log):\n    y = x + 1\n    print('break')\n    log.append('inside')\nreturn y, log"),
    ("contextmanager_generator_spanning_break", "log = []\nwith scaled(log, 3) as k:\n    print('break')\n    y = x * k\nreturn y, log"),
    ("loop_with_break_accumulates_list", "out = []\nfor i in range(3):\n    out.append(x * i)\n    if i == 1:\n        print('break')\nreturn out"),
    ("mutable_default_across_break", "def g(t, seen=[]):\n    seen.append(1)\n    print('break')\n    return t * len(seen)\nreturn g(x) + g(x)"),
    ("input_dict_mutated_around_break", "d['a'] = d['a'] * 2\nprint('break')\nd['b'], d['a'] = d['a'], d['b']\nreturn d['a'] - d['b']", {"params": "d, x", "make_args": dict_and_vec}),
    ("input_list_swap_after_break", "l.append(x)\nprint('break')\nl[0], l[-1] = l[-1], l[0]\nreturn len(l)", {"params": "l, x", "make_args": list_and_vec}),
    ("walrus_and_comprehension_around_break", "ys = [(t := x * i) for i in range(3)]\nprint('break')\nreturn ys, t"),
]
snippets(SOURCE, "functions_breaks", BREAKS, namespace=NS)

CONTAINER_SEMANTICS = [
    ("dict_equal_keys_collapse", "d = {1: 'a', True: 'b', 1.0: 'c'}\nreturn x + len(d), d, list(d)"),
    ("dict_pop_then_reinsert_order", "d = {'a': x, 'b': x * 2}\nv = d.pop('a')\nd['a'] = v + 1\nreturn list(d), d"),
    ("tensor_membership_by_identity", "l = [x, x + 1]\nreturn x in l, (x.sum() + 0) in [x.sum()], (x.sum() + 1) in (x.sum(),)"),
    ("tensor_membership_ambiguous_raises", "return x in [x.clone()]"),
    ("list_index_of_tensor", "l = [x, x + 1]\nreturn l.index(x), [x, x].count(x)"),
    ("max_with_key_ties_first", "ts = [x, x + 0, x * 1]\nm = max(ts, key=lambda t: t.shape[0])\nreturn m is ts[0], min([3, 1, 1], key=lambda v: -v)"),
    ("min_of_empty_raises", "return x + min([])"),
    ("max_of_empty_default", "return x + max([], default=2), max((), key=len, default=None)"),
    ("keyerror_message_quoted", "try:\n    {}['k']\nexcept KeyError as e:\n    return x, str(e), repr(e), e.args"),
    ("int_parse_error_message", "try:\n    int('abc')\nexcept ValueError as e:\n    return x, str(e)"),
    ("bool_of_multi_element_raises", "if x:\n    return x\nreturn x + 1"),
]
snippets(SOURCE, "functions_containers", CONTAINER_SEMANTICS, namespace=NS)
