"""Gradients of everyday training code, as dynamo's test_backward_higher_order_ops,
test_autograd_function and test_python_autograd exercise it (recast in our own words): tensor
hooks registered inside the compiled function (scaling, replacing, logging into a list,
removed again), retain_grad on intermediates, torch.autograd.grad with create_graph for a
gradient penalty, detach/no_grad/enable_grad regions, custom Functions with
set_materialize_grads, mark_non_differentiable and a double backward, in-place updates of
non-leaf tensors, and losses built from Python loops and dicts. All are `train` cases: the
runner backpropagates the outputs and compares every input's grad."""

import torch

from . import vec_grad
from .round5_support import sampled_snippets
from .upstream4_support import graph_break


class ScaleGrad(torch.autograd.Function):
    """Identity forward; backward scales by a Python float kept on ctx."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


class NoMaterialize(torch.autograd.Function):
    """Two outputs; backward sees None for the unused one (grads not materialized)."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        out = torch.zeros_like(g1 if g1 is not None else g2)
        if g1 is not None:
            out = out + g1 * 2
        if g2 is not None:
            out = out + g2 * 3
        return out


class ArgmaxAndValue(torch.autograd.Function):
    """An integer index output marked non-differentiable beside a float one."""

    @staticmethod
    def forward(ctx, x):
        idx = x.argmax()
        ctx.save_for_backward(idx)
        ctx.mark_non_differentiable(idx)
        ctx.n = x.shape[0]
        return x.max(), idx

    @staticmethod
    def backward(ctx, g, g_idx):
        (idx,) = ctx.saved_tensors
        out = torch.zeros(ctx.n, dtype=g.dtype)
        out[idx] = g
        return out


class CubeTwice(torch.autograd.Function):
    """A backward written with differentiable ops (double backward through it)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x**2


NS = {
    "torch": torch,
    "ScaleGrad": ScaleGrad,
    "NoMaterialize": NoMaterialize,
    "ArgmaxAndValue": ArgmaxAndValue,
    "CubeTwice": CubeTwice,
    "brk": graph_break,
}


def two_grads(n):
    return torch.randn(n, requires_grad=True), torch.randn(n, requires_grad=True)


def weight_and_input(n):
    return torch.randn(n, 3, requires_grad=True), torch.randn(2, n)


GRADS = [
    ("hook_scales_intermediate", "y = x * 2\ny.register_hook(lambda g: g * 3)\nreturn (y * y).sum()"),
    ("hook_on_input", "x.register_hook(lambda g: g + 1)\nreturn (x * x).sum()"),
    ("hook_logs_into_list", "seen = []\ny = x.sin()\ny.register_hook(lambda g: seen.append(g.shape))\nz = (y * 2).sum()\nreturn z, seen"),
    ("hook_removed", "y = x * 2\nh = y.register_hook(lambda g: g * 100)\nh.remove()\nreturn (y * x).sum()"),
    ("hook_returns_none_keeps_grad", "y = x.exp()\ny.register_hook(lambda g: None)\nreturn y.sum()"),
    ("two_hooks_compose", "y = x * 1.5\ny.register_hook(lambda g: g * 2)\ny.register_hook(lambda g: g + 1)\nreturn (y ** 2).sum()"),
    ("hook_closure_over_size", "n = x.shape[0]\ny = x.cos()\ny.register_hook(lambda g: g / n)\nreturn y.sum()"),
    ("hook_across_break", "y = x * 2\ny.register_hook(lambda g: g * 5)\nbrk()\nreturn (y + 1).pow(2).sum()"),
    ("retain_grad_intermediate", "y = x * 3\ny.retain_grad()\nz = (y * y).sum()\nreturn z, y"),
    ("detach_blocks", "y = x * 2\nz = y.detach() * x\nreturn z.sum()"),
    ("no_grad_region", "with torch.no_grad():\n    s = x * 10\nreturn (x * s).sum(), s.requires_grad"),
    ("enable_grad_inside_no_grad", "with torch.no_grad():\n    with torch.enable_grad():\n        y = x * 2\n    z = x * 3\nreturn y.sum(), z.requires_grad, y.requires_grad"),
    ("set_grad_enabled_flag", "flag = x.shape[0] > 5\nwith torch.set_grad_enabled(flag):\n    y = x * 2\nreturn y, y.requires_grad"),
    ("autograd_grad_penalty", "y = (x ** 3).sum()\n(g,) = torch.autograd.grad(y, x, create_graph=True)\nreturn y + (g ** 2).sum()"),
    ("autograd_grad_no_create_graph", "y = (x.sin() * x).sum()\n(g,) = torch.autograd.grad(y, x)\nreturn y.detach(), g, g.requires_grad"),
    ("autograd_grad_two_inputs", "y = (a * b).sum() + (a ** 2).sum()\nga, gb = torch.autograd.grad(y, (a, b), create_graph=True)\nreturn (ga * gb).sum()", {"params": "a, b", "make_args": two_grads}),
    ("autograd_grad_allow_unused", "y = (a * 2).sum()\nga, gb = torch.autograd.grad(y, (a, b), allow_unused=True)\nreturn y.detach(), ga, gb", {"params": "a, b", "make_args": two_grads}),
    ("function_scale_grad", "return ScaleGrad.apply(x, 0.5).sin().sum(), ScaleGrad.apply(x * 2, float(x.shape[0])).sum()"),
    ("function_no_materialize_one_used", "a, b = NoMaterialize.apply(x)\nreturn a.sum()"),
    ("function_no_materialize_both", "a, b = NoMaterialize.apply(x)\nreturn (a * b).sum()"),
    ("function_non_differentiable_index", "v, i = ArgmaxAndValue.apply(x)\nreturn v * 2, i, i.requires_grad"),
    ("function_double_backward", "y = CubeTwice.apply(x).sum()\n(g,) = torch.autograd.grad(y, x, create_graph=True)\nreturn g.sum()"),
    ("inplace_on_nonleaf", "y = x * 1\ny.mul_(2).add_(1)\ny[0] = 0.0\nreturn y.sum() * 2, y"),
    ("inplace_on_view_of_nonleaf", "y = x.clone()\nv = y[1:]\nv.mul_(3)\nreturn (y ** 2).sum()"),
    ("loss_from_python_loop", "losses = []\nfor i in range(3):\n    losses.append(((x - i) ** 2).mean())\nreturn sum(losses) / len(losses)"),
    ("loss_from_dict_of_terms", "terms = {'l2': (x ** 2).sum(), 'l1': x.abs().sum(), 'cos': x.cos().sum()}\nweights = {'l2': 0.5, 'l1': 0.1, 'cos': 1.0}\nreturn sum(weights[k] * v for k, v in terms.items()), sorted(terms)"),
    ("linear_layer_manual", "out = inp @ w\nloss = torch.nn.functional.mse_loss(out, torch.ones_like(out))\nreturn loss, out", {"params": "w, inp", "make_args": weight_and_input}),
    ("grad_of_softmax_cross_entropy", "logits = x.reshape(1, -1)\ntarget = torch.tensor([x.shape[0] - 1])\nreturn torch.nn.functional.cross_entropy(logits, target)"),
    ("clamp_and_where_grads", "y = torch.where(x > 0, x * 2, x.clamp(min=-0.5))\nreturn y.sum()"),
    ("masked_fill_grad", "m = x < 0\nreturn x.masked_fill(m, 0.0).pow(2).sum()"),
    ("checkpoint_like_recompute", "def block(t):\n    return t.sin() * t.cos()\ny = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)\nreturn y.sum()"),
    ("grad_through_list_of_tensors", "parts = list(x.split(2))\nparts = [p * (i + 1) for i, p in enumerate(parts)]\nreturn torch.cat(parts).sum()"),
    ("requires_grad_toggled_on_copy", "y = x.detach().clone()\ny.requires_grad_(True)\nreturn (y * 2).sum(), (x * 3).sum(), y.is_leaf"),
]
sampled_snippets("dynamo/test_backward_higher_order_ops", "grads5", GRADS, namespace=NS, train=True, make_args=vec_grad)
