"""Cases modelled on dynamo's test_decorators: functions the compiler must run natively
(torch.compiler.disable on functions, methods, modules and classes, with recursive=False whose
callees are compiled again), their side effects (lists and objects they mutate, exceptions they
raise into compiled code, values they return and that Python control flow then reads), functions
torch.compiler.allow_in_graph marks, an explicit graph_break, and everyday user decorators
around compiled code: with arguments, stacked, class-based, counting calls on the wrapper
function's attributes, memoizing in a closure dict, functools.singledispatch, contextmanager used
as a decorator, decorators applied inside the compiled function. Recast in our own words."""

import contextlib
import functools

import torch
import torch.nn.functional as F

from . import snippets, two_vecs

SOURCE = "dynamo/test_decorators"
nn = torch.nn


@torch.compiler.disable
def disabled_sin(t, log):
    log.append(t.shape[0])
    return t.sin()


@torch.compiler.disable
def disabled_count(t):
    return int((t > 0).sum())


@torch.compiler.disable
def disabled_raises(t):
    if t.shape[0] > 5:
        raise ValueError("too long")
    return t + 1


def inner_tanh(t):
    return torch.tanh(t) * 2


@torch.compiler.disable(recursive=False)
def shallow_disabled(t):
    # Its own frame runs eagerly; `inner_tanh` is compiled again.
    return inner_tanh(t) + 1


@torch.compiler.disable
def disabled_kwargs(t, *, scale=1.0, extra=()):
    return t * scale + sum(extra)


class Box:
    def __init__(self, t):
        self.t = t
        self.calls = 0

    @torch.compiler.disable
    def bump(self, k):
        self.calls += 1
        return self.t * k

    @staticmethod
    @torch.compiler.disable
    def twice(t):
        return t * 2

    @classmethod
    @torch.compiler.disable
    def name(cls):
        return cls.__name__


def my_custom_function(t):
    return t + 1


torch.compiler.allow_in_graph(my_custom_function)


class SimpleLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer0 = nn.Linear(4, 4)

    def forward(self, inp):
        return self.layer0(torch.sigmoid(inp))


class SimpleModel(nn.Module):
    def __init__(self, disable_layer):
        super().__init__()
        self.layer0 = SimpleLinear()
        self.layer1 = nn.Linear(4, 4)
        self.layer0.register_forward_pre_hook(lambda module, args: (args[0].sigmoid(),))
        if disable_layer:
            self.layer0 = torch.compiler.disable(self.layer0)

    def forward(self, inp):
        return self.layer1(self.layer0(torch.sin(inp)))


@torch.compiler.disable
class DisabledBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, t):
        return self.lin(t).relu()


class WithDisabledBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = DisabledBlock()
        self.out = nn.Linear(4, 2)

    def forward(self, t):
        return self.out(self.block(t.cos()))


def model_input(model_class, *args):
    def make(n):
        torch.manual_seed(0)
        return model_class(*args), torch.randn(n, 4)

    return make


# ---- everyday decorators --------------------------------------------------------------------


def scaled_by(k):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs) * k

        return wrapper

    return decorate


def shifted(fn):
    @functools.wraps(fn)
    def wrapper(t):
        return fn(t + 1)

    return wrapper


@scaled_by(3)
@shifted
def stacked(t):
    return t.relu()


def counted(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        wrapper.calls += 1
        return fn(*args)

    wrapper.calls = 0
    return wrapper


class Traced:
    """A class-based decorator keeping the arguments it saw."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.seen = []

    def __call__(self, *args):
        self.seen.append(len(args))
        return self.fn(*args)


@functools.singledispatch
def describe(value):
    return "object"


@describe.register
def _(value: int):
    return value * 2


@describe.register
def _(value: torch.Tensor):
    return value.sum()


@describe.register(list)
def _(value):
    return len(value)


@contextlib.contextmanager
def doubled_default_dtype():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


@doubled_default_dtype()
def ones_in_float64(n):
    return torch.ones(n)


def retry(times):
    def decorate(fn):
        def wrapper(t):
            for attempt in range(times):
                try:
                    return fn(t, attempt)
                except ArithmeticError:
                    continue
            return None

        return wrapper

    return decorate


@retry(3)
def fails_twice(t, attempt):
    if attempt < 2:
        raise ZeroDivisionError(attempt)
    return t * attempt


NS = {
    "torch": torch, "F": F, "functools": functools, "contextlib": contextlib, "disabled_sin": disabled_sin,
    "disabled_count": disabled_count, "disabled_raises": disabled_raises, "shallow_disabled": shallow_disabled,
    "disabled_kwargs": disabled_kwargs, "Box": Box, "my_custom_function": my_custom_function,
    "scaled_by": scaled_by, "shifted": shifted, "stacked": stacked, "counted": counted, "Traced": Traced,
    "describe": describe, "ones_in_float64": ones_in_float64, "fails_twice": fails_twice, "inner_tanh": inner_tanh,
}

DISABLE = [
    ("disabled_call_between_ops", "log = []\ny = disabled_sin(x * 2, log) + 1\nreturn y.cos(), log"),
    ("disabled_mutates_input_list", "a = x + 1\nb = disabled_sin(a, log)\nreturn b * 2, len(log)",
     {"params": "x, log", "make_args": lambda n: (torch.randn(n), [0])}),
    ("disabled_result_drives_control_flow", "k = disabled_count(x)\nif k > x.shape[0] // 2:\n    return x * k\nreturn x - k"),
    ("disabled_raises_caught", "try:\n    y = disabled_raises(x)\nexcept ValueError as e:\n    y = x * 0 + len(str(e))\nreturn y"),
    ("disabled_raises_uncaught", "return disabled_raises(x * 2) + 1"),
    ("disabled_recursive_false_compiles_callee", "return shallow_disabled(x) * x"),
    ("disabled_with_keyword_only", "return disabled_kwargs(x, scale=2.0, extra=(1, 2)) + disabled_kwargs(x)"),
    ("disabled_method_mutates_object", "b = Box(x)\ny = b.bump(2) + b.bump(3)\nreturn y, b.calls"),
    ("disabled_staticmethod_and_classmethod", "return Box.twice(x) + 1, Box.name(), Box(x).twice(x)"),
    ("disabled_in_loop", "log = []\nfor i in range(3):\n    x = disabled_sin(x, log) + i\nreturn x, log"),
    ("disabled_called_through_variable", "fns = [disabled_sin, lambda t, log: t.cos()]\nreturn [f(x, []) for f in fns]"),
    ("disabled_wrapper_attributes", "return x, disabled_sin.__name__, shallow_disabled.__wrapped__.__name__ if hasattr(shallow_disabled, '__wrapped__') else 'shallow_disabled'"),
    ("disable_applied_inside", "f = torch.compiler.disable(lambda t: t.exp())\nreturn f(x) + x"),
    ("disabled_result_returned_directly", "y = x.abs()\nreturn disabled_kwargs(y, scale=0.5)"),
]
snippets(SOURCE, "decorators_disable", DISABLE, namespace=NS)

ALLOW_AND_BREAK = [
    ("allow_in_graph_function", "x = torch.add(x, 1)\nx = my_custom_function(x)\nreturn torch.add(x, 1)"),
    ("explicit_graph_break_between_ops", "import torch._dynamo\na = x.sin()\ntorch._dynamo.graph_break()\nreturn a.cos() + x"),
    ("graph_break_in_helper_with_state", "import torch._dynamo\nout = []\ndef helper(t):\n    out.append(t * 2)\n    torch._dynamo.graph_break()\n    out.append(t + 1)\n    return len(out)\nk = helper(x)\nreturn out[0] + out[1] * k"),
]
snippets(SOURCE, "decorators_allow", ALLOW_AND_BREAK, namespace=NS)

USER = [
    ("stacked_wraps_decorators", "return stacked(x), stacked.__name__, stacked.__wrapped__.__name__"),
    ("decorator_with_arguments_inside", "@scaled_by(x.shape[0])\ndef g(t):\n    return t.sum()\nreturn g(x)"),
    ("decorator_counts_calls_on_wrapper", "@counted\ndef g(t):\n    return t * 2\ny = g(g(x))\nreturn y, g.calls"),
    ("class_decorator_keeps_state", "t = Traced(lambda a, b: a * b)\ny = t(x, x) + t(x, 2)\nreturn y, t.seen, t.__name__"),
    ("memoizing_decorator_closure_dict", "cache = {}\ndef memo(fn):\n    def w(k):\n        if k not in cache:\n            cache[k] = fn(k)\n        return cache[k]\n    return w\n@memo\ndef table(k):\n    return x * k\nreturn table(2) + table(2) + table(3), sorted(cache)"),
    ("singledispatch_by_type", "return describe(x), describe(3), describe([1, 2]), describe('s')"),
    ("contextmanager_as_decorator", "return x + ones_in_float64(x.shape[0])"),
    ("retry_decorator_catches", "return fails_twice(x)"),
    ("partial_of_decorated", "g = functools.partial(stacked)\nreturn g(x) - stacked(x)"),
    ("lambda_decorator_identity", "deco = lambda f: f\n@deco\ndef g(t):\n    return t + 3\nreturn g(x)"),
    ("decorator_replaces_with_constant", "def const(f):\n    return 7\n@const\ndef g(t):\n    return t\nreturn x * g"),
    ("decorator_adds_attribute", "def tag(f):\n    f.tag = 'seen'\n    return f\n@tag\ndef g(t):\n    return t\nreturn g(x), g.tag"),
    ("method_decorated_by_wraps", "class C:\n    def __init__(self, k):\n        self.k = k\n    @scaled_by(2)\n    def m(self, t):\n        return t + self.k\nreturn C(3).m(x)"),
    ("property_from_decorated_getter", "class C:\n    def __init__(self, t):\n        self._t = t\n    @property\n    @shifted\n    def t(self):\n        return self\nc = C(x)\ntry:\n    return c.t\nexcept TypeError as e:\n    return type(e).__name__"),
    ("no_grad_decorator_on_closure", "@torch.no_grad()\ndef g(t):\n    return t * 2, torch.is_grad_enabled()\nreturn g(x)", {"make_args": lambda n: (torch.randn(n, requires_grad=True),)}),
    ("wraps_preserves_doc_and_dict", "def g(t):\n    '''doc'''\n    return t\ng.extra = 1\nw = functools.wraps(g)(lambda t: g(t) * 2)\nreturn w(x), w.__doc__, w.extra, w.__wrapped__ is g"),
]
snippets(SOURCE, "decorators_user", USER, namespace=NS)

snippets(SOURCE, "decorators_two", [
    ("disabled_between_two_inputs", "log = []\nreturn disabled_sin(x, log) * y + inner_tanh(y), log"),
], namespace=NS, params="x, y", make_args=two_vecs)

for name, model_class, args in (("module_with_disabled_submodule", SimpleModel, (True,)),
                                ("module_with_hooked_submodule", SimpleModel, (False,)),
                                ("module_of_disabled_class", WithDisabledBlock, ())):
    snippets(SOURCE, "decorators_modules", [(name, "return m(x)")], namespace=NS, params="m, x",
             make_args=model_input(model_class, *args))
