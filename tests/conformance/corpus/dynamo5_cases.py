"""Python scalars beside tensors, a tape-based autograd written in Python, recompilation on
changed inputs, and no-op wrappers, as dynamo's test_unspec, test_python_autograd,
test_recompiles, test_nops and test_interop exercise them (recast in our own words): float,
int and bool arguments that change every call (new values reach the graph, never a stale
constant), numpy scalars, math on them, tensors built from them, ints used as sizes, slice
bounds and loop counts; a Variable class recording a tape of closures and running it backward
with a dict of grads; arguments whose type, dtype, requires_grad, length, dict keys or flags
change between calls (each call must act on what it was given); and functions wrapped by
decorators, functools.partial, staticmethod/classmethod, torch.fx.wrap-style helpers."""

import dataclasses
import functools
import math
import random

import numpy as np
import torch

from .round5_support import sampled_snippets
from .upstream4_support import graph_break


def float_arg(n):
    return torch.randn(n), random.uniform(-3.0, 3.0)


def int_arg(n):
    return torch.randn(n), random.randint(1, 6)


def bool_arg(n):
    return torch.randn(n), random.random() < 0.5


def two_floats(n):
    return torch.randn(n), random.uniform(0.1, 2.0), random.uniform(-1.0, 1.0)


def np_scalar_arg(n):
    return torch.randn(n), np.float64(random.uniform(-2, 2))


UNSPEC = [
    ("float_scales", "return x * a", {"params": "x, a", "make_args": float_arg}),
    ("float_returned", "return x + a, a, a * 2, -a", {"params": "x, a", "make_args": float_arg}),
    ("float_math", "return x * math.sin(a) + math.exp(a / 4), math.floor(a), round(a, 2)", {"params": "x, a", "make_args": float_arg}),
    ("float_compare_branch", "if a > 0:\n    return x + a\nreturn x - a", {"params": "x, a", "make_args": float_arg}),
    ("float_to_tensor", "t = torch.tensor(a)\nreturn x * t, t.dtype", {"params": "x, a", "make_args": float_arg}),
    ("float_list_to_tensor", "t = torch.tensor([a, a * 2, 1.0])\nreturn t, x.sum() * t", {"params": "x, a", "make_args": float_arg}),
    ("float_full_and_fill", "return torch.full((x.shape[0],), a), x.clone().fill_(a), torch.full_like(x, a)", {"params": "x, a", "make_args": float_arg}),
    ("float_in_clamp_and_where", "return x.clamp(min=-abs(a), max=abs(a)), torch.where(x > a, x, a)", {"params": "x, a", "make_args": float_arg}),
    ("float_pow", "return x.abs() ** abs(a), abs(a) ** 0.5", {"params": "x, a", "make_args": float_arg}),
    ("float_int_conversion", "n = int(abs(a)) + 1\nreturn x.repeat(n), n", {"params": "x, a", "make_args": float_arg}),
    ("float_str_format", "return x * a, f'{a:.3f}', str(round(a, 1))", {"params": "x, a", "make_args": float_arg}),
    ("float_two_args_arith", "return x * a + b, a / b if b else 0.0, a // 0.5, a % 0.7", {"params": "x, a, b", "make_args": two_floats}),
    ("float_min_max", "return x * max(a, b), min(a, b, 0.5), abs(b)", {"params": "x, a, b", "make_args": two_floats}),
    ("float_default_then_given", "def g(t, s=0.5):\n    return t * s\nreturn g(x), g(x, a)", {"params": "x, a", "make_args": float_arg}),
    ("float_accumulated_in_loop", "acc = 0.0\nfor i in range(3):\n    acc = acc + a * i\nreturn x + acc, acc", {"params": "x, a", "make_args": float_arg}),
    ("float_nan_checks", "v = a if a > 0 else float('nan')\nreturn x, math.isnan(v), v != v", {"params": "x, a", "make_args": float_arg}),
    ("float_negative_zero", "z = a * 0.0\nreturn x + z, math.copysign(1.0, z), str(z)", {"params": "x, a", "make_args": float_arg}),
    ("int_repeat_and_slice", "return x.repeat(k)[: k + 1], x[:k], k", {"params": "x, k", "make_args": int_arg}),
    ("int_loop_count", "y = x\nfor _ in range(k):\n    y = y * 1.5\nreturn y", {"params": "x, k", "make_args": int_arg}),
    ("int_as_shape", "return torch.zeros(k, 2) + x.sum(), x.new_ones(k)", {"params": "x, k", "make_args": int_arg}),
    ("int_arith", "return x * k, k // 2, k % 3, -k, k ** 2, divmod(k, 4), k << 1, k & 1", {"params": "x, k", "make_args": int_arg}),
    ("int_index", "return x[k % x.shape[0]], x[-k % x.shape[0]]", {"params": "x, k", "make_args": int_arg}),
    ("int_to_float_ops", "return x / k, x * (k / 3), math.sqrt(k)", {"params": "x, k", "make_args": int_arg}),
    ("int_tensor_from", "t = torch.tensor([k, k + 1])\nreturn t, t.dtype, x + t.sum()", {"params": "x, k", "make_args": int_arg}),
    ("int_chunk_and_split", "parts = x.split(k)\nreturn len(parts), [p.sum() for p in parts]", {"params": "x, k", "make_args": int_arg}),
    ("int_topk", "kk = min(k, x.shape[0])\nv, i = x.topk(kk)\nreturn v, i", {"params": "x, k", "make_args": int_arg}),
    ("int_list_len", "l = [x] * k\nreturn len(l), torch.stack(l).sum(0)", {"params": "x, k", "make_args": int_arg}),
    ("int_compare_branch", "if k > 3:\n    return x.cumsum(0)\nreturn x.cumprod(0)", {"params": "x, k", "make_args": int_arg}),
    ("bool_flag_branch", "if flag:\n    return x.relu()\nreturn x.sigmoid()", {"params": "x, flag", "make_args": bool_arg}),
    ("bool_arith_and_tensor", "return x * flag, x + (not flag), torch.tensor(flag), int(flag)", {"params": "x, flag", "make_args": bool_arg}),
    ("numpy_scalar", "return x * a, float(a) * 2, type(a * 2).__name__", {"params": "x, a", "make_args": np_scalar_arg}),
    ("numpy_scalar_to_tensor", "return torch.tensor(a) * x, torch.as_tensor(a).dtype", {"params": "x, a", "make_args": np_scalar_arg}),
    ("item_back_to_python", "v = x.sum().item()\nreturn x * v, v > 0", {}),
    ("random_inside_consistent_type", "r = random.random()\nreturn x.shape, type(r).__name__", {"exact_rng": False}),
    ("tensor_scalar_kwargs", "return torch.add(x, a, alpha=2), torch.mul(x, other=a)", {"params": "x, a", "make_args": float_arg}),
    ("float_across_break", "y = x * a\nbrk()\nreturn y + a, a", {"params": "x, a", "make_args": float_arg}),
    ("float_in_list_arg", "return x * sum(vals), len(vals)", {"params": "x, vals", "make_args": lambda n: (torch.randn(n), [random.random() for _ in range(random.randint(1, 4))])}),
    ("float_in_dict_arg", "return x * cfg['lr'] + cfg.get('wd', 0.0)", {"params": "x, cfg", "make_args": lambda n: (torch.randn(n), {"lr": random.random(), **({"wd": 0.1} if random.random() < 0.5 else {})})}),
    ("float_in_tuple_of_args", "a, b = ab\nreturn x * a - b", {"params": "x, ab", "make_args": lambda n: (torch.randn(n), (random.random(), random.randint(0, 3)))}),
]

NS = {"torch": torch, "math": math, "random": random, "np": np, "functools": functools, "brk": graph_break}
sampled_snippets("dynamo/test_unspec", "unspec5", UNSPEC, namespace=NS)


class Variable:
    """A value with a tape: each op records (inputs, outputs, backward closure)."""

    tape: list = []

    def __init__(self, value, name=None):
        self.value = value
        self.name = name or f"v{len(Variable.tape)}_{id(self) % 97}"

    def __add__(self, other):
        return add(self, other)

    def __mul__(self, other):
        return mul(self, other)

    def sum(self):
        return reduce_sum(self)


def _record(inputs, out, backward):
    Variable.tape.append((inputs, [out.name], backward))
    return out


def add(a, b):
    out = Variable(a.value + b.value)

    def backward(d_out):
        return [d_out[0], d_out[0]]

    return _record([a.name, b.name], out, backward)


def mul(a, b):
    out = Variable(a.value * b.value)

    def backward(d_out):
        return [d_out[0] * b.value, d_out[0] * a.value]

    return _record([a.name, b.name], out, backward)


def reduce_sum(a):
    out = Variable(a.value.sum())

    def backward(d_out):
        return [d_out[0].expand_as(a.value)]

    return _record([a.name], out, backward)


def grad_of(loss, wrt):
    grads = {loss.name: torch.ones_like(loss.value)}
    for inputs, outputs, backward in reversed(Variable.tape):
        d_out = [grads.get(o) for o in outputs]
        if all(d is None for d in d_out):
            continue
        for name, g in zip(inputs, backward(d_out)):
            grads[name] = grads[name] + g if name in grads else g
    return [grads.get(w.name) for w in wrt]


@dataclasses.dataclass
class Node:
    op: str
    args: tuple


ANS = {"torch": torch, "Variable": Variable, "grad_of": grad_of, "add": add, "mul": mul, "Node": Node, "brk": graph_break, "math": math}

AUTOGRAD = [
    ("tape_square_sum", "Variable.tape = []\na = Variable(x, 'a')\nloss = (a * a).sum()\n(g,) = grad_of(loss, [a])\nreturn loss.value, g"),
    ("tape_two_inputs", "Variable.tape = []\na = Variable(x, 'a')\nb = Variable(x.flip(0) + 1, 'b')\nloss = (a * b + a).sum()\nga, gb = grad_of(loss, [a, b])\nreturn ga, gb, len(Variable.tape)"),
    ("tape_matches_torch_autograd", "Variable.tape = []\nt = x.detach().requires_grad_(True)\na = Variable(t, 'a')\nloss = (a * a * a).sum()\n(g,) = grad_of(loss, [a])\n(ref,) = torch.autograd.grad(loss.value, t)\nreturn g, ref"),
    ("tape_reused_variable", "Variable.tape = []\na = Variable(x, 'a')\nc = a + a\nd = c * a\nloss = d.sum()\n(g,) = grad_of(loss, [a])\nreturn g"),
    ("tape_unused_input", "Variable.tape = []\na = Variable(x, 'a')\nb = Variable(x * 2, 'b')\nloss = (a * a).sum()\nga, gb = grad_of(loss, [a, b])\nreturn ga, gb"),
    ("tape_across_break", "Variable.tape = []\na = Variable(x, 'a')\nc = a * a\nbrk()\nloss = (c + a).sum()\n(g,) = grad_of(loss, [a])\nreturn g"),
    ("tape_loop_of_ops", "Variable.tape = []\na = Variable(x, 'a')\nh = a\nfor _ in range(3):\n    h = h * a\nloss = h.sum()\n(g,) = grad_of(loss, [a])\nreturn g, len(Variable.tape)"),
    ("expression_tree_eval", "def ev(node, env):\n    if isinstance(node, str):\n        return env[node]\n    args = [ev(a, env) for a in node.args]\n    if node.op == 'add':\n        return args[0] + args[1]\n    if node.op == 'mul':\n        return args[0] * args[1]\n    if node.op == 'sin':\n        return torch.sin(args[0])\n    raise ValueError(node.op)\ntree = Node('add', (Node('mul', ('x', 'x')), Node('sin', ('x',))))\nreturn ev(tree, {'x': x})"),
    ("dual_numbers_forward_mode", "class Dual:\n    def __init__(self, v, d):\n        self.v, self.d = v, d\n    def __add__(self, o):\n        return Dual(self.v + o.v, self.d + o.d)\n    def __mul__(self, o):\n        return Dual(self.v * o.v, self.d * o.v + self.v * o.d)\nd = Dual(x, torch.ones_like(x))\nr = d * d + d\nreturn r.v, r.d"),
    ("grad_with_torch_autograd_function_tape", "t = x.detach().requires_grad_(True)\nys = [t * i for i in range(1, 4)]\ntotal = sum(y.sum() for y in ys)\n(g,) = torch.autograd.grad(total, t)\nreturn g"),
]
sampled_snippets("dynamo/test_python_autograd", "pyautograd5", AUTOGRAD, namespace=ANS)


FLAGS = {"scale": 2.0, "mode": "add"}


class Config:
    use_relu = True
    depth = 2


def pick_dtype(n):
    dtype = random.choice([torch.float32, torch.float64])
    return (torch.randn(n, dtype=dtype),)


def pick_grad(n):
    return (torch.randn(n, requires_grad=random.random() < 0.5),)


def pick_list(n):
    return ([torch.randn(n) for _ in range(random.randint(1, 4))],)


def pick_dict(n):
    keys = random.sample(["a", "b", "c", "d"], random.randint(1, 4))
    return ({k: torch.randn(n) for k in keys},)


def pick_type(n):
    return (random.choice([torch.randn(n), list(range(n)), tuple(range(n)), n, float(n)]),)


def pick_contiguity(n):
    base = torch.randn(n, 3)
    return (base.t() if random.random() < 0.5 else base.t().contiguous(),)


def pick_global_flag(n):
    FLAGS["scale"] = random.choice([1.0, 2.0, 3.5])
    FLAGS["mode"] = random.choice(["add", "mul"])
    return (torch.randn(n),)


def pick_class_flag(n):
    Config.use_relu = random.random() < 0.5
    Config.depth = random.randint(1, 3)
    return (torch.randn(n),)


def pick_none(n):
    return torch.randn(n), (torch.randn(n) if random.random() < 0.5 else None)


def pick_device_like(n):
    return torch.randn(n), random.choice(["cpu", torch.device("cpu")])


RNS = {"torch": torch, "FLAGS": FLAGS, "Config": Config, "brk": graph_break, "math": math}

RECOMPILES = [
    ("dtype_changes", "return x * 2, x.dtype, x.sum().dtype", {"make_args": pick_dtype}),
    ("requires_grad_changes", "y = x * 3\nreturn y, y.requires_grad, x.requires_grad", {"make_args": pick_grad}),
    ("requires_grad_branch", "if x.requires_grad:\n    return x * 2\nreturn x + 2", {"make_args": pick_grad}),
    ("list_length_changes", "return torch.stack(l).sum(0), len(l)", {"params": "l", "make_args": pick_list}),
    ("list_length_loop", "acc = l[0]\nfor t in l[1:]:\n    acc = acc * t\nreturn acc", {"params": "l", "make_args": pick_list}),
    ("dict_keys_change", "return {k: v * 2 for k, v in d.items()}, sorted(d)", {"params": "d", "make_args": pick_dict}),
    ("dict_key_presence", "if 'a' in d:\n    return d['a'] + 1\nreturn sum(d.values())", {"params": "d", "make_args": pick_dict}),
    ("arg_type_changes", "if isinstance(v, torch.Tensor):\n    return v * 2\nif isinstance(v, (list, tuple)):\n    return type(v)(i * 2 for i in v)\nreturn v * 2", {"params": "v", "make_args": pick_type}),
    ("contiguity_changes", "return x.is_contiguous(), x.contiguous().view(-1), x.stride()", {"make_args": pick_contiguity}),
    ("global_dict_flag", "if FLAGS['mode'] == 'add':\n    return x + FLAGS['scale']\nreturn x * FLAGS['scale']", {"make_args": pick_global_flag}),
    ("class_attribute_flag", "y = x\nfor _ in range(Config.depth):\n    y = y.relu() if Config.use_relu else y.tanh()\n    y = y + 1\nreturn y", {"make_args": pick_class_flag}),
    ("optional_arg", "if y is None:\n    return x * 2\nreturn x + y", {"params": "x, y", "make_args": pick_none}),
    ("device_str_or_object", "return x.to(dev) + 1, str(torch.device(dev))", {"params": "x, dev", "make_args": pick_device_like}),
    ("same_tensor_twice_or_not", "return a + b, a is b", {"params": "a, b", "make_args": lambda n: (lambda t: (t, t) if random.random() < 0.5 else (t, torch.randn(n)))(torch.randn(n))}),
    ("aliasing_views_or_not", "a.add_(1)\nreturn a, b", {"params": "a, b", "make_args": lambda n: (lambda t: (t, t[: n // 2]) if random.random() < 0.5 else (t, torch.randn(n // 2)))(torch.randn(n))}),
    ("rank_changes", "return x.sum(-1), x.dim()", {"make_args": lambda n: (torch.randn(*([n] * random.randint(1, 3))),)}),
    ("int_arg_specialized_or_not", "return x[:k] * k, k", {"params": "x, k", "make_args": lambda n: (torch.randn(n), random.choice([1, 2, n]))}),
    ("string_arg_changes", "return getattr(torch, name)(x), name", {"params": "x, name", "make_args": lambda n: (torch.randn(n), random.choice(['sin', 'cos', 'tanh']))}),
    ("global_flag_across_break", "y = x * FLAGS['scale']\nbrk()\nreturn y + FLAGS['scale']", {"make_args": pick_global_flag}),
    ("zero_size_or_not", "return x.sum(), x.numel(), x.mean() if x.numel() else None", {"make_args": lambda n: (torch.randn(random.choice([0, n])),)}),
    ("one_size_or_not", "return x.expand(3, -1) if x.dim() == 1 and x.shape[0] == 1 else x * 2", {"make_args": lambda n: (torch.randn(random.choice([1, n])),)}),
]
sampled_snippets("dynamo/test_recompiles", "recompiles5", RECOMPILES, namespace=RNS)


def deco_double(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) * 2

    return wrapper


def deco_noop(fn):
    return fn


@deco_double
def doubled(t, k=1):
    return t + k


@deco_noop
def same(t):
    return t - 1


class Ops:
    factor = 3

    @staticmethod
    def st(t):
        return t * 2

    @classmethod
    def cm(cls, t):
        return t * cls.factor

    @property
    def prop(self):
        return self.factor + 1


def with_kw(t, *, alpha=1.0, beta=0.0):
    return t * alpha + beta


NNS = {"torch": torch, "functools": functools, "doubled": doubled, "same": same, "Ops": Ops, "with_kw": with_kw, "deco_double": deco_double, "brk": graph_break}

NOPS = [
    ("wrapped_function", "return doubled(x), doubled(x, k=3), doubled.__name__, doubled.__wrapped__(x)"),
    ("noop_decorator", "return same(x), same.__name__"),
    ("decorator_inside", "@deco_double\ndef g(t):\n    return t * 3\nreturn g(x), g.__name__"),
    ("stacked_decorators_inside", "@deco_double\n@deco_double\ndef g(t):\n    return t + 1\nreturn g(x)"),
    ("partial_of_kw_function", "p = functools.partial(with_kw, alpha=2.0)\nq = functools.partial(p, beta=1.0)\nreturn p(x), q(x), q(x, alpha=0.5)"),
    ("partial_positional", "p = functools.partial(torch.add, x)\nreturn p(1), p(x, alpha=2)"),
    ("static_and_class_methods", "o = Ops()\nreturn Ops.st(x), o.st(x), Ops.cm(x), o.cm(x), o.prop"),
    ("staticmethod_object_called", "sm = Ops.__dict__['st']\nreturn sm.__func__(x), type(sm).__name__"),
    ("lambda_wrapping_builtin", "f = lambda t, *a, **k: torch.clamp(t, *a, **k)\nreturn f(x, -0.5, 0.5), f(x, min=0.0)"),
    ("reduce_over_functions", "fs = [torch.sin, torch.cos, lambda t: t * 2]\nreturn functools.reduce(lambda acc, f: f(acc), fs, x)"),
    ("identity_chain", "def ident(t):\n    return t\nreturn ident(ident(ident(x))) is x, ident(x) + 0"),
    ("torch_no_op_calls", "y = torch.Tensor.contiguous(x)\nz = x.detach().requires_grad_(False)\nreturn y is x, z + 0, x.clone().detach()"),
    ("wrapper_across_break", "@deco_double\ndef g(t):\n    brk()\n    return t * 3\nreturn g(x)"),
    ("method_descriptor_calls", "return torch.Tensor.add(x, 1), torch.Tensor.mul(x, x), torch.Tensor.sum(x)"),
    ("interop_numpy_roundtrip", "a = x.numpy() * 2\nreturn torch.from_numpy(a) + 1, a.dtype.name"),
    ("interop_list_roundtrip", "l = x.tolist()\nreturn torch.tensor(l) * 2, len(l), type(l[0]).__name__"),
    ("interop_python_sum_of_tensor", "return sum(x), sum(x.unbind(0)), max(x.tolist())"),
]
sampled_snippets("dynamo/test_nops", "nops5", NOPS, namespace=NNS)
