"""The semantics the other *_upstream2 files check, with a graph break in the middle (dynamo's
test_subgraphs and test_misc "graph break" variants, recast in our own words): a reversed() or
exhausted list iterator, partial keywords, dict views, an exception's __context__, suspended and
thrown-into generators, set order, a bounded deque, nonlocal cells, list.extend from a generator
that breaks, dicts compared after a break, values that contain themselves, loop closures, module
globals stored on both sides, with/try/for/while blocks around the break."""

import torch

from . import snippets


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


CASES = [
    ("reversed_iter_across_break", "l = [1, 2, 3]\nr = reversed(l)\nnext(r)\nbrk()\nl[0] = 9\nreturn x, list(r)"),
    ("exhausted_iter_across_break", "l = [1]\nit = iter(l)\nlist(it)\nbrk()\nl.append(2)\nreturn x, list(it)"),
    ("partial_keywords_across_break", "import functools\np = functools.partial(lambda a, b=1: a * b, b=2)\np.keywords['b'] = 5\nbrk()\nreturn p(x), p.keywords"),
    ("dict_view_across_break", "d = {'a': 1}\nv = d.values()\nbrk()\nd['b'] = 2\nreturn x, list(v)"),
    ("exception_context_across_break", "try:\n    try:\n        raise KeyError('a')\n    except KeyError:\n        brk()\n        raise ValueError('b')\nexcept ValueError as e:\n    return x, type(e.__context__).__name__"),
    ("generator_suspended_across_break", "def g():\n    for i in range(4):\n        yield x * i\ngen = g()\nnext(gen)\nbrk()\nreturn list(gen)"),
    ("generator_thrown_then_break", "def g():\n    try:\n        yield 1\n    except ValueError:\n        yield 2\n    yield 3\ngen = g()\nnext(gen)\na = gen.throw(ValueError)\nbrk()\nreturn x, a, list(gen)"),
    ("set_order_across_break", "s = {5, 1, 3}\ns.add(2)\nbrk()\ns.discard(5)\nreturn x, list(s)"),
    ("deque_maxlen_across_break", "import collections\nq = collections.deque([1, 2], maxlen=3)\nq.append(3)\nbrk()\nq.append(4)\nreturn x, list(q), q.maxlen"),
    ("nonlocal_written_both_sides", "n = 1\ndef bump():\n    nonlocal n\n    n *= 2\nbump()\nbrk()\nbump()\nreturn x * n, n"),
    ("list_extend_generator_with_break", "def gen(y):\n    for i in range(3):\n        brk()\n        yield y[-1] + i\ny = [1]\ny.extend(gen(y))\nreturn x, y"),
    ("dict_eq_across_break", "o = object()\nd1 = {'a': o, 't': x}\nd2 = dict(d1)\nbrk()\nreturn d1 == d2, d1 is d2"),
    ("object_self_cycle_across_break", "class O:\n    pass\no = O()\no.me = o\no.t = x\nbrk()\nreturn o.me is o, o.t + 1"),
    ("list_self_cycle_across_break", "l = [x]\nl.append(l)\nbrk()\nreturn l[1] is l, len(l)"),
    ("closure_cell_of_loop_var_across_break", "fs = []\nfor i in range(3):\n    fs.append(lambda: i)\nbrk()\nreturn x, [f() for f in fs]"),
    ("walrus_and_break_in_comprehension", "out = [(y := x * i) for i in range(3)]\nbrk()\nreturn out, y"),
    ("module_global_store_then_break_then_read", "import types\nm = types.ModuleType('mb')\nexec('g = 1\\ndef bump():\\n    global g\\n    g += 1', m.__dict__)\nm.bump()\nbrk()\nm.bump()\nreturn x + m.g, vars(m)['g']"),
    ("with_block_break_and_exception", "log = []\nclass S:\n    def __enter__(self):\n        log.append('in')\n    def __exit__(self, t, v, tb):\n        log.append(t.__name__ if t else None)\n        return True\nwith S():\n    brk()\n    raise KeyError('k')\nreturn x, log"),
    ("try_finally_break_in_try", "log = []\ntry:\n    brk()\n    y = x * 2\nfinally:\n    log.append('f')\nreturn y, log"),
    ("for_else_with_break", "for i in range(3):\n    brk()\n    if i == 5:\n        break\nelse:\n    return x, 'no break', i\nreturn x, 'broke'"),
    ("while_loop_with_break_and_continue", "i = 0\nout = []\nwhile i < 5:\n    i += 1\n    if i % 2:\n        continue\n    brk()\n    out.append(i)\nreturn x, out"),
]
snippets("dynamo/test_subgraphs", "breaks2", CASES, namespace={"torch": torch, "brk": brk})

# A callee that breaks its graph and then raises, caught by its caller, which runs natively
# with its call sites routed to compiled callees (its value stack held a tuple being built).
RAISING = [
    ("callee_breaks_raises_caught_tuple_build", "def inner():\n    brk()\n    raise NameError('boom')\ntry:\n    inner()\nexcept NameError as e:\n    return x - 1, str(e), (1, 2, (3, 4))\nreturn x"),
    ("callee_breaks_raises_in_call_args", "def inner():\n    brk()\n    raise KeyError('k')\ndef two(a, b, c):\n    return a\ntry:\n    r = two(x, x * 2, inner())\nexcept KeyError:\n    r = (x, [x, x], {'a': x})\nreturn r"),
    ("callee_breaks_raises_finally_runs", "log = []\ndef inner():\n    brk()\n    raise ValueError('v')\ntry:\n    try:\n        inner()\n    finally:\n        log.append(('finally', 1, 2, 3))\nexcept ValueError:\n    log.append('caught')\nreturn x, log"),
    ("callee_breaks_raises_inside_with", "import contextlib\nlog = []\n@contextlib.contextmanager\ndef cm():\n    try:\n        yield\n    finally:\n        log.append('exit')\ndef inner():\n    brk()\n    raise ValueError('v')\ntry:\n    with cm():\n        inner()\nexcept ValueError as e:\n    log.append((str(e), len(log), [1, 2, 3]))\nreturn x, log"),
    ("callee_breaks_raises_in_loop", "def inner(i):\n    brk()\n    if i % 2:\n        raise KeyError(i)\n    return i\nout = []\nfor i in range(4):\n    try:\n        out.append(inner(i))\n    except KeyError as e:\n        out.append(('odd', e.args[0], [i, i]))\nreturn x, out"),
    ("callee_breaks_returns_deep_stack", "def inner(t):\n    brk()\n    return t * 2\nreturn [x, (x, [x, {'k': inner(x)}])]"),
    ("method_breaks_raises_caught", "class C:\n    def m(self):\n        brk()\n        raise IndexError('i')\ntry:\n    C().m()\nexcept IndexError as e:\n    return x, (str(e), type(e).__name__, 1.5)"),
    ("nested_callees_break_raise_reraise", "def a():\n    brk()\n    raise KeyError('a')\ndef b():\n    try:\n        a()\n    except KeyError:\n        brk()\n        raise ValueError('b')\ntry:\n    b()\nexcept ValueError as e:\n    return x, str(e), type(e.__context__).__name__, (1, (2, 3))"),
]
snippets("dynamo/test_subgraphs", "breaks2_raise", RAISING, namespace={"torch": torch, "brk": brk})
