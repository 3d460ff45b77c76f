"""Optimizers inside compiled code, modelled on dynamo's test_optimizers and inductor's
test_compiled_optimizers (the Python a training loop runs, recast in our own words): `step()`
of every torch.optim optimizer (options: momentum, nesterov, weight decay, amsgrad, centered,
maximize, foreach on and off) on grads made before the call, whole training steps (zero_grad,
forward, loss, backward, clipping, step) compiled, two steps in one call, a learning rate set
between calls through param_groups (a cache hit must read the new one), LR schedulers stepped
inside, step pre/post hooks, gradient accumulation over micro-batches, an EMA of the weights,
LBFGS with a closure, and the optimizer's state_dict read inside.

The optimizer is held by a callable `Box`, which the runner compares by type only (its state is
keyed by parameters, which are not comparable across the eager and compiled copies); each case
returns what matters: the loss, the parameters after the step and the optimizer's state tensors
in parameter order. Tolerances are looser than the corpus default: torch's optimizers compute
bias corrections from Python floats eagerly and from step tensors when compiling (as under
torch.compile), which differ in the last bits."""

import torch
import torch.nn.functional as F

from .upstream4_support import graph_break, pick, register

nn = torch.nn
W = 4
case = register("dynamo/test_optimizers", "optim4")
TOL = {"atol": 1e-4, "rtol": 1e-4}


class Box:
    """Holds an optimizer (and a scheduler); callable, so the runner compares its type only."""

    def __init__(self, opt, sched=None):
        self.opt = opt
        self.sched = sched
        self.log = []

    def __call__(self):
        return self.opt


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(W, 6)
        self.fc2 = nn.Linear(6, 2)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def state_tensors(opt):
    out = []
    for group in opt.param_groups:
        for p in group["params"]:
            state = opt.state.get(p, {})
            out.extend(state[k] for k in sorted(state) if isinstance(state[k], torch.Tensor))
    return out


def params_of(model):
    return [p.detach().clone() for p in model.parameters()]


def with_grads(make_opt, steps_before=0):
    """A model whose grads are filled (one eager backward), its optimizer, and an input."""

    def build(n):
        model = Model()
        opt = make_opt(model.parameters())
        for _ in range(steps_before):
            model(torch.randn(3, W)).square().mean().backward()
            opt.step()
        opt.zero_grad()
        model(torch.randn(3, W)).square().mean().backward()
        return model, Box(opt), torch.randn(n, W)

    return build


def step_only(model, box, x):
    box.opt.step()
    return model(x), params_of(model), state_tensors(box.opt)


def train_step(model, box, x):
    opt = box.opt
    opt.zero_grad()
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    return loss.detach(), params_of(model), state_tensors(opt)


def two_steps(model, box, x):
    losses = []
    for chunk in (x, x.flip(0)):
        box.opt.zero_grad(set_to_none=False)
        loss = F.smooth_l1_loss(model(chunk), torch.zeros(chunk.shape[0], 2))
        loss.backward()
        box.opt.step()
        losses.append(loss.detach())
    return losses, params_of(model), state_tensors(box.opt)


optim = torch.optim
OPTIMIZERS = [
    ("sgd", lambda p: optim.SGD(p, lr=0.1)),
    ("sgd_momentum", lambda p: optim.SGD(p, lr=0.1, momentum=0.9)),
    ("sgd_nesterov_decay", lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("sgd_maximize_foreach", lambda p: optim.SGD(p, lr=0.1, momentum=0.5, maximize=True, foreach=True)),
    ("adam", lambda p: optim.Adam(p, lr=0.01)),
    ("adam_amsgrad_foreach", lambda p: optim.Adam(p, lr=0.01, amsgrad=True, foreach=True)),
    ("adam_weight_decay_maximize", lambda p: optim.Adam(p, lr=0.01, weight_decay=0.1, maximize=True)),
    ("adamw", lambda p: optim.AdamW(p, lr=0.01)),
    ("adamw_foreach", lambda p: optim.AdamW(p, lr=0.01, foreach=True)),
    ("rmsprop_centered", lambda p: optim.RMSprop(p, lr=0.01, centered=True, momentum=0.5)),
    ("adagrad", lambda p: optim.Adagrad(p, lr=0.1, lr_decay=0.01)),
    ("adadelta", lambda p: optim.Adadelta(p, lr=1.0)),
    ("adamax", lambda p: optim.Adamax(p, lr=0.01)),
    ("nadam", lambda p: optim.NAdam(p, lr=0.01)),
    ("radam", lambda p: optim.RAdam(p, lr=0.01)),
    ("asgd", lambda p: optim.ASGD(p, lr=0.01)),
    ("rprop", lambda p: optim.Rprop(p, lr=0.01)),
]
for name, make in OPTIMIZERS:
    case(f"{name}_step", with_grads(make), step_only, **TOL)
    case(f"{name}_train_step", with_grads(make), train_step, **TOL)
for name, make in OPTIMIZERS[::3]:
    case(f"{name}_step_with_state", with_grads(make, steps_before=2), step_only, **TOL)
    case(f"{name}_two_steps", with_grads(make), two_steps, **TOL)


# ---- the learning rate and other hyperparameters changed between calls -------------------------


def lr_per_call(make_opt):
    def build(n):
        model, box, x = with_grads(make_opt)(n)
        for group in box.opt.param_groups:
            group["lr"] = pick(0.1, 0.01, 0.5)
        box.opt.param_groups[0]["weight_decay"] = pick(0.0, 0.1)
        return model, box, x

    return build


case("sgd_lr_set_between_calls", lr_per_call(lambda p: optim.SGD(p, lr=0.1, momentum=0.9)), step_only, **TOL)
case("adam_lr_set_between_calls", lr_per_call(lambda p: optim.Adam(p, lr=0.01)), step_only, **TOL)


def lr_set_inside(model, box, x):
    for group in box.opt.param_groups:
        group["lr"] = group["lr"] * 0.5
    return step_only(model, box, x)


case("lr_halved_inside", with_grads(lambda p: optim.SGD(p, lr=0.2, momentum=0.9)), lr_set_inside, **TOL)


def two_groups(n):
    model = Model()
    opt = optim.SGD([{"params": model.fc1.parameters(), "lr": pick(0.1, 0.3)},
                 {"params": model.fc2.parameters(), "lr": 0.01, "momentum": pick(0.0, 0.9)}], lr=0.05)
    model(torch.randn(3, W)).square().mean().backward()
    return model, Box(opt), torch.randn(n, W)


case("param_groups_with_own_options", two_groups, step_only, **TOL)
case("param_groups_train_step", two_groups, train_step, **TOL)


# ---- schedulers -----------------------------------------------------------------------------


def with_scheduler(make_sched):
    def build(n):
        model, box, x = with_grads(lambda p: optim.SGD(p, lr=0.1, momentum=0.9))(n)
        box.sched = make_sched(box.opt)
        return model, box, x

    return build


def step_and_schedule(model, box, x):
    box.opt.step()
    box.sched.step()
    return model(x), box.sched.get_last_lr(), [g["lr"] for g in box.opt.param_groups]


case("step_lr_scheduler_inside", with_scheduler(lambda o: optim.lr_scheduler.StepLR(o, step_size=1, gamma=0.5)),
     step_and_schedule, **TOL)
case("lambda_lr_scheduler_inside", with_scheduler(lambda o: optim.lr_scheduler.LambdaLR(o, lambda e: 1.0 / (e + 1))),
     step_and_schedule, **TOL)
case("cosine_scheduler_inside", with_scheduler(lambda o: optim.lr_scheduler.CosineAnnealingLR(o, T_max=4)),
     step_and_schedule, **TOL)


# ---- hooks, clipping, accumulation, EMA -----------------------------------------------------------


def with_step_hooks(n):
    model, box, x = with_grads(lambda p: optim.Adam(p, lr=0.01))(n)
    box.opt.register_step_pre_hook(lambda opt, args, kwargs: box.log.append("pre"))
    box.opt.register_step_post_hook(lambda opt, args, kwargs: box.log.append("post"))
    return model, box, x


case("step_pre_and_post_hooks", with_step_hooks, lambda m, box, x: (step_only(m, box, x), list(box.log)), **TOL)


def clipped_step(model, box, x):
    opt = box.opt
    opt.zero_grad()
    loss = model(x).square().sum()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    nn.utils.clip_grad_value_(model.parameters(), clip_value=0.05)
    opt.step()
    return loss.detach(), norm, params_of(model)


case("clip_grad_norm_then_step", with_grads(lambda p: optim.SGD(p, lr=0.1)), clipped_step, **TOL)


def accumulate(model, box, x):
    opt = box.opt
    opt.zero_grad()
    for chunk in x.chunk(2):
        (model(chunk).square().mean() / 2).backward()
    grads = [p.grad.clone() for p in model.parameters()]
    opt.step()
    return grads, params_of(model)


case("gradient_accumulation_two_micro_batches", with_grads(lambda p: optim.SGD(p, lr=0.1, momentum=0.9)), accumulate,
     sizes=(4, 6), **TOL)


def ema_build(n):
    model, box, x = with_grads(lambda p: optim.SGD(p, lr=0.1))(n)
    box.shadow = [p.detach().clone() for p in model.parameters()]
    return model, box, x


def ema_step(model, box, x):
    box.opt.step()
    with torch.no_grad():
        for shadow, p in zip(box.shadow, model.parameters()):
            shadow.mul_(0.9).add_(p, alpha=0.1)
    return [s.clone() for s in box.shadow], model(x)


case("ema_of_weights_after_step", ema_build, ema_step, **TOL)


def foreach_ema(model, box, x):
    box.opt.step()
    with torch.no_grad():
        torch._foreach_lerp_(box.shadow, list(model.parameters()), 0.25)
    return [s.clone() for s in box.shadow]


case("foreach_lerp_ema_after_step", ema_build, foreach_ema, **TOL)


def lbfgs_step(model, box, x):
    opt = box.opt

    def closure():
        opt.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        return loss

    loss = opt.step(closure)
    return loss.detach(), params_of(model)


case("lbfgs_with_closure", with_grads(lambda p: optim.LBFGS(p, lr=0.5, max_iter=3)), lbfgs_step, **TOL)


def optimizer_state_dict(model, box, x):
    box.opt.step()
    sd = box.opt.state_dict()
    return sorted(sd), [g["lr"] for g in sd["param_groups"]], sorted(sd["state"]), model(x)


case("optimizer_state_dict_inside", with_grads(lambda p: optim.Adam(p, lr=0.01)), optimizer_state_dict, **TOL)


def step_after_break(model, box, x):
    out = model(x)
    graph_break()
    box.opt.step()
    return out, model(x), state_tensors(box.opt)


case("step_after_graph_break", with_grads(lambda p: optim.AdamW(p, lr=0.01)), step_after_break, **TOL)


def manual_sgd(model, box, x):
    loss = model(x).square().mean()
    grads = torch.autograd.grad(loss, list(model.parameters()))
    with torch.no_grad():
        for p, g in zip(model.parameters(), grads):
            p.sub_(0.1 * g)
    return loss.detach(), params_of(model)


case("manual_sgd_with_autograd_grad", with_grads(lambda p: optim.SGD(p, lr=0.1)), manual_sgd, **TOL)


def frozen_layer(n):
    model, box, x = with_grads(lambda p: optim.Adam(p, lr=0.01))(n)
    if pick(True, False):
        for p in model.fc1.parameters():
            p.grad = None
    return model, box, x


case("step_skips_params_without_grad", frozen_layer, step_only, **TOL)
