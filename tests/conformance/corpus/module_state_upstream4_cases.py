"""One long-lived module changed between calls, in the style of dynamo's test_modules
OptimizedModuleTest (test_param_requires_grad, test_no_op_assignment, test_mark_static_with_freezing,
test_monkeypatching_forward, the hook-guard tests), recast in our own words. Each case keeps
one module for eager and a twin for the compiled run for all its calls (upstream4_support.Twins);
the input maker changes both the same way before each call, and parameters, buffers, grads and
attributes accumulate across calls, so an entry that kept a stale view of the module (a flag,
a dtype, a container's length, a hook, a parameter's identity, requires_grad, a tensor
attribute's shape) gives a result its eager twin does not. Changes: requires_grad flipped, a
buffer's dtype, a ModuleList member swapped, a deep submodule's training flag, an int attribute,
`.data` replaced, a submodule added and deleted, a buffer set to None, weights tied and untied,
the whole module cast to float64, a parametrization registered and removed, `.grad` set or not,
a hook on a deep submodule added and removed, Sequential appended and popped, ModuleDict keys,
ParameterList growing, dropout probability, batch-norm momentum, a new Parameter object, values
written under no_grad, a tensor attribute's shape, an attribute's type, a submodule set to None."""

import torch
import torch.nn.functional as F
from torch.nn.utils import parametrize

from .upstream4_support import Twins, add_case, pick

nn = torch.nn
W = 5
SOURCE = "dynamo/test_modules"


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin1 = nn.Linear(W, W)
        self.bn = nn.BatchNorm1d(W)
        self.lin2 = nn.Linear(W, W)
        self.layers = nn.ModuleList([nn.ReLU(), nn.Linear(W, W)])
        self.register_buffer("shift", torch.zeros(W))
        self.step = 1
        self.scale = 1.0
        self._hooks = []  # handles: private, their ids are a process-wide counter

    def forward(self, x):
        x = self.bn(self.lin1(x)) + self.shift
        for layer in self.layers:
            x = layer(x)
        return self.lin2(x) * self.scale + self.step


class Optional(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)
        self.sub = nn.Linear(W, W)
        self.register_buffer("bias_buf", torch.ones(W))

    def forward(self, x):
        x = self.lin(x)
        if self.sub is not None:
            x = self.sub(x)
        if hasattr(self, "extra"):
            x = self.extra(x)
        if self.bias_buf is not None:
            x = x + self.bias_buf
        return x


class Containers(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(W, W))
        self.table = nn.ModuleDict({"a": nn.Linear(W, W)})
        self.plist = nn.ParameterList([nn.Parameter(torch.randn(W))])

    def forward(self, x):
        x = self.seq(x)
        for key in sorted(self.table):
            x = self.table[key](x) + len(key)
        for p in self.plist:
            x = x * p
        return x


class Tieable(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(W, W, bias=False)
        self.dec = nn.Linear(W, W, bias=False)
        self.own_dec = self.dec.weight

    def forward(self, x):
        return self.dec(torch.tanh(self.enc(x)))


class Dropping(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)
        self.drop = nn.Dropout(0.0)
        self.factor = torch.ones(W)

    def forward(self, x):
        return self.drop(self.lin(x)) * self.factor


class Symmetric(nn.Module):
    def forward(self, w):
        return w.triu() + w.triu(1).transpose(-1, -2)


# ---- what the maker changes, on the twin it hands out ----------------------------------------


def flip_requires_grad(m):
    m.lin2.weight.requires_grad_(pick(True, False))


def shift_dtype(m):
    m.shift = torch.zeros(W, dtype=pick(torch.float32, torch.float64))


def swap_list_member(m):
    m.layers[0] = pick(nn.ReLU(), nn.Tanh(), nn.Identity())


def deep_training_flag(m):
    m.bn.train(pick(True, False))


def int_attribute(m):
    m.step = pick(0, 1, 2)


def replace_data(m):
    if pick(True, False):
        m.lin1.weight.data = torch.randn(W, W)


def submodule_added_or_deleted(m):
    if pick(True, False):
        m.extra = nn.Tanh()
    elif hasattr(m, "extra"):
        del m.extra


def buffer_none(m):
    m.bias_buf = pick(None, torch.ones(W), torch.full((W,), 2.0))


def submodule_none(m):
    m.sub = pick(None, nn.Linear(W, W))


def tie_or_untie(m):
    m.dec.weight = m.enc.weight if pick(True, False) else m.own_dec


def cast_double(m):
    m.to(pick(torch.float32, torch.float64))


def parametrization(m):
    registered = parametrize.is_parametrized(m.lin, "weight")
    if pick(True, False) and not registered:
        parametrize.register_parametrization(m.lin, "weight", Symmetric())
    elif registered:
        parametrize.remove_parametrizations(m.lin, "weight")


def grad_set(m):
    m.lin2.weight.grad = pick(None, torch.ones(W, W))


def deep_hook(m):
    while m._hooks:
        m._hooks.pop().remove()
    if pick(True, False):
        m._hooks.append(m.layers[1].register_forward_hook(lambda mod, inp, out: out * 2))
    if pick(True, False):
        m._hooks.append(m.bn.register_forward_pre_hook(lambda mod, args: (args[0] + 1,)))


def sequential_length(m):
    if len(m.seq) > 1 and pick(True, False):
        del m.seq[-1]
    else:
        m.seq.append(nn.Linear(W, W))


def dict_keys(m):
    key = pick("b", "cc")
    if key in m.table:
        del m.table[key]
    else:
        m.table[key] = nn.Linear(W, W)


def plist_grows(m):
    if len(m.plist) < 3 and pick(True, False):
        m.plist.append(nn.Parameter(torch.randn(W)))


def dropout_p(m):
    m.drop.p = pick(0.0, 1.0)


def bn_momentum(m):
    m.bn.momentum = pick(0.1, 0.9, None)


def new_parameter(m):
    if pick(True, False):
        m.lin1.bias = nn.Parameter(torch.randn(W))


def values_under_no_grad(m):
    with torch.no_grad():
        m.lin1.weight.mul_(pick(0.5, 1.5))


def tensor_attribute_shape(m):
    m.factor = pick(torch.ones(W), torch.full((1, W), 2.0), torch.full((1,), 3.0))


def attribute_type(m):
    m.scale = pick(1.0, 2, torch.tensor(0.5), torch.full((W,), 1.5))


def whole_module_mode(m):
    m.train(pick(True, False))


BLOCK = [
    ("requires_grad_flipped", flip_requires_grad),
    ("buffer_dtype_changed", shift_dtype),
    ("list_member_swapped", swap_list_member),
    ("deep_training_flag", deep_training_flag),
    ("int_attribute_changed", int_attribute),
    ("weight_data_replaced", replace_data),
    ("grad_set_or_cleared", grad_set),
    ("deep_hooks_added_and_removed", deep_hook),
    ("batchnorm_momentum_changed", bn_momentum),
    ("new_parameter_object", new_parameter),
    ("values_written_under_no_grad", values_under_no_grad),
    ("scale_attribute_type_changed", attribute_type),
    ("train_eval_whole_module", whole_module_mode),
    ("cast_to_float64", cast_double),
]
OPTIONAL = [
    ("submodule_added_and_deleted", submodule_added_or_deleted),
    ("buffer_set_to_none", buffer_none),
    ("submodule_set_to_none", submodule_none),
    ("parametrization_registered_and_removed", parametrization),
]
CONTAINERS = [
    ("sequential_appended_and_popped", sequential_length),
    ("module_dict_keys_changed", dict_keys),
    ("parameter_list_grows", plist_grows),
]
OTHERS = [
    ("weights_tied_and_untied", Tieable, tie_or_untie),
    ("dropout_probability_changed", Dropping, dropout_p),
    ("tensor_attribute_shape_changed", Dropping, tensor_attribute_shape),
]


def twin_maker(build, change):
    twins = Twins(build)

    def maker(n):
        m = twins.next()
        change(m)
        dtype = next(m.parameters()).dtype
        return m, torch.randn(n, W, dtype=dtype, requires_grad=True)

    return maker


def call(m, x):
    return m(x)


def call_twice(m, x):
    return m(x), m(x * 2)


for name, change in BLOCK:
    add_case(SOURCE, f"module_state4.{name}", call, twin_maker(Block, change), train=True, atol=1e-4)
    add_case(SOURCE, f"module_state4.{name}_called_twice", call_twice, twin_maker(Block, change), atol=1e-4)
for name, change in OPTIONAL:
    add_case(SOURCE, f"module_state4.{name}", call, twin_maker(Optional, change), train=True)
for name, change in CONTAINERS:
    add_case(SOURCE, f"module_state4.{name}", call, twin_maker(Containers, change), train=True)
for name, build, change in OTHERS:
    add_case(SOURCE, f"module_state4.{name}", call, twin_maker(build, change), train=True)


def reads_grad(m, x):
    w = m.lin2.weight
    return m(x) + (0 if w.grad is None else w.grad.sum()), w.requires_grad


add_case(SOURCE, "module_state4.forward_caller_reads_grad", reads_grad, twin_maker(Block, grad_set), train=True, atol=1e-4)


def functional_over_params(m, x):
    return F.linear(x, m.lin1.weight, m.lin1.bias) + m.shift, [p.shape for p in m.parameters()]


add_case(SOURCE, "module_state4.parameters_read_directly_after_swap", functional_over_params,
    twin_maker(Block, new_parameter), train=True)
