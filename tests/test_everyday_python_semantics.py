"""Everyday Python around tensors, compiled and in eager, call after call: globals and
closures rebound between calls, nonlocal counters, mutable defaults, module attributes and
parameters changed, train/eval, hooks added later, dict order, dataclass / enum / str / None /
kwargs / varargs arguments, try/except, grad mode, dtype and contiguity branches, aliased and
overlapping inputs, seeds, the order of side effects, properties with side effects, partials
and lambdas, sorting by `.item()`, slice objects. Each case builds its state twice (one copy
for eager, one compiled) and compares every call's result or exception type.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import functools
import weakref

import pytest
import torch

import compiler

CASES: list = []

x0 = torch.randn(4)


def m_global():
    g = {"scale": 2.0}

    def f(x):
        return x * g["scale"]

    def c1(f):
        return f(x0)

    def c2(f):
        g["scale"] = 3.0
        return f(x0)

    return f, [c1, c2, c1]


CASES.append(("dict global mutated", m_global))
G = 1  # rebound by a case below


def m_module_global():
    def f(x):
        return x * G

    def set_(v):
        def c(f):
            global G
            G = v
            return f(x0)

        return c

    return f, [set_(1), set_(2), set_(5), set_(2.5)]


CASES.append(("module global rebinding", m_module_global))


def m_closure():
    k = [1]

    def f(x):
        return x * k[0]

    def c(v):
        def call(fn):
            k[0] = v
            return fn(x0)

        return call

    return f, [c(1), c(2), c(3)]


CASES.append(("closure list cell", m_closure))


def m_nonlocal():
    count = 0

    def f(x):
        nonlocal count
        count += 1
        return x * count

    return f, [lambda fn: fn(x0), lambda fn: fn(x0), lambda fn: fn(x0)]


CASES.append(("nonlocal counter", m_nonlocal))


def m_default_mut():
    def f(x, acc=[]):
        acc.append(1)
        return x * len(acc)

    return f, [lambda fn: fn(x0), lambda fn: fn(x0), lambda fn: fn(x0)]


CASES.append(("mutable default", m_default_mut))


def m_input_list():
    def f(xs):
        xs.append(xs[0] * 2)
        return sum(xs)

    def c(fn):
        items = [x0, x0 + 1]
        r = fn(items)
        return (r, len(items))

    return f, [c, c]


CASES.append(("input list mutation", m_input_list))


def m_module_attr():
    m = torch.nn.Linear(4, 4)
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 4)
    m.scale = 1.0

    def f(x):
        return m(x) * m.scale

    def c(v):
        def call(fn):
            m.scale = v
            return fn(x0)

        return call

    return f, [c(1.0), c(2.0), c(3.0)]


CASES.append(("module attr change", m_module_attr))


def m_param_update():
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 4)

    def f(x):
        return m(x)

    def c(fn):
        with torch.no_grad():
            m.weight.add_(1.0)
        return fn(x0)

    return f, [c, c, c]


CASES.append(("param in-place update", m_param_update))


def m_param_rebind():
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 4)

    def f(x):
        return m(x)

    def c(fn):
        m.weight = torch.nn.Parameter(torch.ones(4, 4))
        return fn(x0)

    return f, [lambda fn: fn(x0), c, c]


CASES.append(("param rebind", m_param_rebind))


def m_train_eval():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))

    def f(x):
        return m(x)

    xb = torch.randn(8, 4)

    def c(mode):
        def call(fn):
            m.train(mode)
            return fn(xb)

        return call

    return f, [c(True), c(False), c(True), c(False)]


CASES.append(("train/eval switch", m_train_eval))


def m_hook_added():
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 4)

    def f(x):
        return m(x)

    def add_hook(fn):
        m.register_forward_hook(lambda mod, i, o: o * 10)
        return fn(x0)

    return f, [lambda fn: fn(x0), add_hook, lambda fn: fn(x0)]


CASES.append(("forward hook added later", m_hook_added))


def m_dict_order():
    def f(d):
        return [k for k in d], sum(v for v in d.values())

    return f, [lambda fn: fn({"a": x0, "b": x0 * 2}), lambda fn: fn({"b": x0, "a": x0 * 2})]


CASES.append(("dict order input", m_dict_order))


def m_set_iter():
    def f(x, s):
        return [x * i for i in sorted(s)]

    return f, [lambda fn: fn(x0, {1, 2}), lambda fn: fn(x0, {3, 1})]


CASES.append(("set input", m_set_iter))


def m_dataclass():
    @dataclasses.dataclass
    class Cfg:
        scale: float
        bias: int

    def f(x, c):
        return x * c.scale + c.bias

    return f, [lambda fn: fn(x0, Cfg(1.0, 2)), lambda fn: fn(x0, Cfg(2.0, 3)), lambda fn: fn(x0, Cfg(2.0, 3))]


CASES.append(("dataclass arg", m_dataclass))


def m_enum():
    class Mode(enum.Enum):
        A = 1
        B = 2

    def f(x, m):
        return x * 2 if m is Mode.A else x * 3

    return f, [lambda fn: fn(x0, Mode.A), lambda fn: fn(x0, Mode.B), lambda fn: fn(x0, Mode.A)]


CASES.append(("enum arg", m_enum))


def m_str():
    def f(x, s):
        return x * len(s) if s.startswith("a") else x

    return f, [lambda fn: fn(x0, "abc"), lambda fn: fn(x0, "bcd"), lambda fn: fn(x0, "abcd")]


CASES.append(("string arg", m_str))


def m_none():
    def f(x, y=None):
        return x if y is None else x + y

    return f, [lambda fn: fn(x0), lambda fn: fn(x0, x0), lambda fn: fn(x0)]


CASES.append(("None arg", m_none))


def m_kwargs():
    def f(x, **kw):
        return x * kw.get("a", 1) + len(kw)

    return f, [lambda fn: fn(x0, a=2), lambda fn: fn(x0, b=3), lambda fn: fn(x0, a=2, b=1)]


CASES.append(("kwargs", m_kwargs))


def m_varargs():
    def f(*xs):
        return sum(xs)

    return f, [lambda fn: fn(x0, x0), lambda fn: fn(x0, x0, x0), lambda fn: fn(x0)]


CASES.append(("varargs", m_varargs))


def m_generator():
    def f(x):
        return list(x * i for i in range(3))

    return f, [lambda fn: fn(x0), lambda fn: fn(x0 + 1)]


CASES.append(("generator expr", m_generator))


def m_exception():
    def f(x, d):
        try:
            return x * d["k"]
        except KeyError:
            return x - 1

    return f, [lambda fn: fn(x0, {"k": 2}), lambda fn: fn(x0, {}), lambda fn: fn(x0, {"k": 3})]


CASES.append(("try/except KeyError", m_exception))


def m_isinstance():
    def f(x, y):
        return x * y if isinstance(y, (int, float)) else x + y

    return f, [lambda fn: fn(x0, 2), lambda fn: fn(x0, x0), lambda fn: fn(x0, 2.5), lambda fn: fn(x0, True)]


CASES.append(("isinstance dispatch", m_isinstance))


def m_requires_grad():
    def f(x):
        return x * 2 if x.requires_grad else x * 3

    return f, [lambda fn: fn(x0), lambda fn: fn(x0.clone().requires_grad_()).detach(), lambda fn: fn(x0)]


CASES.append(("requires_grad branch", m_requires_grad))


def m_grad_mode():
    def f(x):
        return x * 2 if torch.is_grad_enabled() else x * 3

    def nograd(fn):
        with torch.no_grad():
            return fn(x0)

    return f, [lambda fn: fn(x0), nograd, lambda fn: fn(x0)]


CASES.append(("grad mode branch", m_grad_mode))


def m_dtype_change():
    def f(x):
        return x.sum() * 2

    return f, [lambda fn: fn(x0), lambda fn: fn(x0.double()), lambda fn: fn(x0.half()), lambda fn: fn(torch.arange(4))]


CASES.append(("dtype changes", m_dtype_change))


def m_noncontig():
    def f(x):
        return x.view(-1) if x.is_contiguous() else x.reshape(-1) * 2

    torch.manual_seed(1)
    y = torch.randn(4, 4)
    return f, [lambda fn: fn(y), lambda fn: fn(y.t()), lambda fn: fn(y)]


CASES.append(("contiguity branch", m_noncontig))


def m_alias_inputs():
    def f(a, b):
        a.add_(1)
        return b * 2

    def same(fn):
        t = torch.zeros(3)
        return fn(t, t)

    def diff(fn):
        return fn(torch.zeros(3), torch.zeros(3))

    return f, [diff, same, diff, same]


CASES.append(("aliased inputs", m_alias_inputs))


def m_view_inputs():
    def f(a, b):
        a.mul_(2)
        return b + 1

    def views(fn):
        t = torch.ones(6)
        return fn(t[:3], t[2:5])

    return f, [lambda fn: fn(torch.ones(3), torch.ones(3)), views, views]


CASES.append(("overlapping view inputs", m_view_inputs))


def m_random():
    import random

    def f(x):
        random.seed(0)
        return x * random.random()

    return f, [lambda fn: fn(x0), lambda fn: fn(x0)]


CASES.append(("python random", m_random))


def m_torch_seed():
    def f(x):
        torch.manual_seed(0)
        return x + torch.rand(4)

    return f, [lambda fn: fn(x0), lambda fn: fn(x0)]


CASES.append(("torch seed inside", m_torch_seed))


def m_len_loop():
    def f(xs):
        out = 0
        for i, t in enumerate(xs):
            out = out + t * i
        return out

    return f, [lambda fn: fn([x0, x0]), lambda fn: fn([x0, x0, x0]), lambda fn: fn((x0,))]


CASES.append(("list length changes", m_len_loop))


def m_tensor_as_bool_list():
    def f(x):
        return [bool(v) for v in (x > 0)]

    return f, [lambda fn: fn(x0), lambda fn: fn(-x0)]


CASES.append(("bool of tensor elements", m_tensor_as_bool_list))


def m_item_branch():
    def f(x):
        if x.sum().item() > 0:
            return x * 2
        return x * 3

    return f, [lambda fn: fn(x0.abs()), lambda fn: fn(-x0.abs()), lambda fn: fn(x0.abs())]


CASES.append(("item branch", m_item_branch))


def m_print_order():
    log = []

    def f(x):
        log.append("a")
        y = x * 2
        log.append("b")
        return y, list(log)

    return f, [lambda fn: fn(x0), lambda fn: fn(x0)]


CASES.append(("side effect order", m_print_order))


def m_property():
    class P:
        def __init__(self):
            self.n = 0

        @property
        def v(self):
            self.n += 1
            return self.n

    p = P()

    def f(x):
        return x * p.v

    return f, [lambda fn: fn(x0), lambda fn: fn(x0), lambda fn: fn(x0)]


CASES.append(("property with side effect", m_property))


def m_functools_partial():
    def g(x, a, b):
        return x * a + b

    def f(x, p):
        return p(x)

    return f, [lambda fn: fn(x0, functools.partial(g, a=2, b=1)), lambda fn: fn(x0, functools.partial(g, a=3, b=1))]


CASES.append(("partial arg", m_functools_partial))


def m_lambda_arg():
    def f(x, h):
        return h(x)

    return f, [lambda fn: fn(x0, lambda t: t * 2), lambda fn: fn(x0, lambda t: t * 3)]


CASES.append(("lambda arg", m_lambda_arg))


def m_sorted_key():
    def f(xs):
        return sorted(xs, key=lambda t: t.sum().item())

    a, b = torch.ones(2), torch.zeros(2)
    return f, [lambda fn: fn([a, b]), lambda fn: fn([b, a])]


CASES.append(("sorted by item", m_sorted_key))


def m_zip_strict():
    def f(xs, ys):
        return [a * b for a, b in zip(xs, ys)]

    return f, [lambda fn: fn([x0, x0], [1, 2]), lambda fn: fn([x0], [3, 4])]


CASES.append(("zip uneven", m_zip_strict))


def m_int_tensor_index():
    def f(x, i):
        return x[i] * 2

    return f, [lambda fn: fn(x0, 1), lambda fn: fn(x0, 2), lambda fn: fn(x0, -1), lambda fn: fn(x0, 10)]


CASES.append(("python int index", m_int_tensor_index))


def m_slice_obj():
    def f(x, s):
        return x[s]

    return f, [lambda fn: fn(x0, slice(1, 3)), lambda fn: fn(x0, slice(0, 4, 2)), lambda fn: fn(x0, slice(None, -1))]


CASES.append(("slice object arg", m_slice_obj))


def m_tuple_unpack():
    def f(x, shape):
        a, b = shape
        return x.reshape(a, b)

    return f, [lambda fn: fn(x0, (2, 2)), lambda fn: fn(x0, (1, 4)), lambda fn: fn(x0, (4, 1))]


CASES.append(("shape tuple arg", m_tuple_unpack))


@dataclasses.dataclass
class OutputDict(collections.OrderedDict):
    """A ModelOutput look-alike: a dataclass whose non-None fields are also dict entries, in
    the order they were set (a key set later comes last, whatever the field order)."""

    a: torch.Tensor = None
    b: torch.Tensor = None

    def __post_init__(self):
        for field in dataclasses.fields(self):
            if getattr(self, field.name) is not None:
                self[field.name] = getattr(self, field.name)

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        object.__setattr__(self, key, value)

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


def m_output_key_order():
    def f(out):
        return out.to_tuple()[0] * 2, list(out.keys())

    def in_field_order(fn):
        return fn(OutputDict(a=x0, b=x0 + 1))

    def b_then_a(fn):
        out = OutputDict(b=x0 + 1)
        out["a"] = x0
        return fn(out)

    return f, [in_field_order, b_then_a, in_field_order]


CASES.append(("output dict keys in insertion order", m_output_key_order))


def m_new_module_changed_and_returned():
    def f(x):
        m = torch.nn.Dropout(0.5)
        m.eval()
        m.tag = x.shape[0]
        return m(x), m

    def c(fn):
        out, module = fn(x0)
        return out, module.training, getattr(module, "tag", None)

    return f, [c, c]


CASES.append(("module made inside, changed, returned", m_new_module_changed_and_returned))


class FlagMeta(type):
    def __instancecheck__(cls, instance):
        return getattr(instance, "flag", False)


class Flagged(metaclass=FlagMeta):
    pass


def m_instancecheck_reads_the_instance():
    class Holder:
        flag = True

    holder = Holder()

    def f(x):
        return x + 1 if isinstance(holder, Flagged) else x - 1

    def set_(v):
        def call(fn):
            holder.flag = v
            return fn(x0)

        return call

    return f, [set_(True), set_(False), set_(True)]


CASES.append(("metaclass __instancecheck__ reading the instance", m_instancecheck_reads_the_instance))


def m_weak_reference_to_a_dropped_object():
    """The program drops the only reference to an object the compiled function read through a
    weak reference: eager frees it at once (the reference answers None, __del__ runs)."""

    class Tracked:
        def __init__(self, log):
            self.log = log

        def __del__(self):
            self.log.append("freed")

    log: list = []
    holder = {"o": Tracked(log)}
    ref = weakref.ref(holder["o"])

    def f(x):
        target = ref()
        return x * (1 if target is None else 2)

    def call(drop=False):
        def c(fn):
            if drop:
                holder.pop("o", None)
            return fn(x0), ref() is None, list(log)

        return c

    return f, [call(), call(), call(drop=True), call()]


CASES.append(("weak reference to an object the program drops", m_weak_reference_to_a_dropped_object))


def m_list_search_by_identity_first():
    """list.count (and index, remove) compare as `in` does: the same object matches itself
    first, whatever its `==` says (a float nan is unequal to itself)."""
    nan = float("nan")
    state = {"nan": nan, "items": [1.0, nan]}

    def f(x):
        # (index and remove, not found by ==, raised ValueError while tracing: the call then ran
        # eagerly, which hid the same mistake.)
        return x * state["items"].count(state["nan"]), state["items"].count(float("nan"))

    return f, [lambda fn: fn(x0), lambda fn: fn(x0)]


CASES.append(("list search by identity first", m_list_search_by_identity_first))


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return (
            isinstance(b, torch.Tensor)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and torch.allclose(a, b, equal_nan=True)
        )
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return type(a) is type(b) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _outcome(call, fn):
    try:
        return call(fn), None
    except Exception as error:  # noqa: BLE001  (compared with eager's)
        return None, type(error)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("name, make", CASES, ids=[name for name, _ in CASES])
def test_compiled_calls_match_eager(name, make, backend):
    eager_fn, eager_calls = make()
    ours_fn, our_calls = make()
    compiled = compiler.compile(ours_fn, backend=backend)
    for number, (eager_call, our_call) in enumerate(zip(eager_calls, our_calls)):
        expected, eager_error = _outcome(eager_call, eager_fn)
        actual, our_error = _outcome(our_call, compiled)
        assert our_error == eager_error, f"call {number}: eager raised {eager_error}, compiled {our_error}"
        assert eager_error is not None or _same(actual, expected), f"call {number}: {actual} != {expected}"
