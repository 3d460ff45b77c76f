"""Modules wrapped, patched and transformed the way libraries do it, modelled on dynamo's
test_modules, test_functions, test_sources, test_higher_order_ops and
test_activation_checkpointing (recast in our own words): accelerate-style hooks that move
`forward` to `_old_forward` and install a partial, forwards wrapped by functools.wraps
decorators, `__getattr__` falling back to a config (HF PreTrainedModel), a `__setattr__`
that intercepts parameters, an overridden `__call__` reaching `super().__call__`, keyword-only
and **kwargs forwards, extra state and `_load_from_state_dict` overrides, saved-tensor hooks
around a forward (activation offloading), torch.cond whose branches use a module's weights,
checkpointed blocks with dropout, per-sample grads with torch.func over functional_call, and
sources reached through closures, class attributes and module globals that change per call."""

import functools

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from .upstream4_support import add_case, graph_break, pick

nn = torch.nn
W = 5


def register(source, family):
    from .upstream4_support import seeded

    def case(name, build, fn, **options):
        add_case(source, f"{family}.{name}", fn, seeded(build), **options)

    return case


modules_case = register("dynamo/test_modules", "wrappers4")
functions_case = register("dynamo/test_functions", "wrappers4_fn")
hop_case = register("dynamo/test_higher_order_ops", "wrappers4_hop")
ckpt_case = register("dynamo/test_activation_checkpointing", "wrappers4_ckpt")
sources_case = register("dynamo/test_sources", "wrappers4_src")


def call(m, x):
    return m(x)


def mod_input(build):
    def make(n):
        return build(), torch.randn(n, W, requires_grad=True)

    return make


# ---- accelerate-style forward replacement ----------------------------------------------------


class ModelHook:
    def __init__(self, scale):
        self.scale = scale
        self.calls = 0

    def pre_forward(self, module, *args, **kwargs):
        self.calls += 1
        return tuple(a * self.scale for a in args), kwargs

    def post_forward(self, module, output):
        return output + 1


def add_hook_to_module(module, hook):
    old_forward = module.forward
    module._old_forward = old_forward
    module._hf_hook = hook

    def new_forward(module, *args, **kwargs):
        args, kwargs = module._hf_hook.pre_forward(module, *args, **kwargs)
        output = module._old_forward(*args, **kwargs)
        return module._hf_hook.post_forward(module, output)

    module.forward = functools.update_wrapper(functools.partial(new_forward, module), old_forward)
    return module


def accelerate_hooked(n):
    model = nn.Sequential(nn.Linear(W, W), nn.ReLU(), nn.Linear(W, 3))
    for layer in (model[0], model[2]):
        if pick(True, False):
            add_hook_to_module(layer, ModelHook(pick(0.5, 2.0)))
    return model, torch.randn(n, W, requires_grad=True)


modules_case("accelerate_style_forward_hook", accelerate_hooked, call, train=True)


def timed(fn):
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        self.calls = getattr(self, "calls", 0) + 1
        return fn(self, *args, **kwargs)

    return wrapper


class WrappedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)

    @timed
    def forward(self, x, *, scale=1.0):
        return self.lin(x) * scale


modules_case("forward_wrapped_by_functools_wraps", mod_input(WrappedForward),
             lambda m, x: (m(x), m(x, scale=2.0), m.calls), train=True)


class Config:
    def __init__(self):
        self.hidden = W
        self.act = pick("relu", "gelu")


class ConfigFallback(nn.Module):
    """HF-style: attributes not found on the module are looked up on its config."""

    def __init__(self):
        super().__init__()
        self.config = Config()
        self.lin = nn.Linear(W, W)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.config, name)

    def forward(self, x):
        y = self.lin(x)
        return (F.relu(y) if self.act == "relu" else F.gelu(y)) * self.hidden


modules_case("getattr_falls_back_to_config", mod_input(ConfigFallback), call, train=True)


class InterceptsSetattr(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)
        self.log = []

    def __setattr__(self, name, value):
        if isinstance(value, torch.Tensor) and not isinstance(value, nn.Parameter) and name == "cache":
            value = value.detach()
        super().__setattr__(name, value)

    def forward(self, x):
        out = self.lin(x)
        self.cache = out * 2
        self.log.append(out.shape[0])
        return out + self.cache


modules_case("setattr_override_detaches_cache", mod_input(InterceptsSetattr), call, train=True)


class CallsSuperCall(nn.Linear):
    def __call__(self, *args, **kwargs):
        out = super().__call__(*args, **kwargs)
        return out * 2


modules_case("overridden_call_reaches_super_call", mod_input(lambda: CallsSuperCall(W, W)),
             lambda m, x: m(x) + m(input=x), train=True)


class KeywordForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)

    def forward(self, x, *, mask=None, **extra):
        y = self.lin(x)
        if mask is not None:
            y = y.masked_fill(~mask, 0.0)
        for key in sorted(extra):
            y = y + extra[key]
        return y


def keyword_inputs(n):
    mask = pick(None, torch.rand(n, W) > 0.5)
    extra = {k: torch.randn(W) for k in pick((), ("a",), ("b", "a"))}
    return KeywordForward(), torch.randn(n, W, requires_grad=True), mask, extra


modules_case("keyword_only_and_var_keyword_forward", keyword_inputs, lambda m, x, mask, extra: m(x, mask=mask, **extra),
             train=True)


class ExtraState(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)
        self.counter = pick(0, 3)

    def get_extra_state(self):
        return {"counter": self.counter}

    def set_extra_state(self, state):
        self.counter = state["counter"]

    def forward(self, x):
        return self.lin(x) + self.counter


modules_case("extra_state_in_state_dict", mod_input(ExtraState),
             lambda m, x: (m(x), sorted(m.state_dict()), m.state_dict()["_extra_state"]), train=True)


# ---- saved-tensor hooks, cond, checkpoint, torch.func -------------------------------------------------


def saved_tensor_hooks(m, x):
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t.clone()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t * 1):
        out = m(x).tanh()
    return out, len(packed) > 0


modules_case("saved_tensor_hooks_around_forward", mod_input(lambda: nn.Sequential(nn.Linear(W, W), nn.Sigmoid())),
             saved_tensor_hooks, train=True)


class CondModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(W, W)
        self.b = nn.Linear(W, W)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: self.a(t).sin(), lambda t: self.b(t).cos(), (x,))


hop_case("cond_branches_use_module_weights", mod_input(CondModule), call)


def cond_on_flag(n):
    return CondModule(), torch.randn(n, W), pick(True, False)


hop_case("cond_on_python_bool_with_modules", cond_on_flag,
         lambda m, x, flag: torch.cond(flag, lambda t: m.a(t), lambda t: m.b(t) * 2, (x,)))


class DropoutBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(torch.relu(self.lin(x)))


def checkpoint_dropout(m, x):
    return checkpoint(m, x, use_reentrant=False, preserve_rng_state=True) * 2


ckpt_case("checkpointed_block_with_dropout", mod_input(DropoutBlock), checkpoint_dropout, train=True, exact_rng=False)


def checkpoint_two_layers(m, x):
    h = checkpoint(m[0], x, use_reentrant=False)
    graph_break()
    return checkpoint(m[1], h, use_reentrant=False)


ckpt_case("checkpoint_either_side_of_a_break",
          mod_input(lambda: nn.Sequential(nn.Sequential(nn.Linear(W, W), nn.GELU()), nn.Linear(W, 2))),
          checkpoint_two_layers, train=True)


def checkpoint_kwargs(m, x, scale):
    def run(t, *, scale, mask=None):
        y = m(t) * scale
        return y if mask is None else y * mask

    return checkpoint(run, x, scale=scale, mask=None, use_reentrant=False)


ckpt_case("checkpoint_function_with_keywords",
          lambda n: (nn.Linear(W, W), torch.randn(n, W, requires_grad=True), pick(0.5, 2.0)), checkpoint_kwargs,
          train=True)


def per_sample_grads(n):
    return nn.Linear(W, 1), torch.randn(n, W), torch.randn(n, 1)


def func_grads(m, x, y):
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss_of(p, xi, yi):
        out = torch.func.functional_call(m, p, (xi.unsqueeze(0),))
        return F.mse_loss(out, yi.unsqueeze(0))

    grads = torch.func.vmap(torch.func.grad(loss_of), in_dims=(None, 0, 0))(params, x, y)
    return {k: g.sum(0) for k, g in grads.items()}


functions_case("per_sample_grads_vmap_over_functional_call", per_sample_grads, func_grads, atol=1e-4)


def jacobian_of_module(m, x):
    return torch.func.jacrev(lambda t: m(t).sum(0))(x)


functions_case("jacrev_of_module_output", mod_input(lambda: nn.Linear(W, 3)), jacobian_of_module)


# ---- values reached through closures, class attributes and globals ----------------------------


GLOBAL_SCALE = 1.0


class ClassScaled(nn.Module):
    factor = 1.0

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)

    def forward(self, x):
        return self.lin(x) * type(self).factor * GLOBAL_SCALE


def class_and_global(n):
    global GLOBAL_SCALE
    ClassScaled.factor = pick(1.0, 2.0)
    GLOBAL_SCALE = pick(1.0, -1.0, 0.5)
    return ClassScaled(), torch.randn(n, W, requires_grad=True)


sources_case("class_attribute_and_global_per_call", class_and_global, call, train=True)


def closure_module(n):
    layer = nn.Linear(W, W)
    bias = torch.randn(W) * pick(0.0, 1.0)

    def apply(x):
        return layer(x) + bias

    return apply, layer, torch.randn(n, W, requires_grad=True)


sources_case("module_reached_through_closure", closure_module, lambda fn, layer, x: fn(x), train=True)


def nested_attr_path(n):
    outer = nn.Module()
    outer.inner = nn.Module()
    outer.inner.deep = nn.ModuleList([nn.Linear(W, W) for _ in range(pick(1, 2))])
    outer.inner.deep_scale = pick(1.0, 3.0)
    return outer, torch.randn(n, W, requires_grad=True)


def through_path(outer, x):
    for layer in outer.inner.deep:
        x = layer(x) * outer.inner.deep_scale
    return x


sources_case("module_attributes_reached_by_long_path", nested_attr_path, through_path, train=True)


def dict_of_modules(n):
    table = {"enc": nn.Linear(W, W), "dec": nn.Linear(W, W)}
    order = pick(("enc", "dec"), ("dec", "enc"))
    return table, order, torch.randn(n, W, requires_grad=True)


def run_table(table, order, x):
    for key in order:
        x = torch.tanh(table[key](x))
    return x


sources_case("modules_in_a_plain_dict_by_key_order", dict_of_modules, run_table, train=True)


def bound_method_input(n):
    m = nn.Sequential(nn.Linear(W, W), nn.Tanh())
    method = pick(m.forward, m.__call__, m[0].forward)
    return method, m, torch.randn(n, W, requires_grad=True)


sources_case("bound_module_method_passed_in", bound_method_input, lambda method, m, x: method(x), train=True)
