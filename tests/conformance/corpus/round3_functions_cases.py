"""User context managers, decorators, closures made in loops, recursion and functions made
inside the compiled function, each over tensors. Context managers: __exit__ results that are
truthy or falsy without being bools, __enter__ raising, values bound by `as` (tensors, tuples),
managers reused and re-entered, nested managers suppressing for each other, `return`/`break`/
`continue` through a suppressing manager, contextmanager generators with try/except/finally
that suppress, translate or re-raise, ExitStack (callbacks with arguments, push, pop_all,
a manager in the stack suppressing), suppress of base classes, AbstractContextManager and
ContextDecorator subclasses. Decorators: stacked (application order), with arguments,
counting through wrapper attributes, registries, class-based, on methods beside staticmethod/
classmethod/property. Closures: late binding in loops and comprehensions and the ways around
it (defaults, partial, factories). Recursion: on sizes, nested containers, mutual, memoised,
through a cell. Inner functions returned, stored in containers and on objects, with their
attributes read. Modelled on CPython's test_with, test_contextlib, test_decorators, test_scope
and PyTorch's dynamo test_ctx_manager and test_functions, recast in our own words."""

import contextlib
import functools

import torch

from . import snippets, two_vecs, vec_grad


class Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class Exiting:
    """A manager whose __exit__ returns `result` (any object, so its truth decides) and logs."""

    def __init__(self, log, result=None, value=None):
        self.log = log
        self.result = result
        self.value = value
        self.depth = 0

    def __enter__(self):
        self.depth += 1
        self.log.append(("enter", self.depth))
        return self if self.value is None else self.value

    def __exit__(self, exc_type, exc, tb):
        self.log.append(("exit", exc_type.__name__ if exc_type else None, str(exc) if exc else None))
        self.depth -= 1
        return self.result


class FailingEnter:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        raise ValueError("no entry")

    def __exit__(self, *exc):
        self.log.append("exit")
        return True


class Scaled(contextlib.AbstractContextManager):
    """Uses AbstractContextManager's default __enter__ (returns self)."""

    def __init__(self, t):
        self.t = t

    def __exit__(self, *exc):
        self.t = self.t * 2
        return None


class Tracked(contextlib.ContextDecorator):
    calls = []

    def __enter__(self):
        Tracked.calls.append("in")
        return self

    def __exit__(self, *exc):
        Tracked.calls.append("out")
        return False


@contextlib.contextmanager
def guarded(log):
    log.append("setup")
    try:
        yield len(log)
    except KeyError as e:
        log.append(("swallowed", e.args[0]))
    finally:
        log.append("teardown")


@contextlib.contextmanager
def translating(log):
    try:
        yield
    except ZeroDivisionError as e:
        log.append("translate")
        raise ValueError("translated") from e


@contextlib.contextmanager
def reraising(log):
    try:
        yield
    except Exception:
        log.append("saw it")
        raise


@contextlib.contextmanager
def scaled_copy(t, k):
    copy = t.clone()
    yield copy
    copy.mul_(k)


def twice(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(fn(*args))

    return wrapper


def add_one(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args) + 1

    return wrapper


def scale_by(k):
    def deco(fn):
        def wrapper(t):
            return fn(t) * k

        wrapper.k = k
        return wrapper

    return deco


def counted(fn):
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        return fn(*args, **kwargs)

    wrapper.calls = 0
    return wrapper


@twice
@add_one
def double_then_add(t):
    return t * 2


@add_one
@twice
def add_after_twice(t):
    return t * 2


@scale_by(3)
@scale_by(-1)
def negated_tripled(t):
    return t + 1


@counted
def counted_sin(t):
    return t.sin()


REGISTRY = {}


def register(name):
    def deco(fn):
        REGISTRY[name] = fn
        return fn

    return deco


@register("relu")
def _relu(t):
    return t.relu()


@register("neg")
def _neg(t):
    return -t


class CallCounter:
    """A class-based decorator with state."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return self.fn(*args)


@CallCounter
def cube(t):
    return t**3


class Layer:
    def __init__(self, w):
        self.w = w

    @add_one
    def apply(self, t):
        return t * self.w

    @staticmethod
    @add_one
    def shifted(t):
        return t * 2

    @classmethod
    @counted
    def build(cls, t):
        return cls(t.mean())

    @property
    @counted
    def doubled(self):
        return self.w * 2


def tree(n):
    return ([torch.randn(n), (torch.randn(n), [torch.randn(n)]), {"k": torch.randn(n)}],)


STORE = []
NS = {"torch": torch, "contextlib": contextlib, "functools": functools, "Obj": Obj, "Exiting": Exiting,
      "FailingEnter": FailingEnter, "Scaled": Scaled, "Tracked": Tracked, "guarded": guarded,
      "translating": translating, "reraising": reraising, "scaled_copy": scaled_copy, "twice": twice,
      "add_one": add_one, "scale_by": scale_by, "counted": counted, "double_then_add": double_then_add,
      "add_after_twice": add_after_twice, "negated_tripled": negated_tripled, "counted_sin": counted_sin,
      "REGISTRY": REGISTRY, "cube": cube, "Layer": Layer, "STORE": STORE}

WITH = [
    ("exit_returning_one_suppresses", "log = []\nwith Exiting(log, result=1):\n    y = x + 1\n    raise KeyError('k')\nreturn y, log"),
    ("exit_returning_empty_list_does_not", "log = []\ntry:\n    with Exiting(log, result=[]):\n        raise KeyError('k')\nexcept KeyError:\n    log.append('outside')\nreturn x * 2, log"),
    ("exit_returning_string_suppresses", "log = []\nwith Exiting(log, result='yes'):\n    x = x + 1\n    x = x / 0 if False else x[100]\nreturn x, log"),
    ("enter_value_is_a_tensor", "log = []\nwith Exiting(log, value=x * 3) as y:\n    z = y + 1\nreturn z, log"),
    ("enter_value_unpacked_into_targets", "log = []\nwith Exiting(log, value=(x, x.shape[0])) as (t, n):\n    r = t * n\nreturn r, log"),
    ("enter_raises_exit_not_called", "log = []\ntry:\n    with FailingEnter(log):\n        log.append('body')\nexcept ValueError as e:\n    log.append(str(e))\nreturn x + len(log), log"),
    ("second_manager_enter_raises_first_exits", "log = []\ntry:\n    with Exiting(log), FailingEnter(log):\n        log.append('body')\nexcept ValueError:\n    log.append('caught')\nreturn x - 1, log"),
    ("manager_reentered_tracks_depth", "log = []\nm = Exiting(log)\nwith m:\n    with m:\n        y = x * m.depth\n    y = y + m.depth\nreturn y, log, m.depth"),
    ("inner_raises_outer_suppresses_both_exit", "log = []\nwith Exiting(log, result=True):\n    with Exiting(log, result=False):\n        y = x + 1\n        raise IndexError('deep')\nreturn y, log"),
    ("inner_suppresses_outer_sees_none", "log = []\nwith Exiting(log):\n    with Exiting(log, result=True):\n        raise IndexError('deep')\n    y = x * 2\nreturn y, log"),
    ("return_through_manager_exit_gets_none", "log = []\nwith Exiting(log, result=True):\n    return x * 5, log"),
    ("break_through_suppressing_manager", "log = []\nacc = x\nfor i in range(4):\n    with Exiting(log, result=True):\n        if i == 2:\n            break\n        acc = acc + i\nreturn acc, log"),
    ("continue_and_exception_in_loop_body", "log = []\nacc = x\nfor i in range(4):\n    with Exiting(log, result=True):\n        if i % 2:\n            continue\n        acc = acc * 2\n        raise RuntimeError(str(i))\nreturn acc, len(log), log[-1]"),
    ("exit_receives_exception_args", "log = []\nwith Exiting(log, result=True):\n    raise ValueError('size', x.shape[0])\nreturn x, log"),
    ("suppressed_exception_keeps_prior_assignments", "log = []\ny = x\nwith Exiting(log, result=True):\n    y = y + 1\n    z = y * 2\n    raise TypeError('t')\n    y = y * 100\nreturn y, z, log"),
    ("exception_from_tensor_op_suppressed", "log = []\nwith Exiting(log, result=True):\n    y = x + 1\n    y = y @ torch.ones(3, 3)\nreturn y, log[-1][1]"),
    ("generator_manager_swallows_keyerror", "log = []\nwith guarded(log) as n:\n    y = x + n\n    raise KeyError('gone')\nreturn y, log"),
    ("generator_manager_lets_other_errors_out", "log = []\ntry:\n    with guarded(log):\n        raise IndexError('i')\nexcept IndexError:\n    log.append('outside')\nreturn x, log"),
    ("generator_manager_translates_exception", "log = []\ntry:\n    with translating(log):\n        y = x / 2\n        1 / 0\nexcept ValueError as e:\n    log.append((str(e), type(e.__cause__).__name__))\nreturn y, log"),
    ("generator_manager_reraises_same_object", "log = []\nerr = KeyError('same')\ntry:\n    with reraising(log):\n        raise err\nexcept KeyError as e:\n    log.append(e is err)\nreturn x, log"),
    ("generator_manager_yields_clone_mutated_on_exit", "with scaled_copy(x, 3) as c:\n    c.add_(1)\n    inside = c.sum()\nreturn c, inside, x"),
    ("abstract_context_manager_default_enter", "with Scaled(x + 1) as s:\n    y = s.t * 2\nreturn y, s.t"),
    ("context_decorator_subclass_on_function", "Tracked.calls.clear()\n@Tracked()\ndef g(t):\n    Tracked.calls.append('body')\n    return t.cos()\nr = g(x) + g(x)\nreturn r, list(Tracked.calls)"),
    ("exitstack_callbacks_with_arguments_lifo", "log = []\nwith contextlib.ExitStack() as stack:\n    stack.callback(log.append, 'first')\n    stack.callback(lambda a, b=0: log.append(a + b), 1, b=2)\n    y = x * 2\nreturn y, log"),
    ("exitstack_push_exit_function_suppresses", "log = []\ndef on_exit(et, ev, tb):\n    log.append(et.__name__ if et else None)\n    return True\nwith contextlib.ExitStack() as stack:\n    stack.push(on_exit)\n    y = x + 1\n    raise LookupError('x')\nreturn y, log"),
    ("exitstack_pop_all_defers_exit", "log = []\nwith contextlib.ExitStack() as stack:\n    stack.enter_context(Exiting(log))\n    stack.callback(log.append, 'cb')\n    later = stack.pop_all()\nlog.append('after with')\ny = x * 3\nlater.close()\nreturn y, log"),
    ("exitstack_manager_in_stack_suppresses", "log = []\nwith contextlib.ExitStack() as stack:\n    stack.callback(log.append, 'cb')\n    stack.enter_context(Exiting(log, result=True))\n    y = x - 1\n    raise KeyError('z')\nreturn y, log"),
    ("exitstack_generator_manager_sees_error", "log = []\nwith contextlib.ExitStack() as stack:\n    n = stack.enter_context(guarded(log))\n    y = x + n\n    raise KeyError('k')\nreturn y, log"),
    ("suppress_base_class_catches_subclasses", "out = []\nfor i in range(3):\n    with contextlib.suppress(LookupError):\n        out.append([x][i] if i < 2 else {}['k'])\nreturn len(out), out[0] + 1"),
    ("suppress_tensor_index_error", "y = x\nwith contextlib.suppress(IndexError, TypeError):\n    y = x[x.shape[0] + 3]\nreturn y * 2"),
    ("nullcontext_returns_given_tensor", "with contextlib.nullcontext(x * 2) as y:\n    z = y + 1\nreturn z, y"),
]
snippets("cpython/test_with", "r3_with", WITH, namespace=NS)

DECORATORS = [
    ("stacked_bottom_applied_first", "return double_then_add(x), add_after_twice(x)"),
    ("stacked_with_arguments", "return negated_tripled(x)"),
    ("wrapper_attribute_counts_calls", "before = counted_sin.calls\ny = counted_sin(x) + counted_sin(x * 2)\nreturn y, counted_sin.calls - before"),
    ("wraps_exposes_wrapped_function", "return double_then_add.__wrapped__(x), double_then_add.__name__, add_after_twice.__wrapped__.__name__"),
    ("registry_filled_by_decorator", "out = x\nfor name in sorted(REGISTRY):\n    out = REGISTRY[name](out)\nreturn out, sorted(REGISTRY)"),
    ("class_based_decorator_state", "before = cube.calls\ny = cube(x) - cube(x + 1)\nreturn y, cube.calls - before, cube.__name__"),
    ("decorated_method_sees_self", "layer = Layer(x)\nreturn layer.apply(x + 1)"),
    ("staticmethod_over_decorator", "return Layer.shifted(x), Layer(x).shifted(x)"),
    ("classmethod_over_counting_decorator", "layer = Layer.build(x)\nreturn layer.w, type(layer).__name__"),
    ("property_over_counting_decorator", "layer = Layer(x)\nreturn layer.doubled + layer.doubled"),
    ("decorators_stacked_inside_function", "def mul(k):\n    def deco(fn):\n        return lambda t: fn(t) * k\n    return deco\n@mul(2)\n@mul(3)\n@add_one\ndef g(t):\n    return t - 1\nreturn g(x)"),
    ("decorator_replaces_function_by_flag", "def maybe(flag):\n    def deco(fn):\n        return fn if flag else (lambda t: t * 0)\n    return deco\n@maybe(x.shape[0] > 5)\ndef g(t):\n    return t + 10\nreturn g(x)"),
    ("decorator_applied_in_loop", "fns = []\nfor k in range(3):\n    @scale_by(k + 1)\n    def g(t):\n        return t + 1\n    fns.append(g)\nreturn [f(x) for f in fns], [f.k for f in fns]"),
    ("decorator_sees_call_arguments", "seen = []\ndef spy(fn):\n    def wrapper(*args, **kwargs):\n        seen.append((len(args), sorted(kwargs)))\n        return fn(*args, **kwargs)\n    return wrapper\n@spy\ndef g(a, b=1, *, c=2):\n    return a * b + c\nreturn g(x), g(x, 2, c=x), seen"),
    ("lru_cache_on_size_function", "@functools.lru_cache(maxsize=None)\ndef ways(n):\n    return 1 if n < 2 else ways(n - 1) + ways(n - 2)\nreturn x * ways(x.shape[0]), ways.cache_info().misses"),
]
snippets("cpython/test_decorators", "r3_deco", DECORATORS, namespace=NS)

CLOSURES = [
    ("lambdas_in_comprehension_bind_late", "fs = [lambda: x * i for i in range(3)]\nreturn [f() for f in fs]"),
    ("lambdas_with_default_bind_now", "fs = [lambda i=i: x * i for i in range(3)]\nreturn [f() for f in fs]"),
    ("defs_in_for_loop_see_last_value", "fs = []\nfor i in range(3):\n    def g():\n        return x + i\n    fs.append(g)\nout = [f() for f in fs]\ni = 10\nreturn out, [f() for f in fs]"),
    ("partial_in_loop_binds_now", "fs = [functools.partial(torch.add, x, alpha=i) for i in range(3)]\nreturn [f(torch.ones_like(x)) for f in fs]"),
    ("factory_in_loop_binds_each", "def make(k):\n    return lambda t: t * k\nfs = [make(i) for i in range(1, 4)]\nreturn [f(x) for f in fs]"),
    ("closure_over_tensor_rebound_in_loop", "fs = []\nt = x\nfor _ in range(3):\n    t = t + 1\n    fs.append(lambda: t)\nreturn [f() for f in fs]"),
    ("closures_share_cell_with_while_counter", "count = 0\ndef bump():\n    nonlocal count\n    count += 1\n    return count\nout = []\nwhile count < 3:\n    out.append(x * bump())\nreturn out, count"),
    ("closures_in_dict_by_name", "ops = {}\nfor name, k in (('a', 1), ('b', 2)):\n    ops[name] = lambda t: t * k\nreturn ops['a'](x), ops['b'](x)"),
    ("generator_of_closures_consumed_lazily", "gen = (lambda: x * i for i in range(3))\nout = [f() for f in gen]\nreturn out"),
    ("loop_variable_cell_after_loop_deleted", "fs = []\nfor i in range(2):\n    fs.append(lambda: i)\ndel i\ntry:\n    fs[0]()\nexcept NameError as e:\n    return x, type(e).__name__"),
    ("nested_loops_closure_captures_both", "fs = []\nfor i in range(2):\n    for j in range(2):\n        fs.append(lambda: x * i + j)\nreturn [f() for f in fs]"),
]
snippets("cpython/test_scope", "r3_closure", CLOSURES, namespace=NS)

RECURSION = [
    ("halving_on_size", "def half_sum(t):\n    if t.shape[0] <= 1:\n        return t.sum()\n    k = t.shape[0] // 2\n    return half_sum(t[:k]) + half_sum(t[k:]) * 2\nreturn half_sum(x)"),
    ("nested_container_sum", "def total(v):\n    if isinstance(v, torch.Tensor):\n        return v.sum()\n    if isinstance(v, dict):\n        return sum(total(i) for i in v.values())\n    return sum(total(i) for i in v)\nreturn total(tree)", {"params": "tree", "make_args": tree}),
    ("nested_container_map_structure", "def double(v):\n    if isinstance(v, torch.Tensor):\n        return v * 2\n    if isinstance(v, dict):\n        return {k: double(i) for k, i in v.items()}\n    return type(v)(double(i) for i in v)\nreturn double(tree)", {"params": "tree", "make_args": tree}),
    ("mutual_recursion_even_odd", "def even(n, t):\n    return t if n == 0 else odd(n - 1, t + 1)\ndef odd(n, t):\n    return t * 2 if n == 0 else even(n - 1, t - 1)\nreturn even(5, x), even(x.shape[0], x)"),
    ("memoised_recursion_dict", "memo = {}\ndef fib(n):\n    if n in memo:\n        return memo[n]\n    r = n if n < 2 else fib(n - 1) + fib(n - 2)\n    memo[n] = r\n    return r\nreturn x * fib(x.shape[0] + 5), len(memo)"),
    ("recursion_on_tensor_value_list", "def power(t, n):\n    if n == 0:\n        return torch.ones_like(t)\n    half = power(t, n // 2)\n    return half * half * (t if n % 2 else 1)\nreturn power(x, 5), power(x, x.shape[0])"),
    ("recursive_lambda_through_name", "fact = lambda n: 1 if n <= 1 else n * fact(n - 1)\nreturn x * fact(x.shape[0])"),
    ("recursion_accumulates_into_list", "out = []\ndef walk(t, depth):\n    out.append(t.sum())\n    if depth:\n        walk(t[1:], depth - 1)\nwalk(x, 3)\nreturn out"),
    ("recursion_error_caught", "def down(n):\n    if n == 0:\n        raise ValueError(n)\n    return down(n - 1)\ntry:\n    down(4)\nexcept ValueError as e:\n    return x + e.args[0]"),
]
snippets("dynamo/test_functions", "r3_recur", RECURSION, namespace=NS)

INNER = [
    ("inner_function_returned_with_result", "def scale(t):\n    return t * x.shape[0]\nreturn scale, scale(x)"),
    ("inner_function_stored_on_object", "o = Obj()\nk = x.sum()\no.fn = lambda t: t + k\nreturn o.fn(x), callable(o.fn)"),
    ("inner_function_stored_in_global_list", "STORE.clear()\ndef g(t):\n    return t.exp()\nSTORE.append(g)\nreturn STORE[0](x), len(STORE)"),
    ("inner_function_attributes", "def g(t, k=2):\n    '''doc'''\n    return t * k\ng.tag = 'made'\nreturn g(x), g.__name__, g.__qualname__, g.__doc__, g.__defaults__, g.tag"),
    ("inner_closure_cell_contents", "k = 3\ndef g(t):\n    return t * k\nreturn g(x), g.__closure__[0].cell_contents, g.__code__.co_freevars"),
    ("inner_defaults_from_tensor_frozen", "k = x.sum()\ndef g(t, k=k):\n    return t + k\nk = k * 100\nreturn g(x), g(x, 1)"),
    ("three_levels_of_closures", "def a(p):\n    def b(q):\n        def c(r):\n            return x * p + q - r\n        return c\n    return b\nreturn a(2)(3)(x), a(1)(0)(1)"),
    ("inner_function_passed_to_map_and_sorted", "def key(t):\n    return t.sum().item()\nrows = list(x.reshape(-1, 1))\nreturn sorted(rows, key=key), list(map(key, rows[:2]))"),
    ("inner_function_mutates_input_dict", "def put(k, v):\n    d[k] = v\nput('a', x)\nput('b', x * 2)\nreturn sorted(d)", {"params": "d, x", "make_args": lambda n: ({}, torch.randn(n))}),
    ("inner_generator_function_returned_and_used", "def gen(t):\n    for i in range(3):\n        yield t * i\nreturn sum(gen(x)), gen"),
    ("inner_class_method_closes_over_tensor", "class Add:\n    def __call__(self, t):\n        return t + x\nreturn Add()(x), Add.__name__"),
    ("inner_function_called_under_no_grad_and_not", "def g(t):\n    return t * 2\nwith torch.no_grad():\n    a = g(x)\nb = g(x)\nreturn a.requires_grad, b.requires_grad, a + b", {"make_args": vec_grad}),
    ("lambda_default_tensor_and_kwonly", "f = lambda t, *, s=x.sum(): t * s\nreturn f(x), f(x, s=2)"),
    ("inner_function_identity_stable_in_dict", "d = {}\ndef g(t):\n    return t + 1\nd[g] = x\nreturn d[g] * 2, g in d", {"make_args": two_vecs, "params": "x, y"}),
]
snippets("dynamo/test_functions", "r3_inner", INNER, namespace=NS)
