"""Cases modelled on dynamo's test_activation_checkpointing and on how Hugging Face models
train with gradient checkpointing: `torch.utils.checkpoint.checkpoint(..., use_reentrant=False)`
around a function, a module call or a bound `__call__`, with several tensor arguments, keyword
and non-tensor arguments (None masks, flags), several outputs, nesting, a layer loop whose
checkpoint function is a `functools.partial` kept on the model (HF's
`_gradient_checkpointing_func`), and checkpoint_sequential. All are `train` cases: backward
recomputes the forward, and the grads of inputs and parameters are compared."""

import functools

import torch
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

from . import snippets

SOURCE = "dynamo/test_activation_checkpointing"
nn = torch.nn


def sin_cos(t):
    return t.sin().cos() * 2


def gated(a, b, scale=1.0, mask=None):
    out = torch.sigmoid(a) * b * scale
    if mask is not None:
        out = out * mask
    return out


def two_outputs(a):
    return a.exp(), a.tanh()


def nested(a):
    return checkpoint(sin_cos, a * 3, use_reentrant=False) + a


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)
        self.norm = nn.LayerNorm(3)

    def forward(self, h, mask=None, scale=1.0):
        out = torch.nn.functional.gelu(self.proj(self.norm(h))) * scale
        if mask is not None:
            out = out * mask
        return h + out


class Stack(nn.Module):
    """The Hugging Face pattern: `gradient_checkpointing_enable()` stores a partial of
    checkpoint, and the layer loop calls it with the layer's `__call__` while training."""

    def __init__(self, checkpointing=True):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(2)])
        self.gradient_checkpointing = checkpointing
        self._gradient_checkpointing_func = functools.partial(checkpoint, use_reentrant=False)

    def forward(self, h, mask=None):
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                h = self._gradient_checkpointing_func(layer.__call__, h, mask)
            else:
                h = layer(h, mask)
        return h


class CheckpointedBlock(nn.Module):
    """A module whose forward checkpoints one of its submodules with a keyword argument."""

    def __init__(self):
        super().__init__()
        self.inner = Layer()
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        h = checkpoint(self.inner, x, use_reentrant=False, scale=0.5)
        return self.head(h)


class DropoutLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.drop = nn.Dropout(0.5)

    def forward(self, h):
        return self.drop(self.lin(h))


NS = {
    "torch": torch, "checkpoint": checkpoint, "checkpoint_sequential": checkpoint_sequential,
    "sin_cos": sin_cos, "gated": gated, "two_outputs": two_outputs, "nested": nested,
}


def grad_vec(n):
    return (torch.randn(n, requires_grad=True),)


def two_grad_vecs(n):
    return torch.randn(n, requires_grad=True), torch.randn(n, requires_grad=True)


def module_maker(cls, *args, grad_input=True, mask=False):
    def make(n):
        torch.manual_seed(0)
        module = cls(*args)
        x = torch.randn(n, 3, requires_grad=grad_input)
        if mask:
            return module, x, (torch.rand(n, 1) > 0.3).float()
        return module, x

    return make


def sequential_maker(n):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 3), nn.ReLU()), torch.randn(n, 3, requires_grad=True)


FUNCTIONS = [
    ("function", "return checkpoint(sin_cos, x, use_reentrant=False)"),
    ("function_then_ops", "y = checkpoint(sin_cos, x * 2, use_reentrant=False)\nreturn y * x"),
    ("keyword_and_none_arguments", "return checkpoint(gated, x, y, use_reentrant=False, scale=2.0, mask=None)", {"params": "x, y", "make_args": two_grad_vecs}),
    ("tensor_keyword_argument", "return checkpoint(gated, x, y.detach(), use_reentrant=False, mask=y)", {"params": "x, y", "make_args": two_grad_vecs}),
    ("two_outputs", "a, b = checkpoint(two_outputs, x, use_reentrant=False)\nreturn a * b"),
    ("nested", "return checkpoint(nested, x, use_reentrant=False)"),
    ("lambda", "return checkpoint(lambda t: (t * t).sin(), x, use_reentrant=False)"),
]
snippets(SOURCE, "checkpoint", FUNCTIONS, namespace=NS, make_args=grad_vec, train=True)

MODULES = [
    ("hf_layer_loop_partial", "return m(x)", {"make_args": module_maker(Stack)}),
    ("hf_layer_loop_partial_with_mask", "return m(x, mask)", {"params": "m, x, mask", "make_args": module_maker(Stack, mask=True)}),
    ("hf_layer_loop_input_without_grad", "return m(x).sum(1)", {"make_args": module_maker(Stack, grad_input=False)}),
    ("hf_layer_loop_eval_skips_checkpoint", "m.eval()\nreturn m(x)", {"make_args": module_maker(Stack)}),
    ("module_forward_checkpoints_submodule", "return m(x)", {"make_args": module_maker(CheckpointedBlock)}),
    ("module_called_directly", "return checkpoint(m, x, use_reentrant=False) * 2", {"make_args": module_maker(Layer)}),
    ("dropout_recomputed", "return checkpoint(m, x, use_reentrant=False)", {"make_args": module_maker(DropoutLayer), "exact_rng": False}),
    ("checkpoint_sequential", "return checkpoint_sequential(m, 2, x, use_reentrant=False)", {"make_args": sequential_maker}),
]
snippets(SOURCE, "checkpoint", MODULES, namespace=NS, params="m, x", train=True)
