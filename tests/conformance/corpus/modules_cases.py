"""Cases modelled on dynamo's test_modules: nn.Module state that a compiled entry reads and must
guard or take as an input. Each call builds its module(s) afresh with a random configuration
(the runner seeds every call differently), so the second call at the same size is a cache hit
only if nothing the first trace assumed has changed: attribute values, training flags, hooks,
submodule classes, container lengths, parameter aliasing. A second group reuses one module
object that lives in this file and that the input maker mutates between calls (attribute,
hook, parameter or submodule replaced), which is the case an identity guard alone misses.
Forward bodies also mutate their module (buffers, Python attributes, new attributes), which
the runner compares after each call."""

import random
import types

import torch
import torch.nn.functional as F

from . import add

SOURCE = "dynamo/test_modules"
nn = torch.nn


def pick(*options):
    return random.choice(options)


def seeded(make):
    """An input maker that builds modules with fixed weights (so eager and compiled copies
    agree) and a random configuration drawn before the weights."""

    def maker(n):
        config = random.random()
        torch.manual_seed(0)
        random.seed(int(config * 1e9))
        return make(n)

    return maker


def call_module(m, x):
    return m(x)


def case(name, make, fn=call_module, **options):
    add(SOURCE, f"nn_module.{name}", fn, seeded(make), **options)


# ---- attributes read by forward ---------------------------------------------------------------


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.scale = pick(0.5, 2.0, -1.0)
        self.count = pick(1, 2, 3)
        self.flag = pick(True, False)
        self.mode = pick("relu", "tanh", "sigmoid")

    def forward(self, x):
        for _ in range(self.count):
            x = self.lin(x) * self.scale
        if self.flag:
            x = x + 1
        if self.mode == "relu":
            return F.relu(x)
        if self.mode == "tanh":
            return torch.tanh(x)
        return torch.sigmoid(x)


case("attr_float_int_bool_str", lambda n: (Scaled(), torch.randn(n, 3)))
case("attr_float_int_bool_str_train", lambda n: (Scaled(), torch.randn(n, 3, requires_grad=True)), train=True)


class OptionalLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(3, 3)
        self.layer2 = pick(None, nn.Linear(3, 3))

    def forward(self, x):
        x = self.layer1(x)
        if self.layer2 is not None:
            x = self.layer2(x)
        return x


case("optional_submodule_none_or_linear", lambda n: (OptionalLayer(), torch.randn(n, 3)))


class TrainingBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(3, 3)
        self.linear2 = nn.Linear(3, 3)
        self.train(pick(True, False))

    def forward(self, x):
        mod = self.linear1 if self.training else self.linear2
        return F.relu(mod(x))


case("training_flag_selects_layer", lambda n: (TrainingBranch(), torch.randn(n, 3)))


class BatchNormTrainEval(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)
        self.bn.running_mean.normal_()
        self.bn.running_var.uniform_(0.5, 2.0)
        self.train(pick(True, False))

    def forward(self, x):
        return self.bn(x) * 2


case("batchnorm_train_or_eval", lambda n: (BatchNormTrainEval(), torch.randn(n, 3)))
case("batchnorm_train_or_eval_grads", lambda n: (BatchNormTrainEval(), torch.randn(n, 3, requires_grad=True)), train=True)


class SubmoduleTrainingOnly(nn.Module):
    """Only the submodule's flag differs from the parent's."""

    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)
        self.inner = TrainingBranch()
        self.inner.training = pick(True, False)
        self.drop.train(False)

    def forward(self, x):
        return self.drop(self.inner(x))


case("submodule_training_flag_only", lambda n: (SubmoduleTrainingOnly(), torch.randn(n, 3)))


class ActivationMember(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(3, 3)
        self.activation = pick(F.relu, torch.tanh, None, torch.sigmoid)

    def forward(self, x):
        x = self.linear1(x)
        if self.activation is not None:
            x = self.activation(x)
        if self.activation is None:
            x = -x
        return x


case("function_member_changes", lambda n: (ActivationMember(), torch.randn(n, 3)))


class Cfg:
    def __init__(self):
        self.val = pick(0.5, 1.5)
        self.count = pick(1, 2)
        self.opts = {"bias": pick(0.0, 1.0)}


class CfgModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = Cfg()
        self.layer = nn.Linear(3, 3)

    def forward(self, x):
        for _ in range(self.cfg.count):
            x = self.layer(x + self.cfg.val)
        return x + self.cfg.opts["bias"]


case("plain_config_object_attributes", lambda n: (CfgModule(), torch.randn(n, 3)))


class DictConfig(nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = {"scale": pick(1.0, 3.0), "layers": pick(["a"], ["a", "b"])}
        self.weight = nn.Parameter(torch.randn(3))

    def forward(self, x):
        for _ in self.cfg["layers"]:
            x = x * self.weight * self.cfg["scale"]
        return x


case("dict_config_attribute", lambda n: (DictConfig(), torch.randn(n, 3)))


class FloatList(nn.Module):
    def __init__(self):
        super().__init__()
        self.coeffs = [random.choice((0.5, 1.0, 2.0)) for _ in range(3)]
        self.index = pick(0, 1, 2)

    def forward(self, x):
        return x * self.coeffs[self.index] + sum(self.coeffs)


case("list_attribute_indexed_by_int_attribute", lambda n: (FloatList(), torch.randn(n)))


class TensorAttribute(nn.Module):
    """A plain tensor attribute (neither parameter nor buffer), replaced per instance."""

    def __init__(self):
        super().__init__()
        self.scale = torch.randn(1, 3) * pick(1.0, 10.0)
        self.layers = (torch.randn(1, 3), torch.randn(3, 1)) if pick(True, False) else (torch.randn(1, 3),)

    def forward(self, x):
        x = x * self.scale
        for t in self.layers:
            x = x * t
        return x


case("plain_tensor_attributes", lambda n: (TensorAttribute(), torch.randn(3, 3)))


class GetattrByName(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)
        self.which = pick("a", "b")
        if pick(True, False):
            self.optional = 2.0

    def forward(self, x):
        x = getattr(self, self.which)(x)
        if hasattr(self, "optional"):
            x = x * self.optional
        return x


case("getattr_by_name_and_hasattr", lambda n: (GetattrByName(), torch.randn(n, 3)))


class IsinstanceChild(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = pick(nn.ReLU(), nn.Tanh(), nn.Identity(), nn.LeakyReLU(pick(0.1, 0.3)))

    def forward(self, x):
        if isinstance(self.act, nn.Identity):
            return x * 10
        return self.act(x)


case("submodule_class_changes", lambda n: (IsinstanceChild(), torch.randn(n)))


class LeakyConfig(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.LeakyReLU(pick(0.01, 0.5))
        self.elu = nn.ELU(alpha=pick(1.0, 2.0))
        self.drop = nn.Dropout(pick(0.0, 0.3)).eval()

    def forward(self, x):
        return self.drop(self.act(x) + self.elu(x))


case("builtin_submodule_config_changes", lambda n: (LeakyConfig(), torch.randn(n)))


class ShadowedMethod(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)
        if pick(True, False):
            self.scale = 3

    def scale(self, x):
        return x * -1

    def forward(self, x):
        if callable(self.scale):
            return self.scale(self.linear(x))
        return self.linear(x) * self.scale


case("instance_attribute_shadows_method", lambda n: (ShadowedMethod(), torch.randn(n, 3)))


class Alias(nn.Module):
    def __init__(self):
        super().__init__()
        self._scale = torch.randn(1, 3)

    @property
    def scale_alias(self):
        return self._scale

    @staticmethod
    def apply(scale, mod, x):
        return mod(x) * scale

    @classmethod
    def twice(cls, x):
        return x * 2

    def forward(self, x):
        return self.twice(x * self.scale_alias)


case("property_staticmethod_classmethod", lambda n: (Alias(), torch.randn(n, 3)))


class IntArg(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(3, 3)

    def forward(self, x, offset=1):
        return F.relu(self.layer1(x)) + offset


case("int_argument_default_and_passed", lambda n: (IntArg(), torch.randn(n, 3), pick(1, 2, None)),
     fn=lambda m, x, k: m(x) if k is None else m(x, offset=k))


# ---- containers of modules --------------------------------------------------------------------


class ListOfLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(3, 3) for _ in range(pick(1, 2, 3)))

    def forward(self, x):
        for i in range(len(self.layers)):
            x = self.layers[i](x) * (i + 1)
        return x


case("module_list_length_changes", lambda n: (ListOfLayers(), torch.randn(n, 3)))
case("module_list_length_changes_train", lambda n: (ListOfLayers(), torch.randn(n, 3)), train=True)


class ListIndexedByAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3), nn.Tanh()])
        self.index = pick(0, 2, -1, -2)

    def forward(self, x):
        return self.layers[self.index](x)


case("module_list_indexed_by_int_attribute", lambda n: (ListIndexedByAttribute(), torch.randn(n, 3)))


def index_argument(n):
    return ListIndexedByAttribute(), torch.randn(n, 3), pick(0, 1, 2, 3)


case("module_list_indexed_by_int_argument", index_argument, fn=lambda m, x, i: m.layers[i](x))


class ListSlicesAndZips(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3), nn.ReLU()])

    def forward(self, x):
        for layer in self.layers[1:]:
            x = layer(x)
        for idx, layer in enumerate(self.layers[::-1]):
            x = layer(x) * idx
        for layer, val in zip(self.layers, (1, 2, 3, 4)):
            x = layer(x) + val
        return x


case("module_list_slices_enumerate_zip", lambda n: (ListSlicesAndZips(), torch.randn(n, 3)))


class NestedModuleList(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.ModuleList([nn.Linear(3, 3), pick(nn.ReLU(), nn.Tanh())]) for _ in range(pick(1, 2)))

    def forward(self, x):
        for layer, act in self.layers:
            x = act(layer(x))
        return x


case("nested_module_list_unpacked", lambda n: (NestedModuleList(), torch.randn(n, 3)))


class CustomGetItem(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3)][: pick(1, 3)])

    def __getitem__(self, idx):
        return self.layers[idx]

    def __len__(self):
        return len(self.layers)

    def forward(self, x):
        for i in range(len(self)):
            x = self[i](x)
        return x


case("custom_getitem_and_len", lambda n: (CustomGetItem(), torch.randn(n, 3)))


class DictByKey(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"lin": nn.Linear(3, 3), "act": nn.Tanh()})
        if pick(True, False):
            self.heads["extra"] = nn.Linear(3, 3)
        self.key = pick("lin", "act")

    def forward(self, x):
        x = self.heads[self.key](x)
        if "extra" in self.heads:
            x = self.heads["extra"](x)
        return x


case("module_dict_key_and_contains", lambda n: (DictByKey(), torch.randn(n, 3)))


class DictIteration(nn.Module):
    def __init__(self):
        super().__init__()
        names = ["lrelu", "prelu", "tanh"]
        random.shuffle(names)
        table = {"lrelu": nn.LeakyReLU(), "prelu": nn.PReLU(), "tanh": nn.Tanh()}
        self.activations = nn.ModuleDict([(k, table[k]) for k in names])

    def forward(self, x):
        out = []
        for name in self.activations:
            x = self.activations[name](x) + 1
            out.append(name)
        for act in self.activations.values():
            x = act(x)
        for name, act in self.activations.items():
            x = act(x) * len(name)
        return x, out


case("module_dict_iteration_order", lambda n: (DictIteration(), torch.randn(n)))


class DenseBlock(nn.ModuleDict):
    def __init__(self):
        super().__init__()
        for i in range(pick(1, 2, 3)):
            self.add_module(f"layer{i}", nn.Identity())

    def forward(self, x):
        features = [x]
        for layer in self.values():
            features.append(1.5 * torch.cat([layer(f) for f in features], 0).sum(0, keepdim=True).expand_as(x))
        return torch.cat(features, 0)


case("module_dict_subclass_values", lambda n: (DenseBlock(), torch.randn(2, n)))


class ParamContainers(nn.Module):
    def __init__(self):
        super().__init__()
        self.pdict = nn.ParameterDict({k: nn.Parameter(torch.randn(3)) for k in pick(["a"], ["a", "b"])})
        self.plist = nn.ParameterList(nn.Parameter(torch.randn(3)) for _ in range(pick(1, 2)))

    def forward(self, x):
        for k, p in self.pdict.items():
            x = x * p + len(k)
        for p in self.plist:
            x = x + p
        return x * self.pdict["a"]


case("parameter_dict_and_list", lambda n: (ParamContainers(), torch.randn(n, 3)))
case("parameter_dict_and_list_train", lambda n: (ParamContainers(), torch.randn(n, 3)), train=True)


class SequentialLength(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(*[nn.Linear(3, 3) if i % 2 == 0 else nn.ReLU() for i in range(pick(1, 2, 4))])

    def forward(self, x):
        return self.layers(x) + len(self.layers)


case("sequential_length_changes", lambda n: (SequentialLength(), torch.randn(n, 3)))


class ChildrenIteration(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 3)
        if pick(True, False):
            self.l2 = nn.ReLU()
        self.l3 = nn.Linear(3, 3)

    def forward(self, x):
        for block in self.children():
            x = block(x)
        names = [name for name, _ in self.named_children()]
        total = sum(p.sum() for p in self.parameters())
        count = len(list(self.modules()))
        return x + total, names, count


case("children_parameters_modules", lambda n: (ChildrenIteration(), torch.randn(n, 3)))


class NamedParams(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.randn(3))
        self.b = nn.Parameter(torch.randn(3))
        self.register_buffer("buf", torch.randn(3), persistent=pick(True, False))
        if pick(True, False):
            self.register_buffer("maybe", None)

    def forward(self, x):
        for name, p in self.named_parameters():
            x = x + p * (2 if name == "a" else 3)
        for name, b in self.named_buffers():
            x = x - b
        return x, [name for name, _ in self.named_buffers()]


case("named_parameters_and_buffers", lambda n: (NamedParams(), torch.randn(n, 3)))


# ---- parameters: aliasing, replacement, requires_grad -------------------------------------------


class TiedOrNot(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 3)
        self.l2 = nn.Linear(3, 3)
        if pick(True, False):
            self.l2.weight = self.l1.weight

    def forward(self, x):
        with torch.no_grad():
            self.l1.weight.mul_(0.5)
        return self.l2(x)


case("tied_weight_or_not", lambda n: (TiedOrNot(), torch.randn(n, 3)))


class SharedOrNot(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = self.a if pick(True, False) else nn.Linear(3, 3)
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.a.weight.data.add_(1.0)
        return self.b(x) + self.a.bias.sum()


case("shared_submodule_or_not", lambda n: (SharedOrNot(), torch.randn(n, 3)))


def same_or_two(n):
    a = nn.Linear(3, 3)
    b = a if pick(True, False) else nn.Linear(3, 3)
    return a, b, torch.randn(n, 3)


def add_then_call(a, b, x):
    with torch.no_grad():
        a.bias.add_(1)
    return b(x)


case("same_module_twice_or_two_modules", same_or_two, fn=add_then_call)


class RequiresGradMix(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.lin.weight.requires_grad_(pick(True, False))
        self.lin.bias.requires_grad_(pick(True, False))

    def forward(self, x):
        y = self.lin(x)
        return y, y.requires_grad


case("parameter_requires_grad_changes", lambda n: (RequiresGradMix(), torch.randn(n, 3)), train=True)


class DtypeModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.to(pick(torch.float32, torch.float64))

    def forward(self, x):
        return self.lin(x.to(self.lin.weight.dtype)), self.lin.weight.dtype


case("module_dtype_changes", lambda n: (DtypeModule(), torch.randn(n, 3)))


class ParameterRebound(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))

    def forward(self, x):
        y = x * self.w
        self.w = nn.Parameter(self.w.detach() * 2)
        return y + self.w


case("parameter_rebound_in_forward", lambda n: (ParameterRebound(), torch.randn(n, 3)))


class ParamZeroDimMutate(nn.Module):
    def __init__(self):
        super().__init__()
        self.step = nn.Parameter(torch.tensor(float(pick(1, 2))), requires_grad=False)

    def forward(self, x):
        self.step.add_(1)
        return x * self.step


case("zero_dim_parameter_mutated", lambda n: (ParamZeroDimMutate(), torch.randn(n)))


# ---- buffers and Python state changed by forward --------------------------------------------


class BufferRebound(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(3))
        self.register_buffer("count", torch.tensor(pick(0, 5)))

    def forward(self, x):
        self.total = self.total + x.sum(0)
        self.count += 1
        return self.total / self.count


case("buffer_rebound_and_augmented", lambda n: (BufferRebound(), torch.randn(n, 3)))


class BufferEma(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("ema", torch.randn(3))
        self.momentum = pick(0.1, 0.9)
        self.train(pick(True, False))

    def forward(self, x):
        if self.training:
            self.ema.lerp_(x.mean(0), self.momentum)
        return x - self.ema


case("buffer_ema_only_in_training", lambda n: (BufferEma(), torch.randn(n, 3)))


class NewAttributes(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.history = []
        self.calls = pick(0, 10)

    def forward(self, x):
        self.last = self.lin(x)
        self.history.append(self.calls)
        self.calls += 1
        self.lin.seen = True
        return self.last * self.calls


case("forward_sets_attributes", lambda n: (NewAttributes(), torch.randn(n, 3)))


def call_twice(m, x):
    return m(x) + m(x)


case("forward_sets_attributes_called_twice", lambda n: (NewAttributes(), torch.randn(n, 3)), fn=call_twice)
case("buffer_rebound_called_twice", lambda n: (BufferRebound(), torch.randn(n, 3)), fn=call_twice)


class TrainEvalFlipInside(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        self.eval()
        a = self.drop(self.bn(x))
        self.train()
        b = self.bn(x)
        return a + b, self.training, self.bn.training


case("train_eval_flipped_inside_forward", lambda n: (TrainEvalFlipInside(), torch.randn(n, 3)))


class SubmoduleSwappedInside(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()

    def forward(self, x):
        a = self.act(x)
        self.act = nn.Tanh()
        return a + self.act(x)


case("submodule_swapped_inside_forward", lambda n: (SubmoduleSwappedInside(), torch.randn(n)))


class DelAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.tmp = pick(1.0, 2.0)
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        y = self.lin(x) * self.tmp
        del self.tmp
        return y, hasattr(self, "tmp")


case("del_attribute_in_forward", lambda n: (DelAttribute(), torch.randn(n, 3)))


# ---- hooks --------------------------------------------------------------------------------------


class Affine(nn.Module):
    def forward(self, x):
        return 2 * x + 1


def output_hook(module, inputs, output):
    return 2 * output + 1


def other_output_hook(module, inputs, output):
    return output - 3


def input_hook(module, inputs):
    return (inputs[0] * 10,)


def kwargs_pre_hook(module, args, kwargs):
    return (args[0] + 1,), kwargs


def hooked(n):
    m = Affine()
    if pick(True, False):
        m.register_forward_hook(output_hook)
    if pick(True, False):
        m.register_forward_pre_hook(input_hook)
    return m, torch.randn(n)


case("forward_and_pre_hooks_present_or_not", hooked)
case("forward_and_pre_hooks_inner_call", hooked, fn=lambda m, x: m(x * 2 + 1) * 3)


def hook_order(n):
    m = Affine()
    m.register_forward_hook(output_hook)
    m.register_forward_hook(other_output_hook, prepend=pick(True, False))
    return m, torch.randn(n)


case("forward_hook_prepend_order", hook_order)


def hook_replaced(n):
    m = Affine()
    handle = m.register_forward_hook(output_hook)
    if pick(True, False):
        m._forward_hooks[handle.id] = other_output_hook
    return m, torch.randn(n)


case("forward_hook_function_replaced_in_dict", hook_replaced)


def hook_with_kwargs(n):
    m = Affine()
    if pick(True, False):
        m.register_forward_pre_hook(kwargs_pre_hook, with_kwargs=True)
    return m, torch.randn(n)


case("pre_hook_with_kwargs", hook_with_kwargs)


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Affine()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        return self.lin(self.inner(x))


def inner_hooked(n):
    m = Outer()
    if pick(True, False):
        m.inner.register_forward_hook(output_hook)
    if pick(True, False):
        m.lin.register_forward_hook(other_output_hook)
    return m, torch.randn(n, 3)


case("hooks_on_submodules", inner_hooked)
case("hooks_on_submodules_train", inner_hooked, train=True)


def recording_hooks(n):
    m = Outer()
    m.seen = []

    def record(module, inputs, output):
        m.seen.append(type(module).__name__)

    for sub in m.modules():
        sub.register_forward_hook(record)
    return m, torch.randn(n, 3)


case("hooks_record_activations_each_call", recording_hooks)


def forward_bypasses_hooks(n):
    m = Affine()
    m.register_forward_hook(output_hook)
    return m, torch.randn(n)


case("forward_called_directly_skips_hooks", forward_bypasses_hooks, fn=lambda m, x: m.forward(x) + m(x))
case("dunder_call_runs_hooks", forward_bypasses_hooks, fn=lambda m, x: m.__call__(x))


def removed_hook(n):
    m = Affine()
    handle = m.register_forward_hook(output_hook)
    return m, handle, torch.randn(n)


def remove_then_call(m, handle, x):
    a = m(x)
    handle.remove()
    return a, m(x)


case("hook_removed_inside", removed_hook, fn=remove_then_call)


class StatefulHook:
    def __init__(self, scale):
        self.scale = scale
        self.calls = 0

    def __call__(self, module, inputs, output):
        self.calls += 1
        return output * self.scale


def stateful_hook(n):
    m = Affine()
    hook = StatefulHook(pick(2.0, -1.0))
    m.register_forward_hook(hook)
    return m, hook, torch.randn(n)


case("callable_object_hook_with_state", stateful_hook, fn=lambda m, hook, x: m(x) + m(x))


class PatchedForward(nn.Module):
    def forward(self, x):
        return x + 1


def patched(n):
    m = PatchedForward()
    if pick(True, False):
        m.forward = types.MethodType(lambda self, x: x * 7, m)
    return m, torch.randn(n)


case("instance_forward_patched", patched)


# ---- one module object kept in this file, changed between calls by the input maker ------------


class Shared(nn.Module):
    shift = 0.0  # a class attribute, changed on the class between calls

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.act = nn.ReLU()
        self.scale = 1.0
        self.layers = nn.ModuleList([nn.Linear(3, 3)])
        self.register_buffer("offset", torch.zeros(3))

    def forward(self, x):
        x = self.act(self.lin(x)) * self.scale
        for layer in self.layers:
            x = layer(x)
        return x + self.offset + self.shift


torch.manual_seed(0)
SHARED = Shared()
SHARED_HANDLES = []
BASE_LIN = SHARED.lin
BASE_LAYER = SHARED.layers[0]


def reset_shared():
    for handle in SHARED_HANDLES:
        handle.remove()
    SHARED_HANDLES.clear()
    SHARED.lin = BASE_LIN
    SHARED.act = nn.ReLU()
    SHARED.scale = 1.0
    SHARED.train(True)
    while len(SHARED.layers) > 1:
        del SHARED.layers[-1]
    SHARED.layers[0] = BASE_LAYER
    SHARED.offset = torch.zeros(3)
    Shared.shift = 0.0
    vars(SHARED).pop("forward", None)
    for p in SHARED.parameters():
        p.requires_grad_(True)


def shared_maker(change):
    def maker(n):
        reset_shared()
        state = random.getstate()
        torch.manual_seed(int(random.random() * 1e6))
        change()
        random.setstate(state)
        return (torch.randn(n, 3),)

    return maker


def shared_forward(x):
    return SHARED(x)


def set_scale():
    SHARED.scale = pick(1.0, 2.0, -0.5)


def set_training():
    SHARED.train(pick(True, False))
    SHARED.act = pick(nn.ReLU(), nn.Dropout(0.0))


def add_hook():
    if pick(True, False):
        SHARED_HANDLES.append(SHARED.register_forward_hook(output_hook))
    if pick(True, False):
        SHARED_HANDLES.append(SHARED.lin.register_forward_pre_hook(input_hook))


def replace_parameter():
    if pick(True, False):
        SHARED.lin.weight = nn.Parameter(torch.randn(3, 3))


def swap_submodule():
    SHARED.act = pick(nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity())


def swap_linear():
    if pick(True, False):
        SHARED.lin = nn.Linear(3, 3)


def grow_list():
    for _ in range(pick(0, 1, 2)):
        SHARED.layers.append(nn.Linear(3, 3))


def replace_list_entry():
    if pick(True, False):
        SHARED.layers[0] = nn.Linear(3, 3, bias=False)


def replace_buffer():
    SHARED.offset = torch.randn(3) * pick(1.0, 100.0)


def mutate_weights_in_place():
    with torch.no_grad():
        SHARED.lin.weight.mul_(pick(1.0, -2.0))
        SHARED.lin.bias.fill_(pick(0.0, 5.0))


def restore_weights(maker):
    saved = BASE_LIN.weight.detach().clone(), BASE_LIN.bias.detach().clone()

    def wrapped(n):
        with torch.no_grad():
            BASE_LIN.weight.copy_(saved[0])
            BASE_LIN.bias.copy_(saved[1])
        return maker(n)

    return wrapped


def flip_requires_grad():
    SHARED.lin.weight.requires_grad_(pick(True, False))
    SHARED.layers[0].bias.requires_grad_(pick(True, False))


def patch_forward():
    if pick(True, False):
        SHARED.forward = types.MethodType(lambda self, x: self.lin(x) * 5, SHARED)


def change_class_attribute():
    Shared.shift = pick(0.0, 2.0, -1.0)


def replace_hook_function():
    SHARED_HANDLES.append(SHARED.register_forward_hook(output_hook))
    if pick(True, False):
        SHARED._forward_hooks[SHARED_HANDLES[-1].id] = other_output_hook


def flip_submodule_training():
    SHARED.act = nn.Dropout(0.0) if pick(True, False) else nn.BatchNorm1d(3)
    SHARED.act.train(pick(True, False))


SHARED_CHANGES = {
    "requires_grad_flipped": flip_requires_grad,
    "forward_patched_on_instance": patch_forward,
    "class_attribute": change_class_attribute,
    "hook_function_replaced": replace_hook_function,
    "submodule_training_flag": flip_submodule_training,
    "scale_attribute": set_scale,
    "training_flag": set_training,
    "hooks_added": add_hook,
    "parameter_replaced": replace_parameter,
    "submodule_swapped": swap_submodule,
    "linear_swapped_same_class": swap_linear,
    "module_list_grows": grow_list,
    "module_list_entry_replaced": replace_list_entry,
    "buffer_replaced": replace_buffer,
}
for change_name, change in SHARED_CHANGES.items():
    add(SOURCE, f"nn_module.global_module_{change_name}", shared_forward, shared_maker(change))
add(SOURCE, "nn_module.global_module_weights_mutated_in_place", shared_forward,
    restore_weights(shared_maker(mutate_weights_in_place)))


def shared_params_sum(x):
    total = x
    for name, p in SHARED.named_parameters():
        total = total + p.sum() * len(name)
    return total, [name for name, _ in SHARED.named_modules()]


add(SOURCE, "nn_module.global_module_named_parameters_after_growth", shared_params_sum, shared_maker(grow_list))
add(SOURCE, "nn_module.global_module_named_modules_after_swap", shared_params_sum, shared_maker(replace_list_entry))


# ---- lazy modules and modules created inside ----------------------------------------------------


def lazy_linear(n):
    return nn.LazyLinear(4), torch.randn(n, 3)


case("lazy_linear_first_call", lazy_linear)


def built_inside(x):
    torch.manual_seed(0)
    lin = nn.Linear(x.shape[-1], 2)
    return lin(x)


case("module_built_inside", lambda n: (torch.randn(n, 3),), fn=built_inside)


class StaticForward(nn.Module):
    @staticmethod
    def forward(x):
        return x * torch.sigmoid(x)


class CallsStatic(nn.Module):
    def __init__(self):
        super().__init__()
        self.mod = StaticForward()

    def forward(self, x):
        return self.mod(x)


case("staticmethod_forward", lambda n: (CallsStatic(), torch.randn(n)))


class NoGradForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    @torch.no_grad()
    def update(self, x):
        self.lin.weight.add_(x.mean() * 0.01)

    def forward(self, x):
        self.update(x)
        return self.lin(x)


case("no_grad_method_updates_weights", lambda n: (NoGradForward(), torch.randn(n, 3)), train=True)


class ConvDirect(nn.Conv2d):
    def forward(self, x):
        return self._conv_forward(x, self.weight * 0.5, self.bias)


case("conv_subclass_calls_conv_forward", lambda n: (ConvDirect(2, 2, 3, padding=1), torch.randn(1, 2, n, n)))


class SuperForward(nn.Linear):
    def forward(self, x):
        return super().forward(x) * 2


case("linear_subclass_super_forward", lambda n: (SuperForward(3, 3), torch.randn(n, 3)), train=True)


def apply_fn(n):
    m = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    return m, torch.randn(n, 3)


def apply_init(m, x):
    def init(sub):
        if isinstance(sub, nn.Linear):
            with torch.no_grad():
                sub.bias.fill_(0.5)

    m.apply(init)
    return m(x)


case("module_apply_init", apply_fn, fn=apply_init)


def sequential_index(n):
    m = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))
    return m, torch.randn(n, 3), pick(1, 2, 3)


case("sequential_prefix_by_int", sequential_index, fn=lambda m, x, k: m[:k](x))


def state_dict_keys(n):
    return ChildrenIteration(), torch.randn(n, 3)


case("state_dict_keys_inside", state_dict_keys, fn=lambda m, x: (m(x)[0], list(m.state_dict().keys())))


def hook_registered_inside(m, x):
    handle = m.register_forward_hook(output_hook)
    y = m(x)
    handle.remove()
    return y, m(x), len(m._forward_hooks)


case("hook_registered_and_removed_inside", lambda n: (Affine(), torch.randn(n)), fn=hook_registered_inside)


def training_flip_across_break(m, x):
    m.eval()
    a = m(x)
    print("break")
    m.train()
    return a, m(x), m.training


case("train_eval_flip_across_break", lambda n: (BatchNormTrainEval(), torch.randn(n, 3)), fn=training_flip_across_break)


def submodule_swapped_across_break(m, x):
    a = m(x)
    m.act = nn.Tanh() if isinstance(m.act, nn.ReLU) else nn.ReLU()
    print("break")
    return a, m(x)


case("submodule_swapped_across_break", lambda n: (IsinstanceChild(), torch.randn(n)), fn=submodule_swapped_across_break)
