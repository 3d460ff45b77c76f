"""More cases modelled on dynamo's test_hooks (recast in our own words): forward hooks taking
keyword arguments (with_kwargs=True) and changing the output, pre-hooks rewriting args and
kwargs, prepended hooks, always_call hooks when forward raises, hooks that return None, hooks
that write to the module they hang on, a hook on a submodule reached through a ModuleList,
global module hooks registered and removed inside, tensor hooks whose handles are kept in a
list, hooks registered on an intermediate inside a loop, and register_hook on a parameter.
Modules are built per call with seeded weights."""

import torch

from . import snippets

SOURCE = "dynamo/test_hooks"
nn = torch.nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(4, 4)
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Tanh()])
        self.calls = 0

    def forward(self, x, scale=1.0):
        x = self.inner(x) * scale
        for layer in self.layers:
            x = layer(x)
        return x


class Raises(nn.Module):
    def forward(self, x):
        if x.shape[0] > 5:
            raise ValueError("too long")
        return x * 2


def kwargs_hook(module, args, kwargs, output):
    return output + kwargs.get("scale", 0.0)


def kwargs_pre_hook(module, args, kwargs):
    return (args[0] * 2,), {**kwargs, "scale": 0.5}


def counting_hook(module, args, output):
    module.calls += 1


def net_with(*registrations):
    def make(n):
        torch.manual_seed(0)
        net = Net()
        for register in registrations:
            register(net)
        return net, torch.randn(n, 4)

    return make


def net_with_grad(*registrations):
    base = net_with(*registrations)

    def make(n):
        net, x = base(n)
        return net, x.requires_grad_()

    return make


HOOKED = [
    ("forward_hook_with_kwargs", lambda m: m.register_forward_hook(kwargs_hook, with_kwargs=True), "return m(x, scale=3.0)"),
    ("pre_hook_rewrites_args_and_kwargs", lambda m: m.register_forward_pre_hook(kwargs_pre_hook, with_kwargs=True), "return m(x, scale=2.0)"),
    ("prepended_hooks_order", lambda m: (m.register_forward_hook(lambda mod, a, o: o * 2), m.register_forward_hook(lambda mod, a, o: o + 1, prepend=True)), "return m(x)"),
    ("hook_returning_none_counts", lambda m: m.register_forward_hook(counting_hook), "y = m(x)\ny = m(y)\nreturn y, m.calls"),
    ("hook_on_module_list_member", lambda m: m.layers[0].register_forward_hook(lambda mod, a, o: o.clamp(-0.1, 0.1)), "return m(x)"),
    ("pre_hook_on_inner_returns_single_tensor", lambda m: m.inner.register_forward_pre_hook(lambda mod, a: a[0] + 1), "return m(x)"),
]
for name, register, body in HOOKED:
    snippets(SOURCE, "hooks_more", [(name, body)], namespace={}, params="m, x", make_args=net_with(register))
for name, register, body in HOOKED[:3]:
    snippets(SOURCE, "hooks_more_train", [(name, body)], namespace={}, params="m, x", make_args=net_with_grad(register), train=True)

NS = {"torch": torch, "nn": nn, "Raises": Raises}

INSIDE = [
    ("always_call_hook_when_forward_raises", "m = Raises()\nlog = []\nm.register_forward_hook(lambda mod, a, o: log.append('hook'), always_call=True)\ntry:\n    y = m(x)\nexcept ValueError:\n    y = x\nreturn y, log"),
    ("global_forward_hook_registered_and_removed", "lin = nn.Identity()\nh = nn.modules.module.register_module_forward_hook(lambda mod, a, o: o * 3)\ntry:\n    y = lin(x)\nfinally:\n    h.remove()\nreturn y, lin(x)"),
    ("tensor_hooks_kept_in_list", "y = x * 2\nhandles = [y.register_hook(lambda g: g * 2), y.register_hook(lambda g: g + 1)]\nhandles[0].remove()\nreturn (y * y).sum(), len(handles)"),
    ("hooks_on_intermediates_in_loop", "out = x\nfor i in range(3):\n    out = out * 2\n    out.register_hook(lambda g, i=i: g * (i + 1))\nreturn out.sum()"),
]
snippets(SOURCE, "hooks_more_inside", INSIDE, namespace=NS, make_args=lambda n: (torch.randn(n, requires_grad=True),), train=True)


def param_hook_net(n):
    torch.manual_seed(0)
    lin = nn.Linear(4, 2)
    return lin, torch.randn(n, 4)


snippets(SOURCE, "hooks_more_param", [
    ("parameter_hook_registered_inside", "h = m.weight.register_hook(lambda g: g * 0.5)\ny = m(x)\nreturn y, h is not None"),
], namespace=NS, params="m, x", make_args=param_hook_net, train=True)


def raising_with_always_hook(n):
    m = Raises()
    m.log = []
    m.register_forward_hook(lambda mod, a, o: mod.log.append(o is None), always_call=True)
    return m, torch.randn(n)


snippets(SOURCE, "hooks_more_always", [
    ("always_call_hook_registered_outside", "try:\n    y = m(x)\nexcept ValueError:\n    y = x - 1\nreturn y, list(m.log)"),
], namespace=NS, params="m, x", make_args=raising_with_always_hook)
