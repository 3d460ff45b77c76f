"""Generators, context managers and itertools as CPython's test_generators, test_generator_stop,
test_contextlib, test_with and test_itertools check them (recast in our own words; dynamo's
cpython/3_13 port of these files guided the choice), each carrying tensors: a generator's
state (gi_running, gi_suspended, gi_frame after it ends), close() running finally once and
raising RuntimeError when the generator yields again, throw() with a class or an instance,
send() to a fresh generator, `yield from` forwarding throw/close to the inner generator and
returning its value, return values in StopIteration, generator expressions binding their
first iterable early, PEP 479; `with` evaluation order (__enter__ before the body, __exit__
given the exception and its identity, exit result truthiness), several managers in one
statement unwinding in reverse, a manager whose __exit__ raises, contextmanager generators
that do not yield or yield twice, nullcontext's value, suppress of a tuple, ExitStack callbacks
in LIFO order and exceptions replaced inside it, closing(); itertools' laziness and results on
tensors (chain.from_iterable, islice with steps, takewhile/dropwhile, compress, zip_longest,
pairwise, batched, starmap, filterfalse, accumulate with initial, product with repeat,
permutations, combinations_with_replacement, count with float steps, repeat with times)."""

import contextlib
import itertools

import torch

from . import snippets


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


class Recorder:
    """A context manager that records __enter__/__exit__ and what __exit__ was given."""

    def __init__(self, log, name, suppress=False):
        self.log, self.name, self.suppress = log, name, suppress

    def __enter__(self):
        self.log.append(("enter", self.name))
        return self.name

    def __exit__(self, t, v, tb):
        self.log.append(("exit", self.name, t.__name__ if t else None))
        return self.suppress


NS = {"torch": torch, "brk": brk, "contextlib": contextlib, "itertools": itertools, "Recorder": Recorder}

GENERATORS = [
    ("gi_state_through_life", "def g():\n    yield x\ngen = g()\ns = [gen.gi_suspended, gen.gi_running]\nnext(gen)\ns.append(gen.gi_suspended)\nlist(gen)\ns.append(gen.gi_frame is None)\nreturn x, s"),
    ("close_runs_finally_once", "log = []\ndef g():\n    try:\n        yield x\n        yield x + 1\n    finally:\n        log.append('finally')\ngen = g()\nnext(gen)\ngen.close()\ngen.close()\nreturn x, log"),
    ("close_generator_yields_again", "def g():\n    try:\n        yield 1\n    except GeneratorExit:\n        yield 2\ngen = g()\nnext(gen)\ntry:\n    gen.close()\nexcept RuntimeError as e:\n    return x, str(e)"),
    ("close_returns_value", "def g():\n    try:\n        yield 1\n    except GeneratorExit:\n        return 5\ngen = g()\nnext(gen)\nreturn x, gen.close()"),
    ("close_unstarted_skips_finally", "log = []\ndef g():\n    try:\n        yield 1\n    finally:\n        log.append('f')\ngen = g()\ngen.close()\nreturn x, log"),
    ("throw_class_and_instance", "def g():\n    while True:\n        try:\n            yield\n        except ValueError as e:\n            yield ('caught', e.args)\ngen = g()\nnext(gen)\na = gen.throw(ValueError)\nnext(gen)\nb = gen.throw(ValueError('v', x.shape[0]))\nreturn x, a, b"),
    ("throw_unhandled_finishes", "def g():\n    yield x\n    yield x + 1\ngen = g()\nnext(gen)\ntry:\n    gen.throw(KeyError('k'))\nexcept KeyError as e:\n    r = e.args\nreturn r, list(gen)"),
    ("throw_into_unstarted", "def g():\n    try:\n        yield 1\n    except KeyError:\n        yield 'handled'\ngen = g()\ntry:\n    gen.throw(KeyError)\nexcept KeyError:\n    return x, 'raised at start', list(gen)"),
    ("send_non_none_to_fresh", "def g():\n    yield 1\ntry:\n    g().send(5)\nexcept TypeError as e:\n    return x, str(e)"),
    ("send_accumulates", "def g():\n    total = x * 0\n    while True:\n        v = yield total\n        if v is None:\n            return total\n        total = total + v\ngen = g()\nnext(gen)\ngen.send(x)\ngen.send(x * 2)\ntry:\n    gen.send(None)\nexcept StopIteration as e:\n    return e.value"),
    ("yield_from_returns_value", "def inner():\n    yield x\n    return 'inner done'\ndef outer():\n    r = yield from inner()\n    yield r\nreturn list(outer())"),
    ("yield_from_forwards_throw", "log = []\ndef inner():\n    try:\n        yield 1\n    except KeyError:\n        log.append('inner caught')\n        yield 2\ndef outer():\n    yield from inner()\n    yield 3\ngen = outer()\nnext(gen)\nr = gen.throw(KeyError)\nreturn x, r, list(gen), log"),
    ("yield_from_forwards_close", "log = []\ndef inner():\n    try:\n        yield 1\n    finally:\n        log.append('inner closed')\ndef outer():\n    try:\n        yield from inner()\n    finally:\n        log.append('outer closed')\ngen = outer()\nnext(gen)\ngen.close()\nreturn x, log"),
    ("yield_from_list_and_send_error", "def outer():\n    yield from [x, x + 1]\ngen = outer()\nnext(gen)\ntry:\n    gen.send(5)\nexcept AttributeError:\n    return x, 'list iterator has no send'"),
    ("return_value_in_stopiteration", "def g():\n    yield 1\n    return x * 2\ngen = g()\nnext(gen)\ntry:\n    next(gen)\nexcept StopIteration as e:\n    return e.value, e.args[0] is e.value"),
    ("pep479_stopiteration_in_body", "def g():\n    yield 1\n    raise StopIteration('inside')\ntry:\n    list(g())\nexcept RuntimeError as e:\n    return x, str(e), type(e.__cause__).__name__"),
    ("pep479_next_on_exhausted_inside", "def g():\n    it = iter([])\n    yield next(it)\ntry:\n    list(g())\nexcept RuntimeError as e:\n    return x, 'runtime error'"),
    ("genexpr_first_iterable_bound_early", "l = [x, x + 1]\ng = (t * 2 for t in l)\nl = [x * 100]\nreturn list(g)"),
    ("genexpr_inner_iterable_late", "ys = [1, 2]\ng = ((a, b) for a in range(2) for b in ys)\nys = [9]\nreturn x, list(g)"),
    ("generator_running_error", "def g():\n    yield next(gen)\ngen = g()\ntry:\n    next(gen)\nexcept ValueError as e:\n    return x, str(e)"),
    ("generator_local_state_between_nexts", "def g():\n    acc = []\n    for t in (x, x * 2, x * 3):\n        acc.append(t)\n        yield len(acc)\n    yield acc\ngen = g()\nfirst = [next(gen), next(gen)]\nrest = list(gen)\nreturn first, rest"),
    ("generator_across_break", "def g():\n    for i in range(3):\n        yield x * i\ngen = g()\na = next(gen)\nbrk()\nb = next(gen)\nreturn a, b, list(gen)"),
]
snippets("cpython/test_generators", "gens3", GENERATORS, namespace=NS)

WITHS = [
    ("with_order_and_value", "log = []\nwith Recorder(log, 'a') as name:\n    log.append(('body', name))\n    y = x + 1\nreturn y, log"),
    ("with_multiple_unwind_reverse", "log = []\nwith Recorder(log, 'a'), Recorder(log, 'b'):\n    log.append('body')\nreturn x, log"),
    ("with_multiple_inner_suppresses", "log = []\nwith Recorder(log, 'outer'), Recorder(log, 'inner', suppress=True):\n    raise KeyError('k')\nreturn x, log"),
    ("with_exit_sees_exception_identity", "seen = []\nclass CM:\n    def __enter__(self):\n        return self\n    def __exit__(self, t, v, tb):\n        seen.append(v)\n        return True\nerr = ValueError('v')\nwith CM():\n    raise err\nreturn x, seen[0] is err"),
    ("with_exit_truthy_non_bool", "class CM:\n    def __enter__(self):\n        return self\n    def __exit__(self, *a):\n        return [0]\nwith CM():\n    raise KeyError\nreturn x, 'suppressed'"),
    ("with_exit_falsy_non_bool", "class CM:\n    def __enter__(self):\n        return self\n    def __exit__(self, *a):\n        return ''\ntry:\n    with CM():\n        raise KeyError('k')\nexcept KeyError:\n    return x, 'propagated'"),
    ("with_exit_raises_replaces", "class CM:\n    def __enter__(self):\n        return self\n    def __exit__(self, *a):\n        raise IndexError('exit')\ntry:\n    with CM():\n        raise KeyError('body')\nexcept IndexError as e:\n    return x, str(e), type(e.__context__).__name__"),
    ("with_enter_raises_no_exit", "log = []\nclass CM:\n    def __enter__(self):\n        raise KeyError('enter')\n    def __exit__(self, *a):\n        log.append('exit')\ntry:\n    with CM():\n        log.append('body')\nexcept KeyError:\n    return x, log"),
    ("with_missing_exit_typeerror", "class CM:\n    def __enter__(self):\n        return self\ntry:\n    with CM():\n        pass\nexcept TypeError as e:\n    return x, 'context manager protocol' in str(e)"),
    ("with_return_from_body_runs_exit", "log = []\ndef inner():\n    with Recorder(log, 'a'):\n        return x * 2\nreturn inner(), log"),
    ("with_break_continue_in_loop", "log = []\nfor i in range(3):\n    with Recorder(log, i):\n        if i == 0:\n            continue\n        if i == 1:\n            break\nreturn x, log"),
    ("with_target_unpacking", "class CM:\n    def __enter__(self):\n        return (x, x + 1)\n    def __exit__(self, *a):\n        return False\nwith CM() as (a, b):\n    r = a + b\nreturn r"),
    ("with_target_attribute_and_item", "class O:\n    pass\no = O()\nd = {}\nwith contextlib.nullcontext(x) as o.attr:\n    pass\nwith contextlib.nullcontext(x + 1) as d['k']:\n    pass\nreturn o.attr, d"),
]
snippets("cpython/test_with", "with3", WITHS, namespace=NS)

CONTEXTLIB = [
    ("contextmanager_no_yield", "@contextlib.contextmanager\ndef cm():\n    if False:\n        yield\ntry:\n    with cm():\n        pass\nexcept RuntimeError as e:\n    return x, str(e)"),
    ("contextmanager_yields_twice", "@contextlib.contextmanager\ndef cm():\n    yield 1\n    yield 2\ntry:\n    with cm():\n        y = x + 1\nexcept RuntimeError as e:\n    return y, str(e)"),
    ("contextmanager_suppresses_by_catching", "log = []\n@contextlib.contextmanager\ndef cm():\n    try:\n        yield x * 2\n    except KeyError as e:\n        log.append(e.args)\nwith cm() as v:\n    y = v + 1\n    raise KeyError('k')\nreturn y, log"),
    ("contextmanager_reraises_same", "@contextlib.contextmanager\ndef cm():\n    try:\n        yield\n    except KeyError:\n        raise\nerr = KeyError('k')\ntry:\n    with cm():\n        raise err\nexcept KeyError as e:\n    return x, e is err"),
    ("contextmanager_translates", "@contextlib.contextmanager\ndef cm():\n    try:\n        yield\n    except KeyError as e:\n        raise ValueError('translated') from e\ntry:\n    with cm():\n        raise KeyError('k')\nexcept ValueError as e:\n    return x, str(e), type(e.__cause__).__name__"),
    ("contextmanager_stopiteration_in_body", "@contextlib.contextmanager\ndef cm():\n    yield\ntry:\n    with cm():\n        raise StopIteration('body')\nexcept StopIteration as e:\n    return x, 'stop iteration kept', e.args"),
    ("contextmanager_as_decorator_fresh", "log = []\n@contextlib.contextmanager\ndef cm():\n    log.append('in')\n    yield\n    log.append('out')\n@cm()\ndef work(t):\n    log.append('work')\n    return t * 2\nreturn work(x), work(x + 1), log"),
    ("nullcontext_value", "with contextlib.nullcontext(x) as v:\n    r = v is x\nwith contextlib.nullcontext() as w:\n    pass\nreturn x, r, w"),
    ("suppress_tuple_and_subclass", "with contextlib.suppress(KeyError, IndexError):\n    [][1]\nwith contextlib.suppress(LookupError):\n    {}['a']\ntry:\n    with contextlib.suppress(KeyError):\n        raise ValueError('v')\nexcept ValueError:\n    return x, 'not suppressed'"),
    ("exitstack_lifo_callbacks", "log = []\nwith contextlib.ExitStack() as stack:\n    for i in range(3):\n        stack.callback(log.append, i)\n    log.append('body')\nreturn x, log"),
    ("exitstack_enter_context_values", "log = []\nwith contextlib.ExitStack() as stack:\n    names = [stack.enter_context(Recorder(log, n)) for n in 'ab']\nreturn x, names, log"),
    ("exitstack_exception_replaced", "def bad():\n    raise IndexError('from callback')\ntry:\n    with contextlib.ExitStack() as stack:\n        stack.callback(bad)\n        raise KeyError('body')\nexcept IndexError as e:\n    return x, type(e.__context__).__name__"),
    ("exitstack_pop_all_transfers", "log = []\nwith contextlib.ExitStack() as stack:\n    stack.callback(log.append, 'cb')\n    moved = stack.pop_all()\nlog.append('after with')\nmoved.close()\nreturn x, log"),
    ("closing_calls_close", "class Res:\n    def __init__(self):\n        self.closed = False\n    def close(self):\n        self.closed = True\nr = Res()\nwith contextlib.closing(r) as same:\n    inside = same is r\nreturn x, inside, r.closed"),
    ("redirect_stdout_to_buffer", "import io\nbuf = io.StringIO()\nwith contextlib.redirect_stdout(buf):\n    print('size', x.shape[0])\nreturn x, buf.getvalue()"),
]
snippets("cpython/test_contextlib", "ctxlib3", CONTEXTLIB, namespace=NS)

ITERTOOLS = [
    ("chain_from_iterable_lazy", "log = []\ndef parts():\n    for i in range(3):\n        log.append(i)\n        yield [x * i]\nc = itertools.chain.from_iterable(parts())\nfirst = next(c)\nreturn first, log"),
    ("islice_steps_and_stop", "return x, list(itertools.islice(range(20), 2, x.shape[0] * 2, 3)), list(itertools.islice('abcdef', 2))"),
    ("islice_consumes_source", "it = iter(range(10))\na = list(itertools.islice(it, 3))\nreturn x, a, next(it)"),
    ("takewhile_dropwhile_consumption", "it = iter([1, 2, 5, 1, 2])\na = list(itertools.takewhile(lambda v: v < 3, it))\nreturn x, a, list(it), list(itertools.dropwhile(lambda v: v < 3, [1, 2, 5, 1]))"),
    ("compress_and_filterfalse", "return x, list(itertools.compress('abcd', [1, 0, 1, 0])), list(itertools.filterfalse(lambda v: v % 2, range(x.shape[0])))"),
    ("zip_longest_fill", "return list(itertools.zip_longest([x, x + 1], [x * 2], fillvalue=None))"),
    ("pairwise_tensors", "ts = [x * i for i in range(4)]\nreturn [b - a for a, b in itertools.pairwise(ts)]"),
    ("batched_sizes", "return x, list(itertools.batched(range(x.shape[0] + 3), 3))"),
    ("starmap_pow", "return x, list(itertools.starmap(pow, [(2, 3), (x.shape[0], 2)]))"),
    ("accumulate_initial_and_func", "return x, list(itertools.accumulate([1, 2, 3], initial=10)), list(itertools.accumulate([3, 1, 4, 1], max))"),
    ("accumulate_tensors", "return list(itertools.accumulate([x, x * 2, x * 3], lambda a, b: a * 0.5 + b))"),
    ("product_repeat", "return x, list(itertools.product('ab', repeat=2)), len(list(itertools.product(range(x.shape[0]), range(2))))"),
    ("permutations_combinations", "return x, list(itertools.permutations(range(3), 2)), list(itertools.combinations_with_replacement('ab', 2)), len(list(itertools.combinations(range(x.shape[0]), 2)))"),
    ("count_float_step", "c = itertools.count(0.5, 0.25)\nreturn x, [next(c) for _ in range(4)]"),
    ("repeat_times_and_zip", "return list(zip(itertools.repeat(x, 2), range(5)))"),
    ("cycle_with_islice", "return x, list(itertools.islice(itertools.cycle('ab'), x.shape[0]))"),
    ("groupby_consumes_groups", "groups = itertools.groupby('aabbbc')\nk1, g1 = next(groups)\nk2, g2 = next(groups)\nreturn x, k1, list(g1), k2, list(g2)"),
    ("tee_independent", "a, b = itertools.tee(iter([x, x + 1, x + 2]))\nfirst = next(a)\nreturn first, list(b), list(a)"),
]
snippets("cpython/test_itertools", "itertools3", ITERTOOLS, namespace=NS)
