"""Cases modelled on dynamo's test_generator (recast in our own words): generators advanced by
next() (finite, infinite, over tensors), zipped with ranges, turned into list/tuple/dict/
OrderedDict, returned to the caller fresh, half consumed, exhausted or two at a time (what is
left of them is compared), sub-generators through `yield from` (their return value too), a
generator whose body mutates a dict, an object or a nonlocal before or after its first yield,
graph breaks inside the generator body, between next() calls and before it is made, send(),
throw() handled and not, close(), `in` on a generator, PEP 479 (StopIteration escaping a body
becomes RuntimeError), list.extend and deque.extendleft from generator expressions, and
generators passed in as arguments (fresh or already started)."""

import collections
import itertools

import torch

from . import snippets


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


def whoo(t):
    yield t + 1
    yield t + 2
    yield t + 3


def counting():
    i = 0
    while True:
        yield i
        i += 1


def subgen(t):
    yield t + 1
    yield t + 2


def main_gen(t):
    yield from subgen(t)
    yield t + 3


class Counter:
    def __init__(self):
        self.x = 0

    def incr(self):
        self.x += 1


NS = {"torch": torch, "brk": brk, "whoo": whoo, "counting": counting, "subgen": subgen, "main_gen": main_gen,
      "Counter": Counter, "itertools": itertools, "collections": collections}

GENERATORS = [
    ("next_three_times", "def g():\n    yield 1\n    yield 2\n    yield 3\ngen = g()\nt = t + next(gen)\nt = t + next(gen)\nreturn t + next(gen)"),
    ("infinite_next", "gen = counting()\nt = t + next(gen)\nt = t + next(gen)\nreturn t + next(gen)"),
    ("infinite_zip_range_tensors", "def g(t):\n    i = 0\n    while True:\n        yield t + i\n        i += 1\nreturn list(zip(range(3), g(t)))"),
    ("infinite_constant_zip", "def g(i):\n    while True:\n        yield i\nreturn list(zip(range(3), g(1))), t.sin()"),
    ("break_inside_generator_body", "def g():\n    yield 1\n    brk()\n    yield 2\ngen = g()\ns = next(gen)\ns += next(gen)\nreturn t + s"),
    ("break_inside_generator_of_tensors", "def g(x):\n    yield x.sin()\n    brk()\n    yield x.cos()\ndef call(x):\n    gen = g(x)\n    return next(gen), next(gen)\nsin, cos = call(t)\nreturn sin + cos"),
    ("returned_after_local_mutation", "def g(t):\n    x = 0\n    yield t.sin() + x\n    x += 1\n    yield t.cos() + x\n    x += 1\n    yield t.tan() + x\ngen = g(t)\nnext(gen)\nreturn t.sin(), gen"),
    ("returned_with_dict_mutation_after_yield", "d = {1: t}\ndef g(t, d):\n    d[2] = t\n    yield t.sin()\n    yield t.cos()\n    d[3] = t + 1\n    yield t.tan()\ngen = g(t, d)\nnext(gen)\nreturn t.sin(), g(t, d), d"),
    ("returned_with_dict_mutation_before_yield", "d = {1: t}\ndef g(t, d):\n    d[2] = t\n    yield t.sin()\n    yield t.cos()\n    yield t.tan()\ngen = g(t, d)\nnext(gen)\nreturn t.sin(), gen, d"),
    ("returned_with_object_mutation_after_yield", "c = Counter()\ndef g(t, c):\n    c.incr()\n    yield t.sin()\n    yield t.cos()\n    c.incr()\n    yield t.tan()\ngen = g(t, c)\nnext(gen)\nreturn t.sin(), gen, c"),
    ("returned_with_object_mutation_before_yield", "c = Counter()\ndef g(t, c):\n    c.incr()\n    yield t.sin()\n    yield t.cos()\ngen = g(t, c)\nnext(gen)\nreturn t.sin(), gen, c.x"),
    ("break_then_rest_of_generator", "def g2(t):\n    brk()\ngen = whoo(t)\nnext(gen)\ng2(t)\nreturn t.sin(), list(gen)"),
    ("break_between_next_calls", "def g():\n    yield 1\n    brk()\n    yield 2\ngen = g()\ns = next(gen)\nbrk()\ns += next(gen)\nreturn t + s"),
    ("islice_chain_of_lists", "tmp1 = [t + 1, t + 2]\ntmp2 = [t + 3, t + 4]\nreturn list(itertools.chain(tmp1, tmp2))"),
    ("zip_generator_returned", "return zip(range(3), whoo(t)), t.sin()"),
    ("zip_subgenerator_returned", "return zip(range(3), main_gen(t)), t.sin()"),
    ("list_zip_generator", "return list(zip(range(3), whoo(t)))"),
    ("list_of_pairs_generator", "def g(t):\n    yield 1, t + 1\n    yield 2, t + 2\nreturn list(g(t))"),
    ("tuple_of_pairs_generator", "def g(t):\n    yield 1, t + 1\n    yield 2, t + 2\nreturn tuple(g(t))"),
    ("dict_of_pairs_generator", "def g(t):\n    yield 1, t + 1\n    yield 2, t + 2\n    yield 1, t + 3\nreturn dict(g(t))"),
    ("ordered_dict_of_pairs_generator", "def g(t):\n    yield 'b', t + 1\n    yield 'a', t + 2\nreturn collections.OrderedDict(g(t))"),
    ("return_fresh_generator", "return whoo(t)"),
    ("return_two_generators", "g1, g2 = whoo(t), whoo(t + 1)\nreturn (g1, g2), t.sin()"),
    ("return_advanced_generator", "gen = whoo(t)\nnext(gen)\nreturn gen"),
    ("return_exhausted_generator", "def g(t):\n    yield t + 1\ngen = g(t)\nnext(gen)\nreturn gen"),
    ("subgenerator_listed", "return list(main_gen(t))"),
    ("return_advanced_subgenerator", "gen = main_gen(t)\nnext(gen)\nreturn gen"),
    ("return_subgenerator_inside_delegation", "gen = main_gen(t)\nnext(gen)\nnext(gen)\nreturn gen, t * 2"),
    ("break_outside_generator", "gen = whoo(t)\nx = next(gen)\nbrk()\ny = next(gen)\nreturn x + y"),
    ("product_over_generator", "def g(t):\n    for perm in itertools.product(itertools.permutations((0, 1, 2)), repeat=1):\n        yield sum(perm[0])\ns = 0\nfor b, p in itertools.product(g(t), itertools.permutations((4, 5))):\n    s += b\nreturn t + s"),
    ("nonlocal_side_effects_returned", "i = 0\ndef g(t):\n    nonlocal i\n    for j in range(5):\n        i += 1\n        yield t + j\ngen = g(t)\nreturn gen, t.sin(), i"),
    ("nonlocal_side_effects_consumed_here", "i = 0\ndef g(t):\n    nonlocal i\n    for j in range(5):\n        i += 1\n        yield t + j\nr = list(zip(range(3), g(t)))\nreturn r, i"),
    ("nonlocal_subgenerator_side_effects", "i = 0\ndef sub(t):\n    nonlocal i\n    i += 1\n    yield t\n    i += 1\n    yield t + 1\ndef g(t):\n    nonlocal i\n    yield from sub(t)\n    i += 1\n    yield t + 2\ngen = g(t)\nnext(gen)\nreturn gen, i"),
    ("side_effects_with_break_then_next", "i = 0\ndef g(t):\n    nonlocal i\n    for j in range(5):\n        i += 1\n        yield t + j\ngen = g(t)\nbrk()\nnext(gen)\nreturn gen, t.sin(), i"),
    ("side_effects_break_inside_body", "i = 0\ndef g(t):\n    nonlocal i\n    for j in range(5):\n        i += 1\n        yield t + j\n        brk()\nreturn list(zip(range(3), g(t))), i"),
    ("iterate_infinite_with_break", "s = 0\nfor i in counting():\n    if i > 5:\n        break\n    s += i\nreturn t + s"),
    ("list_extend_generator_expression", "y = [1]\ny.extend(y[-1] + z for z in range(3))\nreturn t + 1, y"),
    ("deque_extendleft_generator_expression", "y = collections.deque([1])\ny.extendleft(y[0] + z for z in range(3))\nreturn t + 1, list(y)"),
    ("contains_consumes", "def g():\n    yield 1\n    yield 2\ngen = g()\na = 1 in gen\nb = 2 in gen\nc = next(gen, 'done')\nreturn t, a, b, c, 3 in g()"),
    ("contains_side_effects", "n = 0\ndef g():\n    nonlocal n\n    n = 1\n    yield 1\n    n = 2\n    yield 2\ngen = g()\na = 1 in gen\nn1 = n\nb = 2 in gen\nreturn t, a, n1, b, n"),
    ("pep479_stopiteration_in_body", "def g():\n    yield t + 1\n    raise StopIteration('boom')\ngen = g()\nnext(gen)\ntry:\n    next(gen)\nexcept RuntimeError as e:\n    return t + 1.0, str(e)\nexcept StopIteration:\n    return t + 2.0\nreturn t"),
    ("pep479_inner_next_leaks", "def inner():\n    yield t + 1\ndef g():\n    it = inner()\n    while True:\n        yield next(it)\ngen = g()\nnext(gen)\ntry:\n    next(gen)\nexcept RuntimeError:\n    return t + 1.0\nexcept StopIteration:\n    return t + 2.0\nreturn t"),
    ("pep479_first_next_message", "def g():\n    raise StopIteration\n    yield\ntry:\n    next(g())\nexcept RuntimeError as e:\n    return t, str(e)"),
    ("send_value_doubled", "def double():\n    x = yield\n    yield x * 2\ngen = double()\nnext(gen)\nreturn gen.send(t)"),
    ("send_past_end_raises", "def double():\n    x = yield\n    yield x * 2\ngen = double()\nnext(gen)\na = gen.send(t)\nb = gen.send(t)\nreturn a + b"),
    ("yield_from_return_value", "def sub(t):\n    yield t.sin()\n    return t.cos()\ndef outer(t):\n    r = yield from sub(t)\n    yield r\nreturn list(outer(t))"),
    ("throw_into_yield_from_caught_returns", "def nested():\n    try:\n        yield 1\n        yield 2\n    except ValueError:\n        return 123\ndef outer():\n    r = yield from nested()\n    yield r\ngen = outer()\nnext(gen)\nreturn gen.throw(ValueError('stop')), t.sin()"),
    ("throw_stopiteration_into_delegating", "def nested():\n    try:\n        yield 1\n        yield 2\n    except StopIteration:\n        return 123\ndef outer():\n    yield from nested()\n    yield 3\ngen = outer()\nnext(gen)\ni = 0\ntry:\n    i = gen.throw(StopIteration('stop'))\nexcept RuntimeError:\n    pass\nreturn i, t.sin()"),
    ("throw_uncaught_into_delegating", "def nested():\n    yield 1\n    yield 2\ndef outer():\n    yield from nested()\n    yield 3\ngen = outer()\nnext(gen)\ngen.throw(StopIteration())\nreturn t.sin()"),
    ("close_runs_finally_in_subgenerator", "log = []\ndef nested():\n    try:\n        yield 1\n    finally:\n        log.append('nested')\ndef outer():\n    try:\n        yield from nested()\n    finally:\n        log.append('outer')\ngen = outer()\nnext(gen)\ngen.close()\nreturn t, log"),
    ("generator_argument_fresh", "return t + next(g)", {"params": "t, g", "make_args": lambda n: (torch.randn(n), whoo(torch.ones(n)))}),
    ("generator_argument_started", "return t + next(g)", {"params": "t, g", "make_args": lambda n: (lambda gen: (next(gen), (torch.randn(n), gen))[1])(whoo(torch.ones(n)))}),
    ("generator_argument_counting_started", "return t + next(g), next(g)", {"params": "t, g", "make_args": lambda n: (lambda gen: (next(gen), (torch.randn(n), gen))[1])(counting())}),
    ("generator_expression_over_input_returned", "return (v * 2 for v in t.unbind())"),
    ("map_and_filter_iterators_returned", "return map(lambda v: v + 1, t.unbind()), filter(lambda v: v > 0, t.tolist())"),
    ("iterator_of_list_half_used_returned", "it = iter([t, t + 1, t + 2])\nnext(it)\nreturn it"),
    ("enumerate_returned_half_used", "e = enumerate(t.unbind(), 10)\nnext(e)\nreturn e"),
]
snippets("dynamo/test_generator", "generator2", GENERATORS, namespace=NS, params="t")
