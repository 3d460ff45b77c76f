"""Cases modelled on the module classes of dynamo's test_modules (recast in our own words):
ModuleDict subclasses filled by add_module in __init__ and read through values()/keys(),
member names that are not identifiers, a Sequential holding one module several times, layers
compared with `==` and `is` through a property, instance attributes shadowing methods of the
same name, parameter queries (requires_grad over parameters(), the dtype of the first one, a
parameter registered twice counted once), super() from a classmethod, hasattr on parameters,
forward called directly (plain, conv, super().forward of a conv subclass), class names read in
forward, plain Python lists and tuples of layers or tensors, functions stored as attributes,
lazy modules with their own initialize_parameters, and the results of named_parameters(),
named_modules() and buffers() kept across a graph break."""

import collections

import torch
import torch.nn.functional as F
from torch.nn.modules.lazy import LazyModuleMixin

from . import snippets

SOURCE = "dynamo/test_modules"
nn = torch.nn
W = 6  # feature width


class Basic(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(W, W)
        self.scale = torch.randn(1, W)

    def forward(self, x):
        return F.relu(self.linear1(x)) * self.scale


class CatBlock(nn.Module):
    def forward(self, xs):
        return 1.5 * torch.cat(xs, 1)


class DenseBlock(nn.ModuleDict):
    def __init__(self, num_layers=3, by_keys=False):
        super().__init__()
        self.by_keys = by_keys
        for i in range(num_layers):
            self.add_module(f"denselayer{i + 1:d}", CatBlock())

    def forward(self, x):
        features = [x]
        if self.by_keys:
            for k in self.keys():
                features.append(self[k](features))
        else:
            for _, layer in enumerate(self.values()):
                features.append(layer(features))
        return torch.cat(features, 1)


class OddNames(nn.ModuleDict):
    def __init__(self):
        super().__init__()
        for i in range(2):
            self.add_module(f"l@yer-{i + 1:d}", Basic())

    def forward(self, x):
        for layer in self.values():
            x = layer(x)
        return x


class SharedRelu(nn.Module):
    def __init__(self, ordered):
        super().__init__()
        self.relu = nn.ReLU()
        layers = [("a", nn.Linear(W, 8)), ("r1", self.relu), ("b", nn.Linear(8, W)), ("r2", self.relu)]
        self.layer = nn.Sequential(collections.OrderedDict(layers)) if ordered else nn.Sequential(*(m for _, m in layers))

    def forward(self, x):
        return self.layer(x), len(list(self.modules()))


class Comparison(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer0 = nn.Linear(W, W)
        self.layer1 = nn.Linear(W, W)
        self.layer2 = nn.Linear(W, W)

    @property
    def encoder_layers(self):
        return [self.layer0, self.layer1, self.layer2]

    def forward(self, x):
        out = x
        for layer in self.encoder_layers:
            out = layer(out)
            out = F.relu6(out) if layer is None or layer == self.layer0 else F.relu(out)
        return out


class PrecedenceBase(nn.Module):
    def linear(self, x, flag=None):
        return x * (2.0 if flag else 3.0)


class Precedence(PrecedenceBase):
    def __init__(self):
        super().__init__()
        self.activation = nn.ReLU()
        self.linear = nn.Linear(W, W)
        self.initializer = torch.ones(W)
        self.scale = 0.5

    def activation(self, x):  # shadowed by the submodule of the same name
        return x * 1.2

    def initializer(self):  # shadowed by the tensor attribute
        return torch.zeros(W)

    def scale(self):  # shadowed by the float
        return 2.0

    def forward(self, x):
        return self.activation(self.linear(self.initializer + x)) * self.scale


def any_requires_grad(module, recurse=False):
    return any(p.requires_grad for p in module.parameters(recurse))


class ParamQueries(nn.Module):
    def __init__(self, variant):
        super().__init__()
        self.variant = variant
        self.linear1 = nn.Linear(W, W)
        self.scale = nn.Parameter(torch.randn(1, W))
        self.scale_dup = self.scale

    def forward(self, x):
        if self.variant == 0:
            return F.relu(self.linear1(x)) * self.scale if not any_requires_grad(self) else x + 1
        if self.variant == 1:
            return F.relu(self.linear1(x)) * self.scale if not any_requires_grad(self, True) else x + 1
        if self.variant == 2:
            return F.relu(self.linear1(x)) + torch.ones(W, dtype=next(self.parameters()).dtype)
        if self.variant == 3:
            return x * self.scale + torch.ones(W, dtype=next(self.parameters(recurse=False)).dtype)
        return x * self.scale * sum(1 for _ in self.parameters())


class ClassmethodParent(nn.Module):
    @classmethod
    def custom_add(cls, x):
        return x + x


class ClassmethodChild(ClassmethodParent):
    @classmethod
    def child_func(cls, x):
        return super().custom_add(x)

    def forward(self, x):
        return self.child_func(x)


class HasAttrScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(1, W))

    def forward(self, x):
        x = F.relu(x)
        if hasattr(self, "scale"):
            x = x * self.scale
        if hasattr(self, "scale2"):
            x = x * self.scale2
        return x


class ForwardDirectly(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = Basic()
        self.layer2 = nn.Linear(W, W)

    def forward(self, x):
        return self.layer2.forward(self.layer1.forward(x))


class ConvSuper(nn.Conv1d):
    def __init__(self):
        super().__init__(in_channels=W, out_channels=4, kernel_size=3, padding=1)

    def forward(self, inputs, mask=None):
        return super().forward(inputs.transpose(0, 1).unsqueeze(0)).squeeze(0).transpose(0, 1)


class NameString(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(W, W)

    def forward(self, x):
        if self.__class__.__name__ == "ABC":
            return x * 10
        if self.linear1.__class__.__name__ == "Linear":
            return F.relu(self.linear1(x) + 10)
        return x


class SelfMutating(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(W, W)
        self.counter = 0

    def forward(self, x):
        result = self.layer(x) + self.counter
        self.counter += 1
        return F.relu(result)


class PlainLists(nn.Module):
    """Layers in a Python list (not registered) and tensors in a tuple."""

    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(W, W), nn.ReLU(), nn.Linear(W, W)]
        self.factors = (torch.randn(1, W), torch.randn(1, W))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        for f in self.factors:
            x = x * f
        return x, len(list(self.parameters()))


class FnMember(nn.Module):
    def __init__(self, activation):
        super().__init__()
        self.linear1 = nn.Linear(W, W)
        self.activation = activation

    def forward(self, x):
        x = self.linear1(x)
        if self.activation:
            x = self.activation(x)
        if self.activation is None:
            x = torch.sigmoid(x)
        return x


class ChildrenLoop(nn.Module):
    def __init__(self, named):
        super().__init__()
        self.named = named
        self.l1 = nn.Linear(W, W)
        self.l2 = nn.ReLU()
        self.l3 = nn.Linear(W, W)

    def forward(self, x):
        blocks = [b for _, b in self.named_children()] if self.named else self.children()
        for block in blocks:
            x = block(x)
        return x


class GetItemModule(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.layers = nn.ModuleList([nn.Linear(W, W), nn.ReLU(), nn.Linear(W, W)])
        self.table = nn.ModuleDict({"0": nn.Linear(W, W)})
        self.params = nn.ParameterDict({"0": nn.Parameter(torch.randn(W, W))})

    def __getitem__(self, idx):
        if self.kind == "list":
            return self.layers[idx]
        return self.table[idx] if self.kind == "dict" else self.params[idx]

    def __len__(self):
        return len(self.layers)

    def forward(self, x):
        if self.kind == "list":
            for i in range(len(self)):
                x = self[i](x)
            return x
        if self.kind == "dict":
            return self["0"](x)
        return x.mm(self["0"])


class ModuleListLoops(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(W, W), nn.ReLU(), nn.Linear(W, W), nn.ReLU()])

    def forward(self, x):
        for i in range(len(self.layers)):
            x = self.layers[i](x)
        for layer, val in zip(self.layers, (x, x, x, x)):
            x = layer(x) + val
        for layer, val in zip(self.layers, (1, 2, 3, 4)):
            x = layer(x) + val
        for idx, layer in enumerate(self.layers[::-1]):
            x = layer(x) * idx
        return x


class NestedPairs(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.ModuleList([nn.Linear(W, W), nn.ReLU()]) for _ in range(3)])

    def forward(self, x):
        for layer, act in self.layers:
            x = act(layer(x))
        return x


class LazyScale(LazyModuleMixin, nn.Module):
    """A lazy module of our own: its parameter is shaped by the first input."""

    def __init__(self):
        super().__init__()

    def initialize_parameters(self, inputs):
        with torch.no_grad():
            self.weight = nn.Parameter(torch.full(inputs[0].shape[1:], 0.5))

    def forward(self, inputs):
        total = 0
        for t in inputs:
            total = total + t * self.weight
        return total


class LazyMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.LazyLinear(W)
        self.fc2 = nn.LazyLinear(1)

    def forward(self, x):
        return F.relu(self.fc2(F.relu(self.fc1(x))))


class CfgHolder:
    def __init__(self):
        self.val = 0.5
        self.count = 3


class WithCfg(nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = CfgHolder()
        self.layer = nn.Linear(W, W)

    def forward(self, x):
        for _ in range(self.cfg.count):
            x = self.layer(x + self.cfg.val)
        return x


class ReadsAcrossBreak(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = Basic()
        self.layer2 = Basic()
        self.layer3 = nn.Sequential(Basic(), Basic())
        self.layer4 = nn.ModuleList([nn.Linear(W, W), nn.ReLU()])
        self.layer5 = nn.ModuleDict({"0": nn.Linear(W, W)})
        self.register_buffer("running", torch.zeros(W))

    def forward(self, x):
        import torch._dynamo

        x = self.layer1(x)
        params = dict(self.named_parameters())
        plist = list(self.parameters())
        buffers = dict(self.named_buffers())
        modules = dict(self.named_modules())
        torch._dynamo.graph_break()
        x = self.layer2(x) + params["layer3.1.linear1.weight"][0] + params["layer4.0.weight"][1] + params["layer5.0.weight"][2]
        return x * len(plist) + buffers["running"], sorted(modules)[:4]


def module_and_input(build):
    def make(n):
        torch.manual_seed(0)
        return build(), torch.randn(n, W)

    return make


def module_and_input_grad(build):
    def make(n):
        torch.manual_seed(0)
        return build(), torch.randn(n, W, requires_grad=True)

    return make


def lazy_and_list(n):
    torch.manual_seed(0)
    return LazyScale(), [torch.randn(n, W) for _ in range(3)]


MODULES = [
    ("dense_block_values", lambda: DenseBlock()),
    ("dense_block_keys", lambda: DenseBlock(by_keys=True)),
    ("member_names_not_identifiers", OddNames),
    ("sequential_shares_one_relu", lambda: SharedRelu(False)),
    ("sequential_ordered_dict_shared_relu", lambda: SharedRelu(True)),
    ("layers_compared_through_property", Comparison),
    ("attributes_shadow_methods", Precedence),
    ("requires_grad_of_own_parameters", lambda: ParamQueries(0)),
    ("requires_grad_of_all_parameters", lambda: ParamQueries(1)),
    ("dtype_of_first_parameter", lambda: ParamQueries(2)),
    ("dtype_of_first_own_parameter", lambda: ParamQueries(3)),
    ("duplicate_parameter_counted_once", lambda: ParamQueries(4)),
    ("super_from_classmethod", ClassmethodChild),
    ("hasattr_on_parameters", HasAttrScale),
    ("forward_called_directly", ForwardDirectly),
    ("conv_subclass_super_forward", ConvSuper),
    ("class_name_read_in_forward", NameString),
    ("counter_attribute_incremented", SelfMutating),
    ("plain_list_and_tuple_members", PlainLists),
    ("function_member_truthiness", lambda: FnMember(F.relu)),
    ("function_member_none", lambda: FnMember(None)),
    ("children_loop", lambda: ChildrenLoop(False)),
    ("named_children_loop", lambda: ChildrenLoop(True)),
    ("own_getitem_over_module_list", lambda: GetItemModule("list")),
    ("own_getitem_over_module_dict", lambda: GetItemModule("dict")),
    ("own_getitem_over_parameter_dict", lambda: GetItemModule("params")),
    ("module_list_zip_enumerate_reversed", ModuleListLoops),
    ("nested_module_list_pairs_unpacked", NestedPairs),
    ("config_object_member", WithCfg),
    ("lazy_linear_mlp", LazyMLP),
    ("registry_reads_across_break", ReadsAcrossBreak),
]
for name, build in MODULES:
    snippets(SOURCE, "modules_upstream", [(name, "return m(x)")], namespace={}, params="m, x", make_args=module_and_input(build))
for name, build in MODULES[:12]:
    snippets(SOURCE, "modules_upstream_train", [(name, "return m(x)")], namespace={}, params="m, x",
             make_args=module_and_input_grad(build), train=True)
snippets(SOURCE, "modules_upstream", [
    ("lazy_module_own_initialize_parameters", "return m(xs), m.weight.shape, type(m).__name__"),
], namespace={}, params="m, xs", make_args=lazy_and_list)
