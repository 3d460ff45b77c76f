"""Cases modelled on dynamo's test_autograd_function: user torch.autograd.Function subclasses
called inside the compiled function. Forwards that save inputs, outputs and intermediates for
backward, keep Python values and shapes on ctx, take non-tensor arguments (floats, enums,
lists of tensors, dataclasses), mark outputs non-differentiable or inputs dirty, return tuples
(some outputs unused, so backward sees materialized zeros or None), read ctx.needs_input_grad;
the setup_context style, once_differentiable, classmethods, `apply` reached through a helper or
stored on a module, Functions inside nn.Modules with parameters, a graph break inside forward;
forwards that change a list or object the caller passed, Functions returning their input or a
view of it.
All are `train` cases: the runner backpropagates the outputs with random cotangents and compares
the grads of every input and parameter, so a backward that is skipped, run on the wrong saved
values or given the wrong grad_output shows as a wrong grad."""

import enum
import random
from dataclasses import dataclass

import torch
from torch.autograd.function import once_differentiable

from . import snippets

SOURCE = "dynamo/test_autograd_function"
nn = torch.nn


class SinSaveInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()


class ExpSaveOutput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = x.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out


class TanhSaveIntermediate(torch.autograd.Function):
    """Saves a tensor made inside forward that is not an output."""

    @staticmethod
    def forward(ctx, x):
        t = torch.tanh(x)
        ctx.save_for_backward(t)
        return t * 2

    @staticmethod
    def backward(ctx, grad):
        (t,) = ctx.saved_tensors
        return grad * 2 * (1 - t * t)


class CtxScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.scale = 3.0
        ctx.count = x.shape[0]
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale + ctx.count


class ScaleBy(torch.autograd.Function):
    """A float argument: forward and backward both use it; backward returns None for it."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k * 0.5, None


class SumToScalar(torch.autograd.Function):
    """Keeps the input's shape (a size that changes between calls) on ctx."""

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.sum()

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.shape) * 2


class Mode(enum.Enum):
    SIN = 0
    COS = 1


class ByEnum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, mode):
        ctx.mode = mode
        ctx.save_for_backward(x)
        return x.sin() if mode is Mode.SIN else x.cos()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return (grad * x.cos() if ctx.mode is Mode.SIN else -grad * x.sin()), None


class SortWithIndices(torch.autograd.Function):
    """Two outputs, the indices marked non-differentiable."""

    @staticmethod
    def forward(ctx, x):
        values, indices = x.sort()
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        (indices,) = ctx.saved_tensors
        return torch.zeros_like(grad_values).scatter(0, indices, grad_values)


class SaveAndMarkInput(torch.autograd.Function):
    """Upstream's ContextSaveAndMark: returns its input, saved and marked non-differentiable."""

    @staticmethod
    def forward(ctx, x):
        with torch.no_grad():
            ctx.save_for_backward(x)
            ctx.mark_non_differentiable(x)
            return x

    @staticmethod
    def backward(ctx, grad):
        return grad


class LinearNoCtx(torch.autograd.Function):
    """The setup_context style: forward has no ctx; backward reads ctx.needs_input_grad."""

    @staticmethod
    def forward(x, weight, bias):
        out = x.mm(weight.t())
        if bias is not None:
            out = out + bias
        return out

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, weight, bias = inputs
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad.t().mm(x)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad.sum(0)
        return grad_x, grad_weight, grad_bias


class HalveOnce(torch.autograd.Function):
    """Returns its input itself; backward is once_differentiable."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        return grad * 0.5


class Doubler(torch.autograd.Function):
    @classmethod
    def forward(cls, ctx, x):
        return x + x

    @classmethod
    def backward(cls, ctx, grad):
        return grad * 2


class SplitTwo(torch.autograd.Function):
    """Two outputs; a caller that uses one gets zeros (materialized) for the other's grad."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x * x

    @staticmethod
    def backward(ctx, g_double, g_square):
        (x,) = ctx.saved_tensors
        return g_double * 2 + g_square * 2 * x


class NoMaterialize(torch.autograd.Function):
    """set_materialize_grads(False): the unused output's grad arrives as None."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x.clone(), x.sin()

    @staticmethod
    def backward(ctx, g_clone, g_sin):
        grad = torch.zeros_like(g_clone if g_clone is not None else g_sin)
        if g_clone is not None:
            grad = grad + g_clone * 3
        if g_sin is not None:
            grad = grad + g_sin
        return grad


class MulSecondNone(torch.autograd.Function):
    """Backward returns None for an input that requires grad: it gets no grad."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(y)
        return x * y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y, None


class ScaleByList(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, tensors):
        ctx.save_for_backward(tensors[0], tensors[1])
        return x * (tensors[0] + tensors[1])

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * (a + b), None


@dataclass
class Weights:
    scale: float
    shift: torch.Tensor


class Affine(torch.autograd.Function):
    """A dataclass argument holding a float and a tensor."""

    @staticmethod
    def forward(ctx, x, weights):
        ctx.scale = weights.scale
        return x * weights.scale + weights.shift

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


class ScaleInPlace(torch.autograd.Function):
    """Changes its input in place and says so with mark_dirty."""

    @staticmethod
    def forward(ctx, x):
        x.mul_(3)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


class BreakInForward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 2
        print("forward of BreakInForward")
        ctx.save_for_backward(y)
        return y + x

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * 3 + y.sum() * 0


class ReluGradFromData(torch.autograd.Function):
    """Upstream's test_data_in_bwd: backward edits a clone of grad through .data."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        modified = grad.clone()
        modified.data[x.data < 0] = 0
        return modified * 3


class GradRequiresGradCheck(torch.autograd.Function):
    """Upstream's test_requires_grad_in_bwd: grad_output must not require grad (no create_graph)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x + 1)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if grad.requires_grad:
            return grad * 100
        return grad * torch.cos(x + 1)


class GradStride(torch.autograd.Function):
    """Backward reads grad_output's strides (upstream's test_stride_in_bwd)."""

    @staticmethod
    def forward(ctx, x):
        return x + x

    @staticmethod
    def backward(ctx, grad):
        return grad * grad.stride()[-1]


class Outer(torch.autograd.Function):
    """A forward that calls another Function (grad mode is off inside forward)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return SinSaveInput.apply(x) * 2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x.cos()


class AppendShape(torch.autograd.Function):
    """Changes a list the caller passed (the graph would get a copy): runs on every call."""

    @staticmethod
    def forward(ctx, x, log):
        log.append(x.shape[0])
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2, None


class Tally:
    def __init__(self):
        self.forwards = 0


class CountOnArgument(torch.autograd.Function):
    """Counts its calls on an object argument; the count scales value and gradient."""

    @staticmethod
    def forward(ctx, x, tally):
        tally.forwards += 1
        ctx.k = tally.forwards
        return x * ctx.k

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None


class ReturnInputScaledGrad(torch.autograd.Function):
    """Returns its input itself: eager's output is a view of it, with this backward."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 5


class TailView(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.n = x.shape[0]
        return x[1:]

    @staticmethod
    def backward(ctx, grad):
        out = grad.new_zeros(ctx.n)
        out[1:] = grad * 3
        return out


def sin_of(x):
    """`apply` reached through a helper, as libraries wrap their Functions."""
    return SinSaveInput.apply(x)


exp_of = ExpSaveOutput.apply


class FunctionLinear(nn.Module):
    def __init__(self, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(2, 3))
        self.bias = nn.Parameter(torch.randn(2)) if bias else None

    def forward(self, x):
        return LinearNoCtx.apply(x, self.weight, self.bias)


class StoredApply(nn.Module):
    """Upstream's Module2: the module keeps `Function.apply` as an attribute."""

    def __init__(self):
        super().__init__()
        self.fn = TanhSaveIntermediate.apply
        self.scale = nn.Parameter(torch.randn(3))

    def forward(self, x):
        return self.fn(x * self.scale)


class LowerBound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bound):
        ctx.save_for_backward(x, x.new_ones(1) * bound)
        return x.clamp(min=bound)

    @staticmethod
    def backward(ctx, grad):
        x, bound = ctx.saved_tensors
        return (x >= bound) * grad, None


class ClampedGamma(nn.Module):
    """Upstream's test_function_with_bound_free_variable: a parameter through a Function."""

    def __init__(self):
        super().__init__()
        self.gamma = nn.Parameter(torch.rand(3) * 2)

    def forward(self, x):
        return x + LowerBound.apply(self.gamma, 1)


class Block(nn.Module):
    """A Function between two Linears with a residual, as a model layer would use one."""

    def __init__(self):
        super().__init__()
        self.up = nn.Linear(3, 4)
        self.down = nn.Linear(4, 3)

    def forward(self, x):
        return x + self.down(TanhSaveIntermediate.apply(self.up(x)))


NS = {
    "torch": torch, "Mode": Mode, "Weights": Weights, "sin_of": sin_of, "exp_of": exp_of,
    **{cls.__name__: cls for cls in (
        SinSaveInput, ExpSaveOutput, TanhSaveIntermediate, CtxScale, ScaleBy, SumToScalar, ByEnum, SortWithIndices,
        SaveAndMarkInput, LinearNoCtx, HalveOnce, Doubler, SplitTwo, NoMaterialize, MulSecondNone, ScaleByList, Affine,
        ScaleInPlace, BreakInForward, ReluGradFromData, GradRequiresGradCheck, GradStride, Outer,
        AppendShape, CountOnArgument, ReturnInputScaledGrad, TailView,
    )},
}


def grad_vec(n):
    return (torch.randn(n, requires_grad=True),)


def two_grad_vecs(n):
    return torch.randn(n, requires_grad=True), torch.randn(n, requires_grad=True)


def grad_vec_and_scale(n):
    return torch.randn(n, requires_grad=True), random.choice((0.5, 2.0, -3.0))


def grad_vec_and_mode(n):
    return torch.randn(n, requires_grad=True), random.choice((Mode.SIN, Mode.COS))


def grad_vec_and_list(n):
    return torch.randn(n, requires_grad=True), [torch.randn(n, requires_grad=True), torch.randn(n)]


def grad_vec_and_weights(n):
    return torch.randn(n, requires_grad=True), Weights(random.choice((0.5, 2.0)), torch.randn(n, requires_grad=True))


def linear_inputs(n):
    return torch.randn(n, 3, requires_grad=True), torch.randn(2, 3, requires_grad=True), torch.randn(2, requires_grad=True)


def linear_inputs_frozen_x(n):
    return torch.randn(n, 3), torch.randn(2, 3, requires_grad=True), None


def matrix_grad(n):
    return (torch.randn(n, 3, requires_grad=True),)


def module_maker(cls, *args):
    def make(n):
        torch.manual_seed(0)
        return cls(*args), torch.randn(n, 3)

    return make


def module_and_grad_input(cls):
    def make(n):
        torch.manual_seed(0)
        return cls(), torch.randn(n, 3, requires_grad=True)

    return make


CASES = [
    ("save_input_for_backward", "return SinSaveInput.apply(x)"),
    ("save_output_for_backward", "return ExpSaveOutput.apply(x * 0.5)"),
    ("save_intermediate_for_backward", "return TanhSaveIntermediate.apply(x) + x"),
    ("ctx_python_attributes", "return CtxScale.apply(x)"),
    ("float_argument", "return ScaleBy.apply(x, k)", {"params": "x, k", "make_args": grad_vec_and_scale}),
    ("float_argument_constant", "return ScaleBy.apply(x, 4.0) + ScaleBy.apply(x, -1.0)"),
    ("ctx_keeps_shape_sum", "return SumToScalar.apply(x * x)"),
    ("enum_argument", "return ByEnum.apply(x, mode)", {"params": "x, mode", "make_args": grad_vec_and_mode}),
    ("mark_non_differentiable_indices", "values, idx = SortWithIndices.apply(x)\nreturn values * 2, idx, idx.requires_grad"),
    ("mark_non_differentiable_indices_used", "values, idx = SortWithIndices.apply(x)\nreturn values * idx.float()"),
    ("save_and_mark_input_itself", "y = SaveAndMarkInput.apply(x * 2)\nreturn y, y.requires_grad, x + 1"),
    ("setup_context_needs_input_grad", "return LinearNoCtx.apply(x, w, b)", {"params": "x, w, b", "make_args": linear_inputs}),
    ("setup_context_input_without_grad_no_bias", "return LinearNoCtx.apply(x, w, b)", {"params": "x, w, b", "make_args": linear_inputs_frozen_x}),
    ("once_differentiable_returns_input", "return HalveOnce.apply(x) * 3"),
    ("classmethod_forward_backward", "return Doubler.apply(x.sin())"),
    ("tuple_outputs_both_used", "a, b = SplitTwo.apply(x)\nreturn a + b"),
    ("tuple_outputs_one_used", "a, b = SplitTwo.apply(x)\nreturn b.cos()"),
    ("tuple_outputs_returned", "return SplitTwo.apply(x)"),
    ("materialize_grads_off_one_used", "a, b = NoMaterialize.apply(x)\nreturn b * 2"),
    ("materialize_grads_off_both_used", "a, b = NoMaterialize.apply(x)\nreturn a, b"),
    ("backward_none_for_grad_input", "return MulSecondNone.apply(x, y)", {"params": "x, y", "make_args": two_grad_vecs}),
    ("list_of_tensors_argument", "return ScaleByList.apply(x, tl)", {"params": "x, tl", "make_args": grad_vec_and_list}),
    ("dataclass_argument", "return Affine.apply(x, w)", {"params": "x, w", "make_args": grad_vec_and_weights}),
    ("mark_dirty_on_intermediate", "y = x * 2\nScaleInPlace.apply(y)\nreturn y + 1"),
    ("mark_dirty_result_used", "y = x.sin()\nz = ScaleInPlace.apply(y)\nreturn z * x"),
    ("graph_break_in_forward", "return BreakInForward.apply(x.cos()) * 2"),
    ("backward_edits_grad_through_data", "return ReluGradFromData.apply(x)"),
    ("grad_output_does_not_require_grad", "return GradRequiresGradCheck.apply(x)"),
    ("backward_reads_grad_stride", "return GradStride.apply(x)", {"make_args": matrix_grad}),
    ("function_calls_function_in_forward", "return Outer.apply(x)"),
    ("apply_through_helper", "return sin_of(x) + exp_of(x)"),
    ("apply_bound_to_local", "f = SinSaveInput.apply\nreturn f(f(x))"),
    ("apply_on_intermediate_used_twice", "y = x * 3\nz = ExpSaveOutput.apply(y)\nreturn z * y + z"),
    ("apply_in_loop_chained", "for i in range(3):\n    x = ScaleBy.apply(x, i + 1.0).sin()\nreturn x"),
    ("apply_under_no_grad", "with torch.no_grad():\n    y = SinSaveInput.apply(x)\nreturn y * x, y.requires_grad"),
    ("apply_on_input_without_grad", "return SinSaveInput.apply(x) * y", {"params": "x, y", "make_args": lambda n: (torch.randn(n), torch.randn(n, requires_grad=True))}),
    ("apply_then_inplace_on_output", "y = SinSaveInput.apply(x)\ny.mul_(2)\nreturn y"),
    ("apply_output_viewed", "y = ExpSaveOutput.apply(x)\nreturn y[1:] * y[:-1]"),
    ("forward_appends_to_list_argument", "return AppendShape.apply(x, log).sin(), list(log)", {"params": "x, log", "make_args": lambda n: (torch.randn(n, requires_grad=True), [])}),
    ("forward_counts_on_object_argument", "return CountOnArgument.apply(x, t) + CountOnArgument.apply(x, t)", {"params": "x, t", "make_args": lambda n: (torch.randn(n, requires_grad=True), Tally())}),
    ("returns_input_itself", "return ReturnInputScaledGrad.apply(x)"),
    ("returns_view_of_input", "return TailView.apply(x)"),
    ("apply_grad_via_autograd_grad", "y = SinSaveInput.apply(x).sum()\n(g,) = torch.autograd.grad(y, x)\nreturn g * 2", {"train": False}),
]
snippets(SOURCE, "autograd_fn", CASES, namespace=NS, make_args=grad_vec, train=True)

MODULE_CASES = [
    ("module_linear_function_with_bias", "return m(x)", {"make_args": module_maker(FunctionLinear, True)}),
    ("module_linear_function_no_bias", "return m(x).relu()", {"make_args": module_maker(FunctionLinear, False)}),
    ("module_linear_function_input_grad", "return m(x) * 2", {"make_args": module_and_grad_input(FunctionLinear)}),
    ("module_stores_apply", "return m(x)", {"make_args": module_and_grad_input(StoredApply)}),
    ("module_parameter_through_function", "return m(x)", {"make_args": module_maker(ClampedGamma)}),
    ("module_block_residual", "return m(m(x)).sum(1)", {"make_args": module_and_grad_input(Block)}),
]
snippets(SOURCE, "autograd_fn", MODULE_CASES, namespace=NS, params="m, x", train=True)
