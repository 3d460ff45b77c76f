"""More cases modelled on dynamo's test_modules: module containers read every way a forward
does (negative and sliced Sequential/ModuleList indices, ModuleDict items/keys/values, nested
containers, ParameterList/ParameterDict iteration, get_submodule/get_parameter by dotted name),
parametrizations (torch.nn.utils.parametrize, weight_norm, orthogonal), buffers (persistent or
not, replaced, registered inside forward), properties computed from parameters, __getattr__
and __setattr__ overrides on nn.Module subclasses, modules whose __call__ or forward takes
*args/**kwargs, modules passed to functions, super().forward chains, and module-level
iteration (modules(), named_children(), parameters() summed). Recast in our own words."""

import torch
import torch.nn.functional as F
from torch.nn.utils import parametrize

from . import snippets

SOURCE = "dynamo/test_modules"
nn = torch.nn


def seeded(build):
    def make(n):
        torch.manual_seed(0)
        return build(), torch.randn(n, 4)

    return make


def seeded_train(build):
    def make(n):
        torch.manual_seed(0)
        return build(), torch.randn(n, 4, requires_grad=True)

    return make


class Symmetric(nn.Module):
    def forward(self, w):
        return w.triu() + w.triu(1).transpose(-1, -2)


class Scaled(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, w):
        return w * self.k


def symmetric_linear():
    lin = nn.Linear(4, 4)
    parametrize.register_parametrization(lin, "weight", Symmetric())
    return lin


def two_parametrizations():
    lin = nn.Linear(4, 4)
    parametrize.register_parametrization(lin, "weight", Symmetric())
    parametrize.register_parametrization(lin, "weight", Scaled(0.5))
    parametrize.register_parametrization(lin, "bias", Scaled(2.0))
    return lin


def weight_normed():
    return nn.utils.parametrizations.weight_norm(nn.Linear(4, 4))


def orthogonal_linear():
    return nn.utils.parametrizations.orthogonal(nn.Linear(4, 4))


def spectral_normed():
    return nn.utils.parametrizations.spectral_norm(nn.Linear(4, 4))


class WithProperty(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.log_scale = nn.Parameter(torch.zeros(()) + 0.3)

    @property
    def scale(self):
        return self.log_scale.exp()

    @property
    def out_features(self):
        return self.lin.out_features

    def forward(self, x):
        return self.lin(x) * self.scale + self.out_features


class GetattrFallback(nn.Module):
    """A module answering unknown attributes from a wrapped module (like DataParallel/FSDP's
    `module` forwarding)."""

    def __init__(self):
        super().__init__()
        self.module = nn.Linear(4, 4)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias) + self.in_features


class SetattrCounting(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.writes = 0

    def __setattr__(self, name, value):
        if name != "writes" and "writes" in self.__dict__:
            self.__dict__["writes"] += 1
        super().__setattr__(name, value)

    def forward(self, x):
        self.last = x.shape[0]
        self.cache = x.sum()
        return self.lin(x)


class ArgsKwargs(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, *xs, scale=1.0, **extra):
        out = sum(self.lin(x) for x in xs) * scale
        for key in sorted(extra):
            out = out + extra[key]
        return out


class CallOverride(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def __call__(self, x):
        return super().__call__(x * 2) + 1

    def forward(self, x):
        return self.lin(x)


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x).relu()


class Middle(Base):
    def forward(self, x):
        return super().forward(x) * 2


class Top(Middle):
    def forward(self, x):
        return super().forward(x + 1) - super(Middle, self).forward(x)


class Containers(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4), nn.Tanh())
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.heads = nn.ModuleDict({"b": nn.Linear(4, 2), "a": nn.Linear(4, 2)})
        self.plist = nn.ParameterList([nn.Parameter(torch.randn(4)) for _ in range(2)])
        self.pdict = nn.ParameterDict({"shift": nn.Parameter(torch.randn(4)), "gain": nn.Parameter(torch.ones(4))})
        self.nested = nn.ModuleList([nn.ModuleList([nn.Linear(4, 4)]), nn.Sequential(nn.Linear(4, 4))])


class BufferUser(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.randn(4))
        self.register_buffer("temp", torch.ones(4), persistent=False)
        self.register_buffer("maybe", None)
        self.lin = nn.Linear(4, 4)


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4, bias=False)
        self.dec = nn.Linear(4, 4, bias=False)
        self.dec.weight = self.enc.weight


def apply_block(block, x, times=2):
    for _ in range(times):
        x = block(x)
    return x


NS = {"torch": torch, "F": F, "nn": nn, "apply_block": apply_block, "parametrize": parametrize}

PARAMETRIZED = [
    ("symmetric_parametrization", symmetric_linear),
    ("stacked_parametrizations", two_parametrizations),
    ("weight_norm_parametrization", weight_normed),
    ("orthogonal_parametrization", orthogonal_linear),
]
for name, build in PARAMETRIZED:
    snippets(SOURCE, "modules_param", [(name, "return m(x), m.weight.sum()")], namespace=NS, params="m, x", make_args=seeded(build))
    snippets(SOURCE, "modules_param_train", [(name, "return m(x)")], namespace=NS, params="m, x", make_args=seeded_train(build),
             train=True, atol=1e-4, rtol=1e-4)
snippets(SOURCE, "modules_param", [
    ("spectral_norm_eval", "m.eval()\nreturn m(x)"),
    ("cached_parametrization", "with parametrize.cached():\n    return m(x) + m(x * 2), m.weight.shape"),
    ("is_parametrized_query", "return m(x), parametrize.is_parametrized(m), parametrize.is_parametrized(m, 'bias'), type(m.parametrizations.weight).__name__"),
], namespace=NS, params="m, x", make_args=seeded(spectral_normed), atol=1e-4, rtol=1e-4)

CONTAINERS = [
    ("sequential_negative_index", "return m.seq[-1](m.seq[0](x)), len(m.seq)"),
    ("sequential_slice_called", "head = m.seq[:2]\nreturn head(x), type(head).__name__, len(head)"),
    ("sequential_reversed_slice", "y = x\nfor layer in m.seq[::-2]:\n    y = layer(y) if not isinstance(layer, nn.Linear) else layer(y) * 0.5\nreturn y"),
    ("module_list_negative_and_slice", "y = m.layers[-1](x)\nfor layer in m.layers[:-1]:\n    y = layer(y)\nreturn y, len(m.layers[1:])"),
    ("module_list_reversed_enumerate", "y = x\nfor i, layer in reversed(list(enumerate(m.layers))):\n    y = layer(y) * (i + 1)\nreturn y"),
    ("module_list_index_of_layer", "last = m.layers[2]\nreturn last(x), [l is last for l in m.layers]"),
    ("module_dict_items_keys_values", "outs = {k: h(x) for k, h in m.heads.items()}\nreturn outs, list(m.heads.keys()), len(list(m.heads.values())), 'a' in m.heads"),
    ("module_dict_get_by_variable", "key = 'a' if x.shape[0] % 2 else 'b'\nreturn m.heads[key](x)"),
    ("parameter_list_iteration", "y = x\nfor p in m.plist:\n    y = y * p\nreturn y, len(m.plist), m.plist[-1] + 0"),
    ("parameter_dict_items", "y = x\nfor k, p in sorted(m.pdict.items()):\n    y = y * p if k == 'gain' else y + p\nreturn y, list(m.pdict.keys())"),
    ("nested_containers", "a = m.nested[0][0](x)\nb = m.nested[1][0](a)\nreturn b, len(m.nested[0])"),
    ("get_submodule_and_parameter", "lin = m.get_submodule('seq.2')\nw = m.get_parameter('layers.1.weight')\nreturn lin(x) + x @ w.t()"),
    ("modules_and_children_counts", "kinds = [type(c).__name__ for c in m.seq.children()]\nnames = [n for n, _ in m.named_children()]\nreturn x * len(list(m.modules())), kinds, names"),
    ("parameters_summed", "total = sum(p.sum() for p in m.parameters())\nreturn x + total, sum(1 for _ in m.named_parameters())"),
    ("named_parameters_prefix_filter", "w = [p for n, p in m.named_parameters() if n.startswith('layers') and n.endswith('bias')]\nreturn x + sum(w), len(w)"),
    ("parameters_to_vector", "v = nn.utils.parameters_to_vector(m.layers[0].parameters())\nreturn x.sum() * v[:3], v.shape"),
    ("sequential_add_module_inside", "s = nn.Sequential()\ns.add_module('first', m.layers[0])\ns.append(nn.ReLU())\nreturn s(x), len(s)"),
    ("module_list_built_inside_from_children", "ml = nn.ModuleList(list(m.seq.children())[:2])\ny = x\nfor l in ml:\n    y = l(y)\nreturn y"),
    ("module_list_extend_inside", "ml = nn.ModuleList()\nml.extend(m.layers[:2])\nml.insert(0, nn.Identity())\ny = x\nfor l in ml:\n    y = l(y)\nreturn y, len(ml)"),
]
snippets(SOURCE, "modules_containers", CONTAINERS, namespace=NS, params="m, x", make_args=seeded(Containers))
snippets(SOURCE, "modules_containers_train", [c[:2] for c in CONTAINERS[:8]], namespace=NS, params="m, x",
         make_args=seeded_train(Containers), train=True)

BUFFERS = [
    ("buffers_read_and_listed", "return m.lin(x) - m.mean + m.temp, [n for n, _ in m.named_buffers()], m.maybe is None"),
    ("state_dict_skips_non_persistent", "return x + m.mean, sorted(m.state_dict().keys())"),
    ("buffer_updated_in_place", "m.mean.mul_(0.9).add_(x.mean(0) * 0.1)\nreturn m.lin(x - m.mean)"),
    ("buffer_replaced_by_assignment", "m.temp = m.temp * 2\nreturn x * m.temp, m.temp is m._buffers['temp']"),
    ("buffer_registered_inside", "m.register_buffer('seen', x.detach().sum(0))\nreturn m.lin(x) + m.seen, 'seen' in dict(m.named_buffers())"),
    ("none_buffer_filled", "m.maybe = x.detach()[0].clone()\nreturn m.lin(x) + m.maybe"),
    ("buffers_cast_to_half_and_back", "b = m.mean.half().float()\nreturn x + b"),
]
snippets(SOURCE, "modules_buffers", BUFFERS, namespace=NS, params="m, x", make_args=seeded(BufferUser))

CLASSES = [
    ("property_from_parameters", WithProperty, "return m(x), m.out_features"),
    ("getattr_forwards_to_wrapped", GetattrFallback, "return m(x), m.out_features"),
    ("setattr_override_counts", SetattrCounting, "return m(x), m.writes"),
    ("call_override_wraps_forward", CallOverride, "return m(x)"),
    ("super_forward_chain", Top, "return m(x)"),
    ("tied_weights", Tied, "return m.dec(m.enc(x)), m.dec.weight is m.enc.weight, len(list(m.parameters()))"),
    ("module_passed_to_function", Base, "return apply_block(m, x), apply_block(m.lin, x, times=3)"),
    ("args_kwargs_forward", ArgsKwargs, "return m(x, x * 2, scale=0.5, b=1.0, a=x)"),
    ("args_kwargs_forward_unpacked", ArgsKwargs, "xs = [x, x + 1]\nkw = {'scale': 2.0, 'z': 3}\nreturn m(*xs, **kw)"),
    ("forward_called_by_name", Base, "return getattr(m, 'forward')(x), m.__class__.__name__"),
    ("module_repr_fields", Base, "return m(x), m.lin.in_features, m.lin.extra_repr()"),
    ("requires_grad_toggled_inside", Base, "m.requires_grad_(False)\ny = m(x)\nm.requires_grad_(True)\nreturn y, y.requires_grad"),
    ("train_eval_reported", Middle, "m.eval()\na = m.training\nm.train()\nreturn m(x), a, m.training, m.lin.training"),
    ("zero_grad_inside", Base, "m.zero_grad()\nreturn m(x), m.lin.weight.grad is None"),
    ("apply_fn_inside", Base, "seen = []\nm.apply(lambda mod: seen.append(type(mod).__name__))\nreturn m(x), seen"),
]
for name, build, body in CLASSES:
    snippets(SOURCE, "modules_classes", [(name, body)], namespace=NS, params="m, x", make_args=seeded(build))
for name, build, body in CLASSES[:8]:
    snippets(SOURCE, "modules_classes_train", [(name, body)], namespace=NS, params="m, x", make_args=seeded_train(build), train=True)

BUILT_INSIDE = [
    ("new_module_eval_and_attribute_returned", "m = nn.Dropout(0.5)\nm.eval()\nm.tag = x.shape[0]\nreturn m(x), m, m.training, m.tag"),
    ("new_sequential_of_new_modules_eval", "s = nn.Sequential(nn.Tanh(), nn.Dropout(0.3))\ns.eval()\nreturn s(x), [c.training for c in s]"),
    ("new_empty_sequential_filled", "s = nn.Sequential()\ns.append(nn.Tanh())\ns.add_module('act', nn.ReLU())\nreturn s(x), len(s)"),
]
snippets(SOURCE, "modules_built_inside", BUILT_INSIDE, namespace=NS)


class Registry(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("buf", torch.ones(4))
        self.plain = 1.0


REGISTRY_WRITES = [
    ("tensor_assigned_to_buffer_name_then_listed", "m.buf = x.detach()[0] * 0 + 2\nreturn m.lin(x) * m.buf, [n for n, _ in m.named_buffers()], sum(b.sum() for b in m.buffers())"),
    ("none_assigned_to_parameter", "m.lin.bias = None\nreturn m.lin(x), [n for n, _ in m.lin.named_parameters()]"),
    ("module_replaces_plain_attribute", "m.plain = nn.Identity()\nreturn m.plain(x), [n for n, _ in m.named_children()]"),
    ("submodule_deleted_then_children", "del m.lin\nreturn x * m.buf, [n for n, _ in m.named_children()], hasattr(m, 'lin')"),
    ("register_buffer_over_attribute_raises", "try:\n    m.register_buffer('plain', x)\nexcept KeyError as e:\n    return x, 'exists' in str(e)\nreturn x * 0, False"),
    ("assign_tensor_to_parameter_raises", "try:\n    m.lin.weight = x\nexcept TypeError:\n    return x + 1\nreturn x"),
    ("state_dict_after_buffer_write", "m.buf = m.buf * 3\nsd = m.state_dict()\nreturn sd['buf'] + x, sorted(sd)"),
]
snippets(SOURCE, "modules_registry_writes", REGISTRY_WRITES, namespace=NS, params="m, x", make_args=seeded(Registry))


class Scale(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(x) * self.k


class Chain(nn.Module):
    def __init__(self, *blocks):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


NS.update({"Scale": Scale, "Chain": Chain})

USER_BUILT_INSIDE = [
    ("user_module_without_parameters", "m = Scale(x.shape[0])\nreturn m(x), m.k, m.training"),
    ("user_module_returned", "m = Scale(2.0)\ny = m(x)\nm.k = 3.0\nreturn y, m"),
    ("user_module_eval_then_called", "m = Scale(2.0).eval()\nreturn m(x), m.training, m.act.training"),
    ("user_container_of_new_modules", "c = Chain(Scale(2.0), nn.Tanh(), Scale(0.5))\nreturn c(x), len(c.blocks)"),
    ("user_module_named_children", "m = Scale(2.0)\nreturn m(x), [n for n, _ in m.named_children()], len(list(m.parameters()))"),
]
snippets(SOURCE, "modules_user_built_inside", USER_BUILT_INSIDE, namespace=NS)
