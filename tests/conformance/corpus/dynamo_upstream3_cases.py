"""Cases modelled on dynamo test files not ported before (recast in our own words): test_nops
(a closure bumped through nonlocal in a loop, a module-level constant, a generator handed
back, a long `a + b + ...` chain on both sides of a tensor-valued condition), test_unspec
(Python scalars passed in and changing between calls: used as factors, in ranges, in
comparisons that pick a branch, rounded, converted; random-module draws mixed with tensors),
test_sets (sets of ints and strings built, mutated and returned, set comprehensions, sets
passed in), test_ctx_manager (grad mode, default dtype and user managers around breaks and
exceptions, state seen inside) and test_decorators (compiler.disable-style native callees
that mutate what the compiled code reads next), and test_dynamic_shapes-style Python over
sizes (slicing bounds, list lengths and reshape arguments computed from sizes)."""

import contextlib
import functools
import random

import torch

from . import snippets

C = 10


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


@torch.compiler.disable
def native_append(log, value):
    log.append(value)
    return len(log)


NS = {"torch": torch, "brk": brk, "C": C, "contextlib": contextlib, "functools": functools,
      "random": random, "native_append": native_append}

NOPS = [
    ("nonlocal_bumped_in_loop", "acc = x * 0\nn = 1\ndef modify():\n    nonlocal acc\n    acc = acc + x + C\nfor _ in range(2):\n    modify()\nreturn acc + n"),
    ("module_constant_arith", "return x + 2 - C, C // 3"),
    ("generator_returned_unstarted", "def gen():\n    yield x\n    yield x * 2\nreturn gen()"),
    ("generator_returned_half_consumed", "def gen():\n    yield x\n    yield x * 2\n    yield x * 3\ng = gen()\nnext(g)\nreturn g"),
    ("long_chain_both_branches", "a, b = x, x * 2\nif x.sum() > 0:\n    return " + "+".join(["a", "b"] * 40) + " + a\nreturn " + "+".join(["a", "b"] * 40) + " - b"),
]
snippets("dynamo/test_nops", "nops3", NOPS, namespace=NS)


def vec_and_scalar(n):
    return torch.randn(n), random.choice([0.5, 2, 3, -1.5, 7])


UNSPEC = [
    ("scalar_factor", "return x * s, s * 2"),
    ("scalar_picks_branch", "if s > 1:\n    return x * s\nreturn x - s"),
    ("scalar_in_range", "return x, [i * s for i in range(3)]"),
    ("scalar_rounded_and_int", "return x * round(s), int(s), round(s, 1)"),
    ("scalar_type_reported", "return x, type(s).__name__, isinstance(s, int)"),
    ("scalar_as_tensor", "return x + torch.tensor(s), torch.tensor(s).dtype"),
    ("scalar_in_fstring", "return x, f'{s:.2f}', str(s)"),
    ("scalar_pow_and_abs", "return x * abs(s) ** 2, (-s) ** 2"),
    ("scalar_compared_with_size", "return x, s < x.shape[0], max(s, x.shape[0])"),
    ("scalar_in_list_stored", "l = [s]\nl.append(s * 2)\nreturn x * sum(l), l"),
]
snippets("dynamo/test_unspec", "unspec3", UNSPEC, namespace=NS, params="x, s", make_args=vec_and_scalar)

RANDOMS = [
    ("random_draws_mix", "a = random.random()\nb = random.randint(1, 5)\nreturn x * a + b, a, b"),
    ("random_choice_of_tensors", "ts = [x, x * 2, x * 3]\nreturn random.choice(ts)"),
    ("random_seeded_inside", "random.seed(x.shape[0])\nreturn x, random.random(), random.getrandbits(8)"),
    ("random_state_roundtrip", "st = random.getstate()\na = random.random()\nrandom.setstate(st)\nb = random.random()\nreturn x * a, a == b"),
    ("random_shuffle_list", "l = list(range(x.shape[0]))\nrandom.shuffle(l)\nreturn x[l], l"),
    ("random_uniform_across_break", "a = random.uniform(0, 1)\nbrk()\nb = random.uniform(0, 1)\nreturn x * a - b, a, b"),
]
snippets("dynamo/test_unspec", "unspec3_random", RANDOMS, namespace=NS)

SETS = [
    ("set_of_strings_sorted", "s = {'b', 'a'}\ns.add('c')\ns.discard('a')\nreturn x, sorted(s)"),
    ("set_comprehension_sizes", "s = {d % 3 for d in range(x.shape[0])}\nreturn x, sorted(s), len(s)"),
    ("set_membership_picks_branch", "keys = {'relu', 'gelu'}\nif 'relu' in keys:\n    return torch.relu(x)\nreturn x"),
    ("set_iteration_small_ints", "s = {3, 1, 2}\nreturn x, list(s), [x * v for v in s][0]"),
    ("set_mutated_and_returned", "s = set()\nfor i in range(x.shape[0]):\n    s.add(i % 2)\nreturn x, s"),
    ("set_passed_in_updated", "s.update({len(s)})\nreturn x * len(s)", {"params": "x, s", "make_args": lambda n: (torch.randn(n), {1, 2, n})}),
    ("set_of_dtypes", "s = {x.dtype, torch.float32, torch.int64}\nreturn x, len(s), torch.int64 in s"),
    ("set_difference_of_names", "a = {'w', 'b', 'g'}\nb = {'b'}\nreturn x, sorted(a - b), sorted(a ^ {'z'})"),
    ("frozenset_of_sizes_key", "cache = {frozenset(x.shape): 'seen'}\nreturn x, cache.get(frozenset([x.shape[0]]))"),
]
snippets("dynamo/test_sets", "sets3", SETS, namespace=NS)

CTX = [
    ("no_grad_across_break", "with torch.no_grad():\n    a = x * 2\n    brk()\n    b = a * 3\n    inside = torch.is_grad_enabled()\nreturn b, inside, torch.is_grad_enabled(), b.requires_grad", {"make_args": lambda n: (torch.randn(n, requires_grad=True),)}),
    ("enable_grad_inside_no_grad", "with torch.no_grad():\n    with torch.enable_grad():\n        a = x * 2\n    b = x * 3\nreturn a.requires_grad, b.requires_grad, a + b", {"make_args": lambda n: (torch.randn(n, requires_grad=True),)}),
    ("set_grad_enabled_from_size", "with torch.set_grad_enabled(x.shape[0] > 5):\n    y = x * 2\nreturn y, y.requires_grad", {"make_args": lambda n: (torch.randn(n, requires_grad=True),)}),
    ("no_grad_exception_restores", "try:\n    with torch.no_grad():\n        y = x * 2\n        raise KeyError('k')\nexcept KeyError:\n    pass\nreturn y.requires_grad, torch.is_grad_enabled(), x * 3", {"make_args": lambda n: (torch.randn(n, requires_grad=True),)}),
    ("default_dtype_inside_manager", "@contextlib.contextmanager\ndef dtype(d):\n    old = torch.get_default_dtype()\n    torch.set_default_dtype(d)\n    try:\n        yield\n    finally:\n        torch.set_default_dtype(old)\nwith dtype(torch.float64):\n    t = torch.ones(2)\nreturn x, t.dtype, torch.get_default_dtype()"),
    ("user_manager_state_seen_inside", "class Flag:\n    on = False\nclass CM:\n    def __enter__(self):\n        Flag.on = True\n    def __exit__(self, *a):\n        Flag.on = False\nwith CM():\n    seen = Flag.on\n    y = x * 2 if Flag.on else x\nreturn y, seen, Flag.on"),
    ("manager_exit_order_with_break", "log = []\n@contextlib.contextmanager\ndef cm(name):\n    log.append(('in', name))\n    try:\n        yield\n    finally:\n        log.append(('out', name))\nwith cm('a'):\n    with cm('b'):\n        brk()\n        y = x + 1\nreturn y, log"),
    ("inference_mode_flag", "with torch.inference_mode():\n    y = x * 2\n    flag = torch.is_inference_mode_enabled()\nreturn x * 3, flag, torch.is_inference_mode_enabled()"),
]
snippets("dynamo/test_ctx_manager", "ctx3", CTX, namespace=NS)

DECORATED = [
    ("disabled_callee_mutates_list", "log = []\nn = native_append(log, x.shape[0])\nif len(log) == 1:\n    return x * n, log\nreturn x, log"),
    ("disabled_callee_in_loop", "log = []\nfor i in range(3):\n    native_append(log, i)\nreturn x * len(log), log"),
    ("wraps_keeps_name_and_calls", "calls = []\ndef counted(fn):\n    @functools.wraps(fn)\n    def inner(*a):\n        calls.append(fn.__name__)\n        return fn(*a)\n    return inner\n@counted\ndef double(t):\n    return t * 2\nreturn double(x), double.__name__, double.__wrapped__(x) is not None, calls"),
    ("decorator_with_state_attr", "def count(fn):\n    def inner(t):\n        inner.n += 1\n        return fn(t)\n    inner.n = 0\n    return inner\n@count\ndef f1(t):\n    return t + 1\nf1(x)\nf1(x)\nreturn f1(x), f1.n"),
    ("partial_of_disabled", "p = functools.partial(native_append, [])\nreturn x, p(1), p(2)"),
]
snippets("dynamo/test_decorators", "deco3", DECORATED, namespace=NS)

SHAPES = [
    ("slice_bounds_from_size", "n = x.shape[0]\nreturn x[n // 2:], x[:-(n // 3) or None], x[::max(1, n // 3)]"),
    ("list_length_from_size", "parts = [x[i:i + 2] for i in range(0, x.shape[0], 2)]\nreturn parts, len(parts)"),
    ("reshape_from_size_arith", "n = x.shape[0]\nreturn x.repeat(6).reshape(n * 2, 3), (n * 2, 3)"),
    ("split_sizes_list", "n = x.shape[0]\nsizes = [n // 2, n - n // 2]\nreturn torch.split(x, sizes), sizes"),
    ("size_tuple_arith", "s = x.shape\nt = s[:1] + (2,)\nreturn x.unsqueeze(1).expand(*t), t, s == (x.shape[0],)"),
    ("size_in_dict_key_and_format", "d = {x.shape[0]: 'n'}\nreturn x, d, f'{x.shape[0]:03d}', '%d items' % x.shape[0]"),
    ("numel_and_dim_math", "return x.view(-1, 1) * (x.numel() // x.dim()), x.numel() ** 0.5"),
    ("padding_to_multiple", "n = x.shape[0]\npad = (-n) % 4\nreturn torch.nn.functional.pad(x, (0, pad)), pad"),
    ("size_compared_picks_path", "if x.shape[0] % 2 == 0:\n    return x.view(2, -1)\nreturn x.view(1, -1)"),
    ("range_of_size_reversed", "return x, list(reversed(range(x.shape[0])))[:3], range(x.shape[0])[-1]"),
]
snippets("dynamo/test_misc", "shapes3", SHAPES, namespace=NS)
