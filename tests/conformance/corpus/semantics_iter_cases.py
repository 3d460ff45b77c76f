"""Iteration and control flow where a compiler models Python's protocol rather than running it:
generators driven by send/throw/close (the value of a yield, a throw caught inside that yields
again, close running finally, a generator that yields in finally), `yield from` delegating
send and throw and returning a value, generator expressions over tensors (late binding of the
outer iterable), iterators partly consumed and resumed after a graph break,
enumerate/zip/reversed/sorted(key=)/min/max(key=, default=) on tensors and objects, itertools
(chain, accumulate, groupby, islice, product, starmap, takewhile, dropwhile, tee, count) and
functools (reduce, partial with keywords, wraps), and exceptions: raise from, the implicit
__context__, a return in finally, an exception raised in __exit__, bare re-raise after
handling another one, custom exception classes with attributes and __str__. Modelled on
CPython's test_generators, test_itertools, test_functools, test_exceptions, test_raise and
test_with, recast in our own words."""

import functools
import itertools
import operator

import torch

from . import snippets


class Recorded:
    """A context manager that records and may raise from __exit__ or swallow."""

    def __init__(self, log, swallow=False, fail_exit=False):
        self.log = log
        self.swallow = swallow
        self.fail_exit = fail_exit

    def __enter__(self):
        self.log.append("enter")
        return len(self.log)

    def __exit__(self, exc_type, exc, tb):
        self.log.append(exc_type.__name__ if exc_type else "clean")
        if self.fail_exit:
            raise KeyError("from exit")
        return self.swallow


class SizeError(ValueError):
    def __init__(self, size, limit):
        super().__init__(f"size {size} over {limit}")
        self.size = size
        self.limit = limit

    def __str__(self):
        return f"SizeError({self.size}>{self.limit})"


class Countdown:
    """An iterator class (not a generator): __next__ raises StopIteration at zero."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return self.n


def gen_vec(n):
    return (iter([torch.randn(n) for _ in range(4)]),)


def list_of_vecs(n):
    return ([torch.randn(n) for _ in range(4)],)


NS = {
    "torch": torch, "functools": functools, "itertools": itertools, "operator": operator,
    "Recorded": Recorded, "SizeError": SizeError, "Countdown": Countdown,
}

GENERATORS = [
    ("send_value_becomes_yield_result", "def g():\n    total = x\n    while True:\n        got = yield total\n        if got is None:\n            return total\n        total = total + got\nit = g()\na = next(it)\nb = it.send(2)\nc = it.send(x)\ntry:\n    next(it)\nexcept StopIteration as e:\n    return a, b, c, e.value"),
    ("throw_caught_inside_yields_again", "def g():\n    try:\n        yield x\n    except ValueError:\n        yield x * 10\n    yield x * 100\nit = g()\na = next(it)\nb = it.throw(ValueError)\nc = next(it)\nreturn a, b, c"),
    ("throw_uncaught_closes_generator", "def g():\n    yield x\n    yield x + 1\nit = g()\nnext(it)\ntry:\n    it.throw(KeyError('k'))\nexcept KeyError as e:\n    caught = e.args\nreturn x, caught, list(it)"),
    ("close_runs_finally_and_returns_none", "log = []\ndef g():\n    try:\n        yield x\n        yield x + 1\n    finally:\n        log.append('finally')\nit = g()\na = next(it)\nr = it.close()\nreturn a, r, log, list(it)"),
    ("close_on_fresh_generator_skips_body", "log = []\ndef g():\n    log.append('started')\n    yield x\nit = g()\nit.close()\nreturn x, log, list(it)"),
    ("yield_in_finally_on_close_raises", "def g():\n    try:\n        yield x\n    finally:\n        yield x + 1\nit = g()\nnext(it)\ntry:\n    it.close()\nexcept RuntimeError:\n    return x * 2\nreturn x"),
    ("yield_from_delegates_send", "def inner():\n    a = yield 'first'\n    b = yield a * 2\n    return a + b\ndef outer():\n    r = yield from inner()\n    yield r\nit = outer()\nnext(it)\nm = it.send(x)\nr = it.send(x * 3)\nreturn m, r"),
    ("yield_from_delegates_throw", "def inner():\n    try:\n        yield 1\n    except KeyError:\n        return x * 5\ndef outer():\n    r = yield from inner()\n    yield r + 1\nit = outer()\nnext(it)\nreturn it.throw(KeyError)"),
    ("yield_from_iterator_class", "def g():\n    r = yield from Countdown(3)\n    yield r\nreturn x, list(g())"),
    ("generator_return_value_in_list_is_lost", "def g():\n    yield x\n    return 'lost'\nreturn list(g()), [v for v in g()]"),
    ("nested_generator_expression_late_binding", "ts = [x, x * 2]\ng = (t + 1 for t in ts)\nts = [x * 100]\nreturn list(g)"),
    ("generator_expression_first_iterable_eager", "src = [x, x * 2]\ng = (t * k for t in src for k in range(2))\nsrc.append(x * 3)\nreturn list(g)"),
    ("generator_expression_over_tensor_rows", "m = x.view(-1, 1) * torch.arange(3.0)\nreturn sum(r.sum() for r in m), max(r[1] for r in m), list(r[0] for r in m if r[0] > 0)"),
    ("iterator_class_exhausted_stays_exhausted", "c = Countdown(3)\na = list(c)\nb = list(c)\nreturn x + len(a), a, b"),
    ("gi_frame_none_after_exhaustion", "def g():\n    yield x\nit = g()\nbefore = it.gi_frame is not None\nlist(it)\nreturn x, before, it.gi_frame is None"),
]
snippets("cpython/test_generators", "sem_iter_gen", GENERATORS, namespace=NS)

BUILTINS = [
    ("enumerate_zip_reversed_on_tensors", "out = []\nfor i, (a, b) in enumerate(zip(reversed(l), l), start=1):\n    out.append(a * i - b)\nreturn out", {"params": "l", "make_args": list_of_vecs}),
    ("sorted_key_on_tensor_norms_stable", "ks = [2, 1, 2, 1]\nidx = sorted(range(4), key=lambda i: ks[i])\nreturn [l[i] for i in idx], idx", {"params": "l", "make_args": list_of_vecs}),
    ("sorted_reverse_stable_ties", "pairs = [(1, 'a'), (0, 'b'), (1, 'c'), (0, 'd')]\nr = sorted(pairs, key=lambda p: p[0], reverse=True)\nreturn x, [p[1] for p in r]"),
    ("min_max_key_default_and_ties", "sizes = [x.shape[0], 2, x.shape[0]]\nm = max(range(3), key=lambda i: sizes[i])\nn = min([], key=len, default='none')\nreturn x * m, n, min(sizes, key=lambda v: -v), max(3, 7, 5, key=lambda v: v % 4)"),
    ("zip_stops_at_shortest_consuming_one", "it = iter([x, x + 1, x + 2])\npairs = list(zip(it, [0]))\nrest = list(it)\nreturn pairs, rest"),
    ("reversed_on_range_and_dict", "d = {'a': x, 'b': x * 2, 'c': x * 3}\nreturn list(reversed(d)), [d[k] for k in reversed(d.keys())][0], list(reversed(range(1, x.shape[0], 2)))"),
    ("iterator_resumed_after_break", "it = iter(l)\na = next(it)\nprint('break')\nb = next(it)\nrest = [t * 2 for t in it]\nreturn a + b, rest", {"params": "l", "make_args": list_of_vecs}),
    ("input_iterator_partly_consumed", "a = next(it)\nb = next(it)\nreturn a - b", {"params": "it", "make_args": gen_vec}),
    ("enumerate_resumed_after_break", "e = enumerate(l)\ni, a = next(e)\nprint('break')\nj, b = next(e)\nreturn a * i + b * j, [k for k, _ in e]", {"params": "l", "make_args": list_of_vecs}),
    ("generator_partly_consumed_across_break", "def g():\n    for t in l:\n        yield t * 2\nit = g()\nfirst = next(it)\nprint('break')\nreturn first, list(it)", {"params": "l", "make_args": list_of_vecs}),
    ("iter_with_sentinel_over_closure", "vals = [x, x * 2, None, x * 3]\npos = [0]\ndef nxt():\n    v = vals[pos[0]]\n    pos[0] += 1\n    return v\nreturn list(iter(nxt, None)), pos[0]"),
    ("map_filter_chain_lazy_order", "log = []\ndef f(t):\n    log.append('f')\n    return t * 2\ndef keep(t):\n    log.append('k')\n    return True\nr = list(map(f, filter(keep, [x, x + 1])))\nreturn r, log"),
    ("any_all_stop_on_first_decider", "log = []\ndef chk(i):\n    log.append(i)\n    return i > 1\nreturn x + any(chk(i) for i in range(5)), all(chk(i) for i in (3, 0, 5)), log"),
]
snippets("cpython/test_iter", "sem_iter_builtins", BUILTINS, namespace=NS)

ITERTOOLS = [
    ("chain_of_generators_and_tensors", "def g():\n    yield x\n    yield x * 2\nreturn list(itertools.chain(g(), [x * 3], (x * 4,)))"),
    ("chain_from_iterable_lazy", "gens = ([x * i] for i in range(3))\nreturn list(itertools.chain.from_iterable(gens))"),
    ("accumulate_with_initial_and_func", "return list(itertools.accumulate([x, x, x], operator.mul, initial=x + 1))"),
    ("accumulate_max_of_sizes", "sizes = [3, x.shape[0], 1, x.shape[0] + 2]\nreturn x, list(itertools.accumulate(sizes, max))"),
    ("groupby_consumes_previous_group", "data = [1, 1, 2, 2, 2, 1]\ngroups = itertools.groupby(data)\nk1, g1 = next(groups)\nk2, g2 = next(groups)\nreturn x + k2, list(g1), list(g2), [(k, len(list(g))) for k, g in groups]"),
    ("groupby_key_on_tensor_rank", "ts = [x, x * 2, x.view(-1, 1), x.view(1, -1), x]\nreturn [(k, len(list(g))) for k, g in itertools.groupby(ts, key=lambda t: t.dim())]"),
    ("islice_of_generator_then_resume", "def g():\n    for i in range(6):\n        yield x * i\nit = g()\nhead = list(itertools.islice(it, 1, 3))\nreturn head, next(it)"),
    ("islice_with_step_and_none", "return list(itertools.islice([x, x + 1, x + 2, x + 3, x + 4], None, None, 2))"),
    ("product_of_tensors_and_ints", "return [a * b for a, b in itertools.product([x, x * 2], [1, -1])]"),
    ("starmap_with_keywordless_torch_op", "return list(itertools.starmap(torch.mul, [(x, 2), (x, x)]))"),
    ("takewhile_dropwhile_on_sizes", "sizes = [1, 2, x.shape[0], 1]\nreturn x, list(itertools.takewhile(lambda v: v < 3, sizes)), list(itertools.dropwhile(lambda v: v < 3, sizes))"),
    ("tee_copies_advance_separately", "a, b = itertools.tee(iter([x, x * 2, x * 3]))\nfirst = next(a)\nreturn first, list(b), list(a)"),
    ("count_zip_with_tensor_rows", "return [r * i for i, r in zip(itertools.count(10, -2), x.view(-1, 1))]"),
    ("pairwise_over_cumulative", "cs = list(itertools.accumulate([x, x, x]))\nreturn [b - a for a, b in itertools.pairwise(cs)]"),
]
snippets("cpython/test_itertools", "sem_iter_itertools", ITERTOOLS, namespace=NS)


def scaled_sum(a, b, *, scale=1.0, shift=0.0):
    return (a + b) * scale + shift


NS["scaled_sum"] = scaled_sum

FUNCTOOLS = [
    ("reduce_with_initial_and_tensors", "return functools.reduce(lambda acc, t: acc * 2 + t, [x, x + 1, x + 2], x * 0)"),
    ("reduce_builds_dict", "def step(d, kv):\n    d[kv[0]] = d.get(kv[0], 0) + kv[1]\n    return d\nreturn functools.reduce(step, [('a', x), ('b', 1), ('a', x)], {})"),
    ("partial_keywords_overridden_at_call", "p = functools.partial(scaled_sum, scale=2.0, shift=1.0)\nreturn p(x, x), p(x, x, shift=-1.0), p.keywords, p.args"),
    ("partial_of_partial_merges", "p = functools.partial(scaled_sum, x)\nq = functools.partial(p, scale=3.0)\nreturn q(x), q.args[0] is x, q.func is scaled_sum, q.keywords"),
    ("partial_positional_and_kw_conflict", "p = functools.partial(scaled_sum, x, b=x)\nreturn p(x)"),
    ("wraps_keeps_metadata_and_wrapped", "def deco(fn):\n    @functools.wraps(fn)\n    def inner(*a, **k):\n        return fn(*a, **k) + 1\n    return inner\n@deco\ndef double(t):\n    'doubles'\n    return t * 2\nreturn double(x), double.__name__, double.__doc__, double.__wrapped__(x)"),
    ("lru_cache_made_inside_counts_hits", "calls = []\n@functools.lru_cache(maxsize=None)\ndef sq(n):\n    calls.append(n)\n    return n * n\nr = sq(3) + sq(3) + sq(x.shape[0])\nreturn x * r, calls"),
]
snippets("cpython/test_functools", "sem_iter_functools", FUNCTOOLS, namespace=NS)

EXCEPTIONS = [
    ("raise_from_sets_cause_and_suppress", "try:\n    try:\n        {}['k']\n    except KeyError as e:\n        raise ValueError('wrapped') from e\nexcept ValueError as v:\n    return x, type(v.__cause__).__name__, v.__suppress_context__, type(v.__context__).__name__"),
    ("raise_from_none_hides_context", "try:\n    try:\n        1 / 0\n    except ZeroDivisionError:\n        raise KeyError('k') from None\nexcept KeyError as k:\n    return x, k.__cause__, k.__suppress_context__, type(k.__context__).__name__"),
    ("context_set_by_raise_in_handler", "try:\n    try:\n        raise SizeError(x.shape[0], 2)\n    except SizeError as s:\n        s.note = 'seen'\n        raise RuntimeError('second')\nexcept RuntimeError as r:\n    c = r.__context__\n    return x * c.size, c.note, str(c), c.limit"),
    ("finally_return_overrides_return", "def f():\n    try:\n        return x\n    finally:\n        return x * 2\nreturn f()"),
    ("finally_return_swallows_raise", "def f():\n    try:\n        raise SizeError(1, 2)\n    finally:\n        return x - 1\nreturn f()"),
    ("exception_in_exit_replaces_body_error", "log = []\ntry:\n    with Recorded(log, fail_exit=True):\n        raise ValueError('body')\nexcept KeyError as k:\n    return x, log, type(k.__context__).__name__"),
    ("exit_swallows_then_code_continues", "log = []\nwith Recorded(log, swallow=True) as depth:\n    y = x * 2\n    raise ValueError\n    y = y * 100\nreturn y + depth, log"),
    ("bare_reraise_after_inner_handled", "try:\n    try:\n        raise SizeError(3, 1)\n    except SizeError:\n        try:\n            {}['missing']\n        except KeyError:\n            pass\n        raise\nexcept SizeError as s:\n    return x * s.size, str(s)"),
    ("custom_exception_str_and_args", "e = SizeError(x.shape[0], 3)\nreturn x, str(e), e.args, repr(e.size), isinstance(e, ValueError)"),
    ("exception_escapes_with_attributes", "raise SizeError(x.shape[0], 1)"),
    ("except_tuple_and_order", "out = []\nfor exc in (KeyError('a'), SizeError(1, 0), IndexError(2)):\n    try:\n        raise exc\n    except (IndexError, KeyError) as e:\n        out.append(type(e).__name__)\n    except ValueError as e:\n        out.append('value:' + str(e))\nreturn x, out"),
    ("handler_variable_cleared", "e = 5\ntry:\n    raise KeyError\nexcept KeyError as e:\n    pass\ntry:\n    e\nexcept NameError:\n    return x + 1\nreturn x"),
    ("raise_in_finally_chains_context", "try:\n    try:\n        raise KeyError('first')\n    finally:\n        raise ValueError('second')\nexcept ValueError as v:\n    return x, type(v.__context__).__name__"),
    ("exception_after_break_in_with", "log = []\ntry:\n    with Recorded(log):\n        y = x + 1\n        print('break')\n        raise SizeError(2, 1)\nexcept SizeError as s:\n    return y * s.size, log"),
    ("stopiteration_in_generator_becomes_runtimeerror", "def g():\n    yield x\n    next(iter([]))\ntry:\n    list(g())\nexcept RuntimeError as r:\n    return x, type(r.__cause__).__name__"),
    ("exception_group_subgroup", "eg = ExceptionGroup('many', [KeyError('a'), SizeError(2, 1), KeyError('b')])\nkeys = eg.subgroup(KeyError)\nrest = eg.split(KeyError)[1]\nreturn x + len(keys.exceptions), [str(e) for e in rest.exceptions]"),
]
snippets("cpython/test_exceptions", "sem_iter_exceptions", EXCEPTIONS, namespace=NS)

# itertools objects read their arguments an item at a time: what they leave of a shared
# iterator is still there afterwards, and their functions run when the consumer asks.
LAZY = [
    ("takewhile_leaves_rest_of_iterator", "it = iter([x, x * 2, x.view(1, -1), x, x * 2])\ntaken = list(itertools.takewhile(lambda t: t.dim() == 1, it))\nreturn taken, list(it)"),
    ("starmap_calls_when_consumed", "log = []\ndef f(a, b):\n    log.append(b)\n    return a * b\ns = itertools.starmap(f, [(x, 1), (x, 2)])\nn = len(log)\nfirst = next(s)\nreturn n, first, list(log)"),
    ("chain_starts_generator_when_reached", "log = []\ndef g():\n    log.append('g')\n    yield x * 2\nc = itertools.chain([x], g())\na = next(c)\nbefore = list(log)\nreturn a, before, list(c), log"),
    ("accumulate_leaves_rest_of_iterator", "it = iter([x, x * 2, x * 3, x * 4])\nacc = itertools.accumulate(it)\na = next(acc)\nb = next(acc)\nreturn a, b, list(it)"),
    ("groupby_reads_source_lazily", "it = iter([1, 1, 2, 3])\nk, g = next(itertools.groupby(it))\nreturn x * k, list(g), list(it)"),
    ("tee_reads_source_on_demand", "it = iter([x, x * 2, x * 3])\na, b = itertools.tee(it)\nfirst = next(a)\nreturn first, list(it), list(b), list(a)"),
    ("pairwise_dropwhile_compress_leave_rest", "a = iter([x, x * 2, x * 3, x * 4])\nnext(itertools.pairwise(a))\nb = iter([1, 5, 2, 3])\nd = next(itertools.dropwhile(lambda v: v < 3, b))\nc = iter([x, x + 1, x + 2])\ne = next(itertools.compress(c, [0, 1, 1]))\nreturn list(a), x * d, list(b), e, list(c)"),
    ("cycle_and_zip_longest_leave_rest", "a = iter([x, x * 2, x * 3])\nc = itertools.cycle(a)\nfirst = next(c)\nrest = list(a)\nb = iter([x, x + 1, x + 2])\nz = next(itertools.zip_longest(b, [1]))\nreturn first, rest, [next(c) for _ in range(3)], z, list(b)"),
]
snippets("cpython/test_itertools", "sem_iter_lazy", LAZY, namespace=NS)
