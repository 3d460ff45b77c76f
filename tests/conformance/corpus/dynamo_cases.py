"""Cases modelled on dynamo-specific test files: test_unspec (Python scalars passed as inputs
and changing between calls, random module values, numpy scalars), test_recompiles (inputs
whose type, value, dtype, grad mode or size changes between calls must recompile or reuse
correctly), test_python_autograd (autograd.Function, custom backward, grads through Python
control flow: train cases), test_sources (values read through globals, closures, attributes of
objects and modules, class attributes) and test_export-style modules (nn.Module forward with
buffers, in-place buffer updates, submodules)."""

import math
import random
from typing import ClassVar

import numpy as np
import torch

from . import add, snippets, vec_grad

GLOBAL_SCALE = 3
GLOBAL_LIST = [1, 2, 3]
GLOBAL_DICT = {"k": 2.0}
GLOBAL_TENSOR = torch.arange(4.0)


class Config:
    scale = 2
    flags: ClassVar[dict] = {"double": True}

    def __init__(self):
        self.offset = 1.5


CONFIG = Config()

NS = {"torch": torch, "math": math, "random": random, "np": np}

# ---- test_unspec: scalars as inputs, changing between calls ---------------------------------
_counter = iter(range(10**9))


def vec_and_int(n):
    return torch.randn(n), n * 3 - 5


def vec_and_float(n):
    return torch.randn(n), n / 3.0


def vec_and_bool(n):
    return torch.randn(n), n % 2 == 0


UNSPEC = [
    ("int_input_add", "return x + k", {"params": "x, k", "make_args": vec_and_int}),
    ("int_input_branch", "if k > 0:\n    return x * k\nreturn x - k", {"params": "x, k", "make_args": vec_and_int}),
    ("int_input_as_size", "return torch.zeros(abs(k) + 1) + x.sum()", {"params": "x, k", "make_args": vec_and_int}),
    ("int_input_floordiv_mod", "return x + k // 4 + k % 4, (k // 4, k % 4)", {"params": "x, k", "make_args": vec_and_int}),
    ("int_input_returned", "return x, k * 2", {"params": "x, k", "make_args": vec_and_int}),
    ("int_input_in_range_loop", "for i in range(abs(k) % 5):\n    x = x + i\nreturn x", {"params": "x, k", "make_args": vec_and_int}),
    ("int_input_index_list", "l = list(range(20))\nreturn x + l[k % 20]", {"params": "x, k", "make_args": vec_and_int}),
    ("int_input_tensor_index", "return x[k % x.shape[0]]", {"params": "x, k", "make_args": vec_and_int}),
    ("float_input_mul", "return x * s", {"params": "x, s", "make_args": vec_and_float}),
    ("float_input_math", "return x * math.sqrt(s) + math.floor(s)", {"params": "x, s", "make_args": vec_and_float}),
    ("float_input_compare", "return x + (s > 2.0), s > 2.0", {"params": "x, s", "make_args": vec_and_float}),
    ("float_input_returned", "return x, s * 2", {"params": "x, s", "make_args": vec_and_float}),
    ("float_input_round_int", "return x + int(s), round(s)", {"params": "x, s", "make_args": vec_and_float}),
    ("bool_input_branch", "return x + 1 if b else x - 1", {"params": "x, b", "make_args": vec_and_bool}),
    ("bool_input_arith", "return x * b + (not b)", {"params": "x, b", "make_args": vec_and_bool}),
    ("numpy_int_input", "return x + k", {"params": "x, k", "make_args": lambda n: (torch.randn(n), np.int64(n))}),
    ("numpy_float_input", "return x * s", {"params": "x, s", "make_args": lambda n: (torch.randn(n), np.float64(n / 2))}),
    ("random_random_scaled", "return x * random.random()"),
    ("random_randint_shape", "return torch.zeros(random.randint(1, 5)) + x.sum()"),
    ("random_uniform_then_graph", "r = random.uniform(10, 20)\ny = x + r\nreturn y, r"),
    ("random_calls_in_loop", "out = x\nfor _ in range(3):\n    out = out + random.random()\nreturn out"),
    ("torch_rand_in_graph", "return x + torch.rand(x.shape[0])", {"exact_rng": False}),
    ("torch_randn_like_shape_only", "return torch.randn_like(x) * 0 + x"),
    ("torch_manual_seed_inside", "torch.manual_seed(7)\nreturn x + torch.rand(x.shape)"),
    ("list_input_of_ints_changes", "return x + sum(l), len(l)", {"params": "x, l", "make_args": lambda n: (torch.randn(n), list(range(n)))}),
    ("tuple_input_of_floats", "return x * t[0] + t[1]", {"params": "x, t", "make_args": lambda n: (torch.randn(n), (n * 0.5, -n * 0.25))}),
    ("none_or_tensor_input", "return x if y is None else x + y", {"params": "x, y", "make_args": lambda n: (torch.randn(n), None if n < 5 else torch.randn(n))}),
    ("str_input_dispatch", "return x.relu() if mode == 'relu' else x.tanh()", {"params": "x, mode", "make_args": lambda n: (torch.randn(n), 'relu' if n < 5 else 'tanh')}),
    ("size_from_item_graph_break", "k = int(x.abs().sum().item()) % 3 + 1\nreturn x.repeat(k)"),
    ("item_value_returned", "v = x.sum().item()\nreturn x + 1, v"),
    ("tolist_values", "return x + 1, [round(v, 3) for v in x.tolist()]"),
    ("scalar_tensor_input_0d", "return x * s", {"params": "x, s", "make_args": lambda n: (torch.randn(n), torch.tensor(float(n)))}),
    ("int64_tensor_input_arith", "return (i * 2 + 1) // 3", {"params": "i", "make_args": lambda n: (torch.randint(-50, 50, (n,)),)}),
    ("int_tensor_true_div_promotes", "return i / 2", {"params": "i", "make_args": lambda n: (torch.randint(-50, 50, (n,)),)}),
    ("bool_tensor_sum_dtype", "return (x > 0).sum(), (x > 0).float().mean()"),
    ("half_input_promotion", "return h + x", {"params": "h, x", "make_args": lambda n: (torch.randn(n).half(), torch.randn(n)), "atol": 1e-3}),
    ("double_input_promotion_with_python_float", "return d * 0.1", {"params": "d", "make_args": lambda n: (torch.randn(n, dtype=torch.float64),)}),
    ("int_input_times_float_tensor", "return x * k", {"params": "x, k", "make_args": vec_and_int}),
    ("complex_tensor_ops", "c = torch.complex(x, x * 2)\nreturn (c * c.conj()).real"),
    ("shape_as_python_ints_to_factory", "return torch.ones(x.shape[0], 2) * x.reshape(-1, 1)"),
]
snippets("dynamo/test_unspec", "unspec", UNSPEC, namespace=NS)

# ---- test_recompiles: what changes between calls --------------------------------------------
RECOMPILE_MAKERS = {
    "dtype_changes": lambda n: (torch.randn(n, dtype=torch.float32 if n < 5 else torch.float64),),
    "requires_grad_changes": lambda n: (torch.randn(n, requires_grad=n >= 5),),
    "ndim_changes": lambda n: (torch.randn(n) if n < 5 else torch.randn(n, 2),),
    "contiguity_changes": lambda n: (torch.randn(n, 3) if n < 5 else torch.randn(3, n).t(),),
    "int_type_changes_to_float": lambda n: (torch.randn(n), 2 if n < 5 else 2.5),
    "list_length_changes": lambda n: (torch.randn(n), [1] * (n - 2)),
    "dict_keys_change": lambda n: (torch.randn(n), {"a": 1} if n < 5 else {"a": 1, "b": 2}),
    "none_to_tensor": lambda n: (torch.randn(n), None if n < 5 else torch.ones(n)),
    "size_one_to_many": lambda n: (torch.randn(1 if n < 5 else n),),
    "size_zero_then_many": lambda n: (torch.randn(0 if n < 5 else n),),
    "module_training_flag_changes": lambda n: (torch.nn.Dropout(0.0).train(n < 5), torch.randn(n)),
    "string_value_changes": lambda n: (torch.randn(n), "add" if n < 5 else "mul"),
    "view_vs_base": lambda n: (torch.randn(n) if n < 5 else torch.randn(2 * n)[::2],),
    "stride_changes_2d": lambda n: (torch.randn(n, n),) if n < 5 else (torch.randn(n, n).t(),),
}
RECOMPILE_BODIES = {
    "dtype_changes": ("x", "return x * 2 + 1, x.dtype"),
    "requires_grad_changes": ("x", "return x * 2, x.requires_grad"),
    "ndim_changes": ("x", "return x.sum(-1), x.dim()"),
    "contiguity_changes": ("x", "return x.contiguous().view(-1)[:3] + 1, x.is_contiguous()"),
    "int_type_changes_to_float": ("x, k", "return x * k, type(k).__name__"),
    "list_length_changes": ("x, l", "return x + len(l)"),
    "dict_keys_change": ("x, d", "return x * sum(d.values()), list(d)"),
    "none_to_tensor": ("x, y", "return x if y is None else x * y"),
    "size_one_to_many": ("x", "return x * x.shape[0], x.shape[0] == 1"),
    "size_zero_then_many": ("x", "return x.sum() + x.numel()"),
    "module_training_flag_changes": ("m, x", "return m(x) + m.training"),
    "string_value_changes": ("x, op", "return x + 2 if op == 'add' else x * 2"),
    "view_vs_base": ("x", "return x.mul(3), x.is_contiguous()"),
    "stride_changes_2d": ("x", "return x @ x, x.stride()"),
}
snippets("dynamo/test_recompiles", "recompiles",
         [(name, RECOMPILE_BODIES[name][1], {"params": RECOMPILE_BODIES[name][0], "make_args": maker})
          for name, maker in RECOMPILE_MAKERS.items()], namespace=NS)


def reads_global_mutated_between_calls(x):
    return x * GLOBAL_DICT["k"]


def make_mutating_global():
    def maker(n):
        GLOBAL_DICT["k"] = float(n)
        return (torch.randn(n),)

    return maker


add("dynamo/test_recompiles", "recompiles.global_dict_value_changes", reads_global_mutated_between_calls, make_mutating_global())

# ---- test_python_autograd: train cases ------------------------------------------------------


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t * t

    @staticmethod
    def backward(ctx, grad):
        (t,) = ctx.saved_tensors
        return 2 * t * grad


class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, k):
        ctx.k = k
        return t.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None


class ClampGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return (grad * out).clamp(-1, 1)


class TwoOutputs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b, a + b

    @staticmethod
    def backward(ctx, ga, gs):
        a, b = ctx.saved_tensors
        return ga * b + gs, ga * a + gs


NS.update(Square=Square, ScaleGrad=ScaleGrad, ClampGrad=ClampGrad, TwoOutputs=TwoOutputs)


def two_grads(n):
    return torch.randn(n, requires_grad=True), torch.randn(n, requires_grad=True)


def linear_and_input(n):
    torch.manual_seed(0)
    return torch.nn.Linear(3, 2), torch.randn(n, 3)


AUTOGRAD = [
    ("function_square", "return Square.apply(x)"),
    ("function_scale_grad", "return ScaleGrad.apply(x, 3.0)"),
    ("function_setup_context", "return ClampGrad.apply(x)"),
    ("function_two_outputs", "p, s = TwoOutputs.apply(x, y)\nreturn p + s", {"params": "x, y", "make_args": two_grads}),
    ("function_in_loop", "for _ in range(2):\n    x = Square.apply(x) * 0.5\nreturn x"),
    ("function_then_ops", "return Square.apply(x.sin()).cos()"),
    ("branch_on_python_value_grads", "k = 3\nreturn x * k if k > 2 else x / k"),
    ("grads_through_list_ops", "parts = [x * i for i in range(3)]\nreturn torch.stack(parts).sum(0)"),
    ("grads_through_dict", "d = {'a': x.sin(), 'b': x.cos()}\nreturn d['a'] * d['b']"),
    ("grads_two_inputs_shared_use", "z = x * y\nreturn z + x", {"params": "x, y", "make_args": two_grads}),
    ("grads_with_detach_partial", "return x.detach() * y + x", {"params": "x, y", "make_args": two_grads}),
    ("grads_inplace_on_intermediate", "y = x * 2\ny.add_(1)\nreturn y * x"),
    ("grads_through_where", "return torch.where(x > 0, x * 2, x.exp())"),
    ("grads_through_indexing", "return x[1:] * x[:-1]"),
    ("grads_reduction_mean_var", "return x.mean() + x.var()"),
    ("grads_matmul_chain", "m = x.reshape(-1, 1) @ x.reshape(1, -1)\nreturn m.sum(0)"),
    ("grads_softmax_logsumexp", "return torch.softmax(x, 0) * torch.logsumexp(x, 0)"),
    ("grads_through_clone_and_view", "return x.clone().view(-1, 1).squeeze(1) ** 2"),
    ("grads_linear_module", "return m(x)", {"params": "m, x", "make_args": linear_and_input}),
    ("grads_linear_module_relu_sum", "return m(x).relu().sum(0)", {"params": "m, x", "make_args": linear_and_input}),
    ("grads_requires_grad_false_input", "return x * y", {"params": "x, y", "make_args": lambda n: (torch.randn(n, requires_grad=True), torch.randn(n))}),
    ("autograd_grad_inside", "y = (x * x).sum()\n(g,) = torch.autograd.grad(y, x, create_graph=True)\nreturn g * 3"),
    ("backward_inside_compiled", "y = (x * 2).sum()\ny.backward()\nreturn x.grad.clone()", {"train": False}),
    ("requires_grad_inside", "w = torch.ones(x.shape[0]).requires_grad_()\nreturn w * x"),
    ("grad_mode_read", "return x * 2 if torch.is_grad_enabled() else x"),
]
snippets("dynamo/test_python_autograd", "autograd", AUTOGRAD, namespace=NS, make_args=vec_grad, train=True)

# ---- test_sources: where values come from ---------------------------------------------------
NS.update(GLOBAL_SCALE=GLOBAL_SCALE, GLOBAL_LIST=GLOBAL_LIST, GLOBAL_TENSOR=GLOBAL_TENSOR, CONFIG=CONFIG, Config=Config)


class Holder:
    def __init__(self, n):
        self.t = torch.randn(n)
        self.items = [torch.randn(n), torch.randn(n)]
        self.meta = {"scale": n}
        self.count = 0


SOURCES = [
    ("global_int", "return x * GLOBAL_SCALE"),
    ("global_tensor", "return x[:4] + GLOBAL_TENSOR if x.shape[0] >= 4 else x"),
    ("global_list_read", "return x + GLOBAL_LIST[1]"),
    ("class_attribute", "return x * Config.scale"),
    ("instance_attribute_global_object", "return x + CONFIG.offset"),
    ("class_attr_dict", "return x * 2 if Config.flags['double'] else x"),
    ("closure_int", "k = 4\ndef inner(t):\n    return t * k\nreturn inner(x)"),
    ("closure_mutated_nonlocal", "k = 1\ndef bump():\n    nonlocal k\n    k += 1\nbump()\nbump()\nreturn x * k"),
    ("closure_tensor", "y = x * 2\ndef inner():\n    return y + 1\nreturn inner()"),
    ("module_attribute_math", "return x * math.pi"),
    ("torch_module_constant", "return x + torch.pi if hasattr(torch, 'pi') else x"),
    ("object_input_attribute", "return h.t + h.items[1] * h.meta['scale']", {"params": "h", "make_args": lambda n: (Holder(n),)}),
    ("object_input_attribute_mutated", "h.count += 1\nh.t = h.t * 2\nreturn h.items[0] + 1", {"params": "h", "make_args": lambda n: (Holder(n),)}),
    ("object_input_new_attribute", "h.extra = h.t.sum()\nreturn h.t", {"params": "h", "make_args": lambda n: (Holder(n),)}),
    ("object_input_list_attribute_append", "h.items.append(h.t)\nreturn len(h.items)", {"params": "h", "make_args": lambda n: (Holder(n),)}),
    ("object_input_del_attribute", "del h.count\nreturn h.t + 1", {"params": "h", "make_args": lambda n: (Holder(n),)}),
    ("default_argument_value", "def g(t, k=5):\n    return t * k\nreturn g(x) + g(x, 1)"),
    ("kwargs_star", "def g(t, **kw):\n    return t * kw['a'] + len(kw)\nreturn g(x, a=2, b=3)"),
    ("args_star", "def g(*ts):\n    return sum(ts)\nreturn g(x, x, x)"),
    ("keyword_only_args", "def g(t, *, k):\n    return t - k\nreturn g(x, k=3)"),
    ("missing_argument_raises", "def g(t, k):\n    return t * k\nreturn g(x)"),
    ("unexpected_keyword_raises", "def g(t):\n    return t\nreturn g(x, z=1)"),
    ("global_function_reference", "return torch.nn.functional.gelu(x)"),
    ("bound_method_of_global_object", "f = CONFIG.__init__\nreturn x + 1"),
    ("staticmethod_and_classmethod", "class K:\n    base = 2\n    @staticmethod\n    def s(t):\n        return t + 1\n    @classmethod\n    def c(cls, t):\n        return t * cls.base\nreturn K.s(x) + K.c(x) + K().c(x)"),
    ("property_on_user_class", "class P:\n    def __init__(self, t):\n        self._t = t\n    @property\n    def doubled(self):\n        return self._t * 2\nreturn P(x).doubled"),
    ("inheritance_super_call", "class A:\n    def f(self, t):\n        return t + 1\nclass B(A):\n    def f(self, t):\n        return super().f(t) * 2\nreturn B().f(x)"),
    ("dunder_methods_user_class", "class V:\n    def __init__(self, t):\n        self.t = t\n    def __add__(self, o):\n        return V(self.t + o.t)\n    def __getitem__(self, i):\n        return self.t[i]\nreturn (V(x) + V(x))[0]"),
    ("user_class_call_dunder", "class F:\n    def __call__(self, t):\n        return t * 3\nreturn F()(x)"),
    ("user_class_eq_hash_in_dict", "class K:\n    def __init__(self, v):\n        self.v = v\n    def __hash__(self):\n        return hash(self.v)\n    def __eq__(self, o):\n        return self.v == o.v\nd = {K(1): 2}\nreturn x + d[K(1)]"),
    ("class_attribute_mutated_inside", "class C:\n    n = 0\nC.n += 5\nreturn x + C.n"),
    ("global_list_mutated_inside", "GLOBAL_LIST.append(0)\nr = x + len(GLOBAL_LIST)\nGLOBAL_LIST.pop()\nreturn r"),
]
snippets("dynamo/test_sources", "sources", SOURCES, namespace=NS)

# ---- test_export-style modules ---------------------------------------------------------------


class BufferCounter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        self.calls.add_(1)
        return self.lin(x) + self.calls


class RunningMean(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.zeros(3))

    def forward(self, x):
        self.mean.mul_(0.9).add_(x.mean(0) * 0.1)
        return x - self.mean


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(3, 4)
        self.b = torch.nn.Linear(3, 4)
        self.use_a = True

    def forward(self, x):
        return self.a(x) if self.use_a else self.b(x)


class ModuleListSum(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(3, 3) for _ in range(3))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x) * (i + 1)
        return x


class DictModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = torch.nn.ModuleDict({"p": torch.nn.Linear(3, 2), "q": torch.nn.Linear(3, 1)})

    def forward(self, x):
        return {k: head(x) for k, head in self.heads.items()}


class AttrCounter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = 0
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        self.steps += 1
        return self.lin(x) * self.steps


class BatchNormModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(x)


class ParamInPlaceNoGrad(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        with torch.no_grad():
            self.w.mul_(0.5)
        return x * self.w


class SequentialModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.GELU(), torch.nn.LayerNorm(8), torch.nn.Linear(8, 2))

    def forward(self, x):
        return self.net(x)


class EmbeddingBagLike(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 3)

    def forward(self, idx):
        return self.emb(idx).sum(0)


MODULES = {
    "buffer_counter_inplace": BufferCounter,
    "running_mean_buffer": RunningMean,
    "branch_on_module_attribute": Branchy,
    "module_list_loop": ModuleListSum,
    "module_dict_outputs": DictModule,
    "python_attribute_counter": AttrCounter,
    "batchnorm_running_stats": BatchNormModule,
    "parameter_inplace_under_no_grad": ParamInPlaceNoGrad,
    "sequential_model": SequentialModel,
}


def module_maker(cls, grad):
    def make(n):
        torch.manual_seed(0)
        module = cls()
        return module, torch.randn(n, 3, requires_grad=grad)

    return make


def module_call(m, x):
    return m(x)


for name, cls in MODULES.items():
    add("dynamo/test_export", f"modules.{name}", module_call, module_maker(cls, False))
    add("dynamo/test_export", f"modules_train.{name}", module_call, module_maker(cls, True), train=True)


def embedding_maker(n):
    torch.manual_seed(0)
    return EmbeddingBagLike(), torch.randint(0, 10, (n,))


add("dynamo/test_export", "modules.embedding_sum", module_call, embedding_maker)
add("dynamo/test_export", "modules_train.embedding_sum", module_call, embedding_maker, train=True)


def compiled_module_call_twice(m, x):
    return m(x) + m(x * 2)


for name in ("buffer_counter_inplace", "python_attribute_counter", "running_mean_buffer"):
    add("dynamo/test_export", f"modules.twice_{name}", compiled_module_call_twice, module_maker(MODULES[name], False))
