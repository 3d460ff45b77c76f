"""Function objects changed while the compiled code runs, in the style of dynamo's
test_functions (recast in our own words): __defaults__ and __kwdefaults__ replaced or changed in
place and the function called again, attributes used as counters, __name__ and __code__
swapped, closure cells written through __closure__, decorators with state, partials of
partials, functools.reduce, recursion, and defaults that capture a value at definition."""

import functools

import torch

from . import snippets

CASES = [
    ("defaults_mutated_inside", "def g(t, k=2):\n    return t * k\na = g(x)\ng.__defaults__ = (5,)\nreturn a, g(x)"),
    ("kwdefaults_mutated_inside", "def g(t, *, k=2):\n    return t * k\na = g(x)\ng.__kwdefaults__['k'] = 7\nreturn a, g(x)"),
    ("function_attribute_counter", "def g(t):\n    g.calls += 1\n    return t * g.calls\ng.calls = 0\nreturn g(x), g(x), g.calls"),
    ("function_name_assignment", "def g():\n    pass\ng.__name__ = 'renamed'\nreturn x, g.__name__, g.__qualname__.endswith('g')"),
    ("closure_cell_contents_write", "k = 1\ndef g():\n    return k\ng.__closure__[0].cell_contents = 10\nreturn x * g(), k"),
    ("code_swap_inside", "def a(t):\n    return t + 1\ndef b(t):\n    return t * 100\nr1 = a(x)\na.__code__ = b.__code__\nreturn r1, a(x)"),
    ("decorator_with_state", "def counted(fn):\n    def wrapper(*args):\n        wrapper.n += 1\n        return fn(*args)\n    wrapper.n = 0\n    return wrapper\n@counted\ndef sq(t):\n    return t * t\nsq(x)\nreturn sq(x), sq.n"),
    ("partial_of_partial", "p = functools.partial(lambda a, b, c: a * b + c, x)\nq = functools.partial(p, 2)\nreturn q(1), q.args, q.func is p or q.func is p.func"),
    ("reduce_with_initial", "return functools.reduce(lambda a, b: a * b, [x, x + 1], x.new_ones(x.shape)), functools.reduce(lambda a, b: a + b, [], 7)"),
    ("recursion_depth_small", "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\nreturn x * depth(20)"),
    ("mutual_recursion", "def even(n):\n    return True if n == 0 else odd(n - 1)\ndef odd(n):\n    return False if n == 0 else even(n - 1)\nreturn x, even(10), odd(7)"),
    ("generator_function_attribute_state", "def g():\n    g.started = True\n    yield 1\ng.started = False\ngen = g()\nbefore = g.started\nnext(gen)\nreturn x, before, g.started"),
    ("lambda_default_captures_value", "k = 2\nf = lambda t, k=k: t * k\nk = 10\nreturn f(x), k"),
    ("class_method_defaults_mutated", "class C:\n    def m(self, v=1):\n        return v\nc = C()\nC.m.__defaults__ = (4,)\nr = c.m()\nC.m.__defaults__ = (1,)\nreturn x * r"),
]
snippets("dynamo/test_functions", "functions_up2", CASES, namespace={"torch": torch, "functools": functools})
