"""Every in-place op of the op database (but one, below), applied to a fresh tensor inside a compiled graph,
gives eager's result (same seed for random ops): in-place views (`t_`, `squeeze_`) included,
which a tensor the graph made becomes; in-place ops that change a tensor's storage
(`resize_`) are refused, and samples eager rejects are rejected too."""

from __future__ import annotations

import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

from aot_autograd import UnsupportedProgramError, aot_module_simplified
from aot_autograd.backends import run_graph_module
from aot_testing import graph_calling

# The op database's rrelu variant reseeds the generator inside the function (a Python side
# effect on global state, which an ATen graph cannot hold): compared by test_aot_dropout instead.
RESEEDING = {"nn.functional.rrelu"}
INPLACE_OPS = [
    op for op in op_db
    if op.inplace_variant is not None and op.supports_dtype(torch.float32, "cpu") and op.name not in RESEEDING
]
# Their in-place forms change a tensor's storage size (`resize_`). In-place views (`t_`,
# `unsqueeze_`) of a tensor the graph made are compiled as the views they become.
METADATA_WRITERS = {"resize_", "resize_as_"}
# ...except where the sample's restride keeps every element in place (as_strided's first
# sample gives a size-[1] tensor its own geometry), which is compiled (see the tests below).
KEEPS_ELEMENTS = {"as_strided."}


class InPlaceOnClone(torch.nn.Module):
    def __init__(self, op, sample):
        super().__init__()
        self.op, self.sample = op, sample

    def forward(self, x, *tensors):
        supplied = iter(tensors)
        args = [next(supplied) if isinstance(a, torch.Tensor) else a for a in self.sample.args]
        y = x.clone()
        self.op.inplace_variant(y, *args, **self.sample.kwargs)
        return (y,)


def _first_sample(op):
    for sample in op.sample_inputs("cpu", torch.float32):
        if isinstance(sample.input, torch.Tensor):
            return sample
    pytest.skip("no sample with a tensor input")


@pytest.mark.slow
@pytest.mark.parametrize("op", INPLACE_OPS, ids=lambda op: f"{op.name}.{op.variant_test_name}".rstrip("."))
def test_inplace_op_matches_eager(op):
    sample = _first_sample(op)
    module = InPlaceOnClone(op, sample)
    inputs = [sample.input, *(a for a in sample.args if isinstance(a, torch.Tensor))]
    graph = graph_calling(module, len(inputs))
    if op.name in METADATA_WRITERS and f"{op.name}.{op.variant_test_name}" not in KEEPS_ELEMENTS:
        with pytest.raises(UnsupportedProgramError, match="shape or storage in place"):
            aot_module_simplified(graph, inputs, run_graph_module)
        return
    torch.manual_seed(0)
    try:
        expected = module(*inputs)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            aot_module_simplified(graph, inputs, run_graph_module)(*inputs)
        return
    compiled = aot_module_simplified(graph, inputs, run_graph_module)
    torch.manual_seed(0)
    torch.testing.assert_close(compiled(*inputs), expected, equal_nan=True)


class PoolThenRestride(torch.nn.Module):
    # What torch 2.11's composite adaptive_avg_pool2d(x, 1) does on a channels-last input.
    def forward(self, x):
        pooled = x.mean((-1, -2), keepdim=True)
        n, c = pooled.shape[:2]
        pooled.as_strided_(pooled.shape, (c, 1, c, c))
        return (pooled.flatten(1) * 2,)


class TransposeInPlace(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        y.as_strided_((y.shape[1], y.shape[0]), (1, y.shape[1]))
        return (y + 1,)


def test_restride_of_size_one_dims_matches_eager():
    x = torch.randn(2, 8, 5, 5).contiguous(memory_format=torch.channels_last)
    module = PoolThenRestride()
    compiled = aot_module_simplified(graph_calling(module, 1), [x], run_graph_module)
    fresh = torch.randn_like(x)
    torch.testing.assert_close(compiled(fresh), module(fresh))


def test_restride_that_moves_elements_matches_eager():
    # The clone is the graph's own: from the restride on, it is a view of its memory.
    x = torch.randn(3, 4)
    compiled = aot_module_simplified(graph_calling(TransposeInPlace(), 1), [x], run_graph_module)
    fresh = torch.randn_like(x)
    torch.testing.assert_close(compiled(fresh), TransposeInPlace()(fresh))


class ForeachUpdate(torch.nn.Module):
    # What a foreach optimizer step does: lists of tensors written in place, parameters
    # (leaves that require grad) updated under no_grad.
    def forward(self, p0, p1, g0, g1, m0, m1, step, scale):
        with torch.no_grad():
            torch._foreach_add_([step], 1)
            torch._foreach_lerp_([m0, m1], [g0, g1], 0.1)
            torch._foreach_addcdiv_([p0, p1], [m0, m1], [g0.abs() + 1, g1.abs() + 1], torch.stack([scale, scale * 2]))
        return ()


def test_foreach_writes_into_lists_of_inputs_match_eager():
    def make_inputs():
        params = [torch.randn(3, 2, requires_grad=True), torch.randn(4, requires_grad=True)]
        return [*params, *(torch.randn_like(p) for p in params), *(torch.randn_like(p) for p in params), torch.tensor(0.0), torch.tensor(-0.01)]

    inputs = make_inputs()
    compiled = aot_module_simplified(graph_calling(ForeachUpdate(), len(inputs)), inputs, run_graph_module)
    actual = make_inputs()
    expected = [x.detach().clone().requires_grad_(x.requires_grad) for x in actual]
    compiled(*actual)
    ForeachUpdate()(*expected)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e)
        # A parameter updated under no_grad stays a leaf, as in eager.
        assert (a.is_leaf, a.requires_grad) == (e.is_leaf, e.requires_grad)


class RowOfAParameterFilled(torch.nn.Module):
    # A parameter's row written in place under no_grad, then the parameter used with grads:
    # the row is a view made under no_grad and written, which autograd forbids reading in grad
    # mode. Functionalization's metadata-only runs of ops on it raised that error.
    def forward(self, weight, bias, x):
        with torch.no_grad():
            weight[0].fill_(0.0)
            bias.clamp_(-0.1, 0.1)
        return (torch.nn.functional.linear(x, weight, bias),)


def test_parameter_rows_written_under_no_grad_then_used_with_grads():
    def make_inputs():
        torch.manual_seed(0)
        return [torch.randn(3, 4, requires_grad=True), torch.randn(3, requires_grad=True),
                torch.randn(5, 4, requires_grad=True)]

    inputs = make_inputs()
    compiled = aot_module_simplified(graph_calling(RowOfAParameterFilled(), len(inputs)), inputs, run_graph_module)
    actual, expected = make_inputs(), make_inputs()
    compiled(*actual)[0].sum().backward()
    RowOfAParameterFilled()(*expected)[0].sum().backward()
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e)
        torch.testing.assert_close(a.grad, e.grad)
        assert (a.is_leaf, a.requires_grad) == (e.is_leaf, e.requires_grad)


class MakesATensorFromData(torch.nn.Module):
    # What an optimizer's lazy state does (`state["step"] = torch.tensor(0.0)`): a tensor made
    # from data, returned, and written by the program after the graph.
    def forward(self, x):
        return (torch.tensor(0.0), x * 2)


def test_a_tensor_made_from_data_is_new_on_every_call():
    # The data tensor became a constant of the graph; returned through a plain lift, every
    # call handed out that one constant, and a step counter written after a call (RAdam's,
    # across a graph break) kept counting: 1, 2, 3 where eager has 1, 1, 1.
    x = torch.randn(3)
    compiled = aot_module_simplified(graph_calling(MakesATensorFromData(), 1), [x], run_graph_module)
    seen = []
    for _ in range(3):
        step, _ = compiled(x)
        step += 1
        seen.append(step.item())
    assert seen == [1.0, 1.0, 1.0]


class LinearOfAVector(torch.nn.Module):
    # aten.linear's own kernel squeezes a 1-d input's result in place (Gradium's TTS model).
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(6, 4)

    def forward(self, v):
        return (self.proj(v).sigmoid(),)


class InPlaceViewsThenWrite(torch.nn.Module):
    # In-place views of the graph's own tensor, then a write through the last one.
    def forward(self, x):
        y = x * 2
        y.t_()
        y.unsqueeze_(0)
        y.add_(1)
        return (y * 3,)


class InPlaceViewOfAViewedTensor(torch.nn.Module):
    # `row` shares y's memory: the write after y's in-place view reaches it.
    def forward(self, x):
        with torch.no_grad():
            y = x * 2
            row = y[0]
            y.t_()
            y.add_(1)
        return (y * x.t(), row + 0)


@pytest.mark.parametrize("module, sizes", [(LinearOfAVector, [(6,)]), (InPlaceViewsThenWrite, [(3, 5)]),
                                           (InPlaceViewOfAViewedTensor, [(3, 5)])],
                         ids=["linear_of_a_vector", "in_place_views_then_write", "in_place_view_of_a_viewed_tensor"])
def test_in_place_views_of_graph_tensors_match_eager_with_grads(module, sizes):
    model = module()
    inputs = [torch.randn(*s, requires_grad=True) for s in sizes]
    compiled = aot_module_simplified(graph_calling(model, len(inputs)), inputs, run_graph_module)
    for _ in range(2):  # the first call, then fresh values
        fresh = [torch.randn(*s, requires_grad=True) for s in sizes]
        twins = [f.detach().clone().requires_grad_() for f in fresh]
        got, want = compiled(*fresh), model(*twins)
        torch.testing.assert_close(got, want)
        differentiable = [(g, w, torch.randn_like(w)) for g, w in zip(got, want) if w.requires_grad]
        got_grads = torch.autograd.grad([g for g, _, _ in differentiable], [*fresh, *model.parameters()],
                                        [c for _, _, c in differentiable])
        want_grads = torch.autograd.grad([w for _, w, _ in differentiable], [*twins, *model.parameters()],
                                         [c for _, _, c in differentiable])
        torch.testing.assert_close(got_grads, want_grads)


class InPlaceViewOfAViewedTensorWithGrad(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        row = y[0]
        y.t_()
        y.add_(1)
        return (y * 3, row + 0)


def test_in_place_view_of_a_viewed_tensor_requiring_grad_is_refused():
    # Its views' backward, traced on fakes, does not follow the new geometry: refused, not wrong.
    x = torch.randn(3, 5, requires_grad=True)
    with pytest.raises(UnsupportedProgramError, match="shape or storage in place"):
        aot_module_simplified(graph_calling(InPlaceViewOfAViewedTensorWithGrad(), 1), [x], run_graph_module)


class ShiftsInPlace(torch.nn.Module):
    # Python's `<<=` and `>>=` on a tensor reach the graph as aten.__ilshift__/__irshift__
    # (no trailing underscore): their functional forms are __lshift__/__rshift__.
    def forward(self, x, amount):
        y = x.clone()
        y <<= 2
        y >>= amount
        x <<= 1
        return (y,)


def test_python_shift_operators_in_place_match_eager():
    def make_inputs():
        return [torch.randint(-50, 50, (5,)), torch.randint(0, 3, (5,))]

    inputs = make_inputs()
    compiled = aot_module_simplified(graph_calling(ShiftsInPlace(), 2), inputs, run_graph_module)
    actual = make_inputs()
    expected = [t.clone() for t in actual]
    torch.testing.assert_close(compiled(*actual), ShiftsInPlace()(*expected))
    torch.testing.assert_close(actual, expected)  # the input written by `x <<= 1`
