"""Round four of dynamo's test_hooks and the hook tests of test_modules (recast in our own
words), on what hooks_cases and hooks_more_cases did not take: tensor hooks that are
functools.partial objects whose keyword differs per call, hooks closing over an object whose
value (a tensor or an int) differs per call, a hook made inside a nested function over an
intermediate, hooks with Python state (a counter that picks what the hook computes), a module
global rebound to another hook between calls, handles stored on a module attribute, returned
twice, removed twice, removed after the call; post-accumulate-grad hooks that write the leaf and
its grad in place; module forward hooks on every named module (a partial carrying the name),
full backward hooks and pre-hooks on every named module recording shapes, hooks returning a bare
tensor, `__call__` named explicitly, global module hooks counting calls, state_dict hooks, and
hooks added to a submodule by a parent's forward on its first call only. All are `train`
cases: what a hook does shows in the grads, what it records is compared after backward."""

import functools

import torch
import torch.nn.functional as F

from .upstream4_support import graph_break, pick, register

nn = torch.nn
W = 5
case = register("dynamo/test_hooks", "hooks4")


def vec(n):
    return (torch.randn(n, requires_grad=True),)


def scaled_hook(grad, *, k=0):
    return grad * k


def shifted_hook(grad, *, k=0):
    return grad + k


class Holder:
    def __init__(self, val):
        self.val = val
        self.count = 0
        self.seen = []

    def alternate(self, grad):
        out = grad * grad if self.count % 2 == 0 else grad + grad
        self.count += 1
        return out

    def record(self, grad):
        self.seen.append(grad.sum().item())


# ---- tensor hooks built from partials and closures whose values change per call ---------------


def partial_k(n):
    return torch.randn(n, requires_grad=True), functools.partial(scaled_hook, k=pick(1, 2, -3))


def partial_on_input(x, hook):
    x.register_hook(hook)
    return x.mul(2).mul(3)


case("partial_hook_keyword_per_call", partial_k, partial_on_input, train=True)


def partial_on_intermediate(x, hook):
    y = x.mul(2)
    y.register_hook(hook)
    return y.mul(3)


case("partial_hook_on_intermediate_per_call", partial_k, partial_on_intermediate, train=True)


def two_partials(x):
    y = x.mul(2)
    y.register_hook(functools.partial(shifted_hook, k=3))
    y.register_hook(functools.partial(shifted_hook, k=4))
    return (y.mul(3),)


case("two_partial_hooks_on_intermediate", vec, two_partials, train=True)


def input_partial(x):
    x.register_hook(functools.partial(shifted_hook, k=3))
    return (x.mul(2).mul(3),)


case("partial_hook_on_input", vec, input_partial, train=True)


def holder_val(n):
    return torch.randn(n, requires_grad=True), Holder(pick(torch.tensor(88.0), torch.tensor(99.0), 11, 2.5))


def closure_over_holder(x, obj):
    y = x.sin()
    x.register_hook(lambda grad: grad + obj.val)
    return y.sin()


def intermediate_closure_over_holder(x, obj):
    y = x.sin()
    y.register_hook(lambda grad: grad + obj.val)
    return y.sin()


def partial_over_holder(x, obj):
    y = x.mul(2)
    y.register_hook(functools.partial(lambda grad, *, o: grad + o.val, o=obj))
    return (y.mul(3),)


case("input_hook_closes_over_object_value", holder_val, closure_over_holder, train=True)
case("intermediate_hook_closes_over_object_value", holder_val, intermediate_closure_over_holder, train=True)
case("partial_hook_bound_to_object", holder_val, partial_over_holder, train=True)


def nested_closure(x):
    def run():
        y = x.sin()
        x.register_hook(lambda grad: grad + y)
        return y.sin()

    return run()


case("hook_closes_over_intermediate_in_nested_function", vec, nested_closure, train=True)


def stateful_hooks(x, obj):
    y = x.mul(2)
    y.register_hook(functools.partial(lambda grad, *, o: o.alternate(grad), o=obj))
    y.register_hook(obj.alternate)
    return (y.mul(3),)


case("hooks_with_python_state_alternate", holder_val, stateful_hooks, train=True)


def recording_method(x, obj):
    y = x * 2
    y.register_hook(obj.record)
    return (y + x).sum()


case("bound_method_records_grad_sums", holder_val, recording_method, train=True)


def hook_in_loop_late_binding(x):
    out = x
    for i in range(3):
        out = out * 2
        out.register_hook(lambda g, i=i: g * (i + 1))
    return out


case("hooks_in_loop_bound_by_default", vec, hook_in_loop_late_binding, train=True)


# ---- a module global rebound to another hook between calls ------------------------------------


def double_grad(grad):
    return grad * 2


def add_grad(grad, k=0):
    return grad + k


CURRENT_HOOK = double_grad


def rebind_global(n):
    global CURRENT_HOOK
    CURRENT_HOOK = pick(double_grad, add_grad, functools.partial(add_grad, k=5))
    return vec(n)


def uses_global_hook(x):
    y = x.mul(2)
    y.register_hook(CURRENT_HOOK)
    y.register_hook(CURRENT_HOOK)
    return (y.mul(3),)


case("global_hook_rebound_between_calls", rebind_global, uses_global_hook, train=True)


# ---- handles ------------------------------------------------------------------------------------


def handle_on_module(n):
    mod = nn.Module()
    mod._handle = None  # private: a handle's id is a process-wide counter, not compared
    return torch.randn(n, requires_grad=True), torch.randn(2, 2), mod


def store_handle(x, z, mod):
    mod._handle = x.register_hook(lambda grad: grad * 2)
    return x, z * z, mod._handle is not None


case("handle_stored_on_module_attribute", handle_on_module, store_handle, train=True)


def removed_twice_returned(x, z):
    handle = x.register_hook(lambda grad: grad * 2)
    z = z * z
    handle.remove()
    handle.remove()
    return x * 1, z, handle is handle


case("handle_removed_twice_then_returned", lambda n: (torch.randn(n, requires_grad=True), torch.randn(2, 2)),
     removed_twice_returned, train=True)


def handle_as_context(x):
    y = x * 2
    with y.register_hook(lambda g: g * 10):
        z = y * 3
    return z + y


case("handle_removed_by_with_block", vec, handle_as_context, train=True)


def remove_after_break(x):
    y = x * 2
    handle = y.register_hook(lambda g: g * 3)
    graph_break()
    handle.remove()
    return y.sum()


case("handle_removed_after_graph_break", vec, remove_after_break, train=True)


# ---- post-accumulate-grad hooks -------------------------------------------------------------


def post_acc_inplace(grad_scale):
    def hook(leaf):
        leaf.data.mul_(2)
        leaf.grad.mul_(grad_scale)

    return hook


def post_acc(n):
    return torch.randn(n, requires_grad=True), torch.randn(n, requires_grad=True), pick(5.0, 0.5)


def register_post_acc(x, y, scale):
    x.register_post_accumulate_grad_hook(post_acc_inplace(scale))
    return x * y


case("post_accumulate_hook_writes_leaf_and_grad", post_acc, register_post_acc, train=True)


# ---- module hooks on every named module ----------------------------------------------------


class Toy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(W, 8), nn.ReLU(), nn.Linear(8, 3), nn.ReLU())

    def forward(self, x):
        return self.net(x)


class ToyTwice(Toy):
    def forward(self, x):
        return self.net(x) * self.net(x)


class ToyDunderCall(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(W, 4)

    def forward(self, x):
        return self.linear.__call__(x)


def save_activation(store, name, mod, inp, out):
    store[name] = inp[0].sum().item()


def named_activation_hooks(cls):
    def build(n):
        model = cls()
        store = {}
        for name, module in model.named_modules():
            module.register_forward_hook(functools.partial(save_activation, store, name))
        return model, torch.randn(n, W, requires_grad=True), store

    return build


def call_and_report(model, x, store):
    out = model(x)
    return out, sorted(store)


case("activation_hooks_on_every_module", named_activation_hooks(Toy), call_and_report, train=True)
case("activation_hooks_explicit_dunder_call", named_activation_hooks(ToyDunderCall), call_and_report, train=True)


def output_modifying(cls):
    def build(n):
        model = cls()
        for _, module in model.named_modules():
            if pick(True, True, False):
                module.register_forward_hook(lambda mod, inp, out: 2 * out + 1)
        return model, torch.randn(n, W, requires_grad=True)

    return build


case("output_modifying_hooks_on_most_modules", output_modifying(ToyTwice), lambda m, x: m(x), train=True)


class CustomLinear(nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(a, b))

    def forward(self, x):
        return torch.mm(x, self.weight)


def backward_hook_recorders(n):
    model = nn.Sequential(CustomLinear(W, 6), CustomLinear(6, 7), CustomLinear(7, 3))
    record = {}

    def backward_hook(name, mod, grad_inp, grad_out):
        record[f"post:{name}"] = ([None if g is None else tuple(g.shape) for g in grad_inp],
                                  [tuple(g.shape) for g in grad_out])

    def backward_pre_hook(name, mod, grad_out):
        record[f"pre:{name}"] = [tuple(g.shape) for g in grad_out]

    for name, module in model.named_modules():
        module.register_full_backward_hook(functools.partial(backward_hook, name))
        module.register_full_backward_pre_hook(functools.partial(backward_pre_hook, name))
    return model, torch.randn(n, W, requires_grad=True), record


case("backward_hooks_record_every_module", backward_hook_recorders, lambda m, x, rec: m(x).relu(), train=True)


def bare_tensor_pre_hook(n):
    model = nn.Linear(W, W, bias=False)
    shift = pick(1.0, -1.0)
    model.register_forward_pre_hook(lambda mod, inp: inp[0] + shift)
    return model, torch.randn(n, W, requires_grad=True)


case("pre_hook_returns_bare_tensor", bare_tensor_pre_hook, lambda m, x: m(x), train=True)


class MinusOne(nn.Module):
    def forward(self, x):
        return x - 1


def global_pre_hook_count(m, x):
    calls = []

    def hook(mod, args):
        calls.append(type(mod).__name__)
        return args

    handle = nn.modules.module.register_module_forward_pre_hook(hook)
    try:
        out = m(x) * 2
    finally:
        handle.remove()
    return out, calls


case("global_module_pre_hook_counts_calls", lambda n: (MinusOne(), torch.randn(n, W, requires_grad=True)),
     global_pre_hook_count, train=True)


def global_forward_hook_scales(m, x):
    handle = nn.modules.module.register_module_forward_hook(lambda mod, inp, out: out * 3)
    out = m(x)
    handle.remove()
    return out + m(x)


case("global_module_forward_hook_scales_then_removed", lambda n: (Toy(), torch.randn(n, W, requires_grad=True)),
     global_forward_hook_scales, train=True)


# ---- hooks that parents register on children on their first call -------------------------------


class RegistersOnce(nn.Module):
    def __init__(self):
        super().__init__()
        self.child = nn.Linear(W, W)
        self.registered = pick(True, False)

    def forward(self, x):
        if not self.registered:
            self.child.register_forward_hook(lambda mod, inp, out: out.tanh())
            self.registered = True
        return self.child(x)


case("parent_registers_child_hook_on_first_call", lambda n: (RegistersOnce(), torch.randn(n, W, requires_grad=True)),
     lambda m, x: (m(x), m(x)), train=True)


# ---- module hooks that read and write module state -------------------------------------------


class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)
        self.gate = pick(0.0, 1.0)
        self.calls = 0

    def forward(self, x):
        return F.relu(self.lin(x))


def gate_hook(mod, inp, out):
    mod.calls += 1
    return out * mod.gate + inp[0] * (1 - mod.gate)


def gated(n):
    m = Gated()
    m.register_forward_hook(gate_hook)
    return m, torch.randn(n, W, requires_grad=True)


case("forward_hook_reads_and_counts_on_module", gated, lambda m, x: m(m(x)), train=True)


class TakesScale(nn.Module):
    def forward(self, x, scale=1.0):
        return x * scale


def pre_hook_swaps_kwargs(n):
    m = TakesScale()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": kwargs.get("scale", 1.0) * 2}),
                                with_kwargs=True)
    return m, torch.randn(n, requires_grad=True), pick(0.5, 3.0)


case("pre_hook_doubles_keyword", pre_hook_swaps_kwargs, lambda m, x, s: m(x, scale=s) + m(x), train=True)


def hook_kwargs_output(n):
    m = nn.Linear(W, W)
    m.register_forward_hook(lambda mod, args, kwargs, out: out + len(kwargs), with_kwargs=True)
    return m, torch.randn(n, W, requires_grad=True)


case("forward_hook_with_kwargs_counts_them", hook_kwargs_output, lambda m, x: m(input=x) + m(x), train=True)


# ---- state_dict hooks ---------------------------------------------------------------------------


def state_dict_hooked(n):
    m = nn.Linear(W, 3)

    def post_hook(module, state_dict, prefix, local_metadata):
        state_dict[prefix + "extra"] = torch.ones(1)

    m._register_state_dict_hook(post_hook)
    return m, torch.randn(n, W)


case("state_dict_hook_adds_entry", state_dict_hooked, lambda m, x: (m(x), sorted(m.state_dict().keys())))


# ---- backward hooks on modules whose inputs don't all need grad ---------------------------------


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)

    def forward(self, a, b):
        return self.lin(a) * b


def backward_hook_two_inputs(n):
    m = TwoInputs()
    grads = []
    m.register_full_backward_hook(lambda mod, gi, go: grads.append([g is None for g in gi]))
    needs = pick(True, False)
    return m, torch.randn(n, W, requires_grad=True), torch.randn(n, W, requires_grad=needs), grads


case("full_backward_hook_mixed_requires_grad", backward_hook_two_inputs, lambda m, a, b, g: m(a, b), train=True)


def backward_pre_hook_replaces(n):
    m = nn.Linear(W, W)
    factor = pick(0.0, 2.0)
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * factor,))
    return m, torch.randn(n, W, requires_grad=True)


case("backward_pre_hook_factor_per_call", backward_pre_hook_replaces, lambda m, x: m(x).sin(), train=True)
