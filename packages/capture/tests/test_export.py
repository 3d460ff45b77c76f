"""capture.export: one graph for example inputs, with specs, guards and a readable graph;
code that would need a graph break is refused naming the user's line."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import capture
from helpers import assert_same


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 8)
        self.b = nn.Linear(8, 2)

    def forward(self, x, *, scale=1.0):
        hidden = self.a(x).relu()
        return {"out": self.b(hidden) * scale, "hidden": hidden}


def test_exported_module_matches_eager():
    model = TwoLayers()
    program = capture.export(model, (torch.randn(3, 4),), {"scale": 2.0})
    x = torch.randn(3, 4)
    assert_same(program(x, scale=2.0), model(x, scale=2.0))


def test_graph_is_readable_and_has_lifted_parameters():
    program = capture.export(TwoLayers(), (torch.randn(3, 4),))
    text = program.graph_module.print_readable(print_output=False)
    assert "relu" in text and "linear" in text
    placeholders = [n for n in program.graph.nodes if n.op == "placeholder"]
    assert len(placeholders) == 5
    assert not [n for n in program.graph.nodes if n.op == "get_attr"]


def test_specs_describe_inputs_and_outputs():
    program = capture.export(TwoLayers(), (torch.randn(3, 4),), {"scale": 2.0})
    assert program.in_spec.num_leaves == 2
    assert program.out_spec.num_leaves == 2


def test_calling_with_other_shapes_is_refused():
    program = capture.export(lambda x: x * 2, (torch.randn(3),))
    with pytest.raises(capture.ExportGuardError, match=r"L\['x'\]"):
        program(torch.randn(4))


def test_guards_are_exposed():
    program = capture.export(lambda x: x * 2, (torch.randn(3),))
    assert program.guards(torch.randn(3))
    assert "L['x']" in program.guards.source


def test_graph_break_is_refused_with_location():
    def fn(x):
        y = x * 2
        print(y)
        return y

    with pytest.raises(capture.Unsupported) as info:
        capture.export(fn, (torch.randn(3),))
    assert info.value.filename == __file__
    assert info.value.source_line == "print(y)"


def test_program_exception_propagates():
    def fn(x):
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        capture.export(fn, (torch.randn(3),))


def test_dynamic_shapes_with_named_dims():
    from fake_tensor import Dim

    batch = Dim("batch", max=64)
    program = capture.export(TwoLayers(), (torch.randn(3, 4),), dynamic_shapes={"x": {0: batch}})
    for rows in (2, 7, 64):
        x = torch.randn(rows, 4)
        assert program(x)["out"].shape == (rows, 2)
    with pytest.raises(capture.ExportGuardError):
        program(torch.randn(65, 4))


def test_dynamic_shapes_by_position():
    program = capture.export(lambda x, y: x @ y, (torch.randn(3, 4), torch.randn(4, 5)), dynamic_shapes=([0], None))
    torch.testing.assert_close(program(torch.ones(6, 4), torch.ones(4, 5)), torch.full((6, 5), 4.0))
    with pytest.raises(capture.ExportGuardError):
        program(torch.ones(6, 4), torch.ones(4, 6))


def test_graph_module_takes_arguments_in_signature_order():
    def fn(a, b, unused, n, rest):
        return b - a * n + rest["k"][1]

    args = (torch.randn(3), torch.randn(3), torch.randn(3), 2, {"k": (1, torch.randn(3))})
    program = capture.export(fn, args)
    placeholders = [n.name for n in program.graph.nodes if n.op == "placeholder"]
    assert len(placeholders) == len(torch.utils._pytree.tree_leaves(args))
    fresh = (torch.randn(3), torch.randn(3), torch.randn(3), 2, {"k": (1, torch.randn(3))})
    (result,) = program.graph_module(*torch.utils._pytree.tree_leaves(fresh))
    assert_same(result, fn(*fresh))
    assert_same(program(*fresh), fn(*fresh))


def test_graph_module_lifts_parameters_before_arguments():
    model = TwoLayers()
    program = capture.export(model, (torch.randn(3, 4),))
    x = torch.randn(3, 4)
    lifted = [model.a.weight, model.a.bias, model.b.weight, model.b.bias]
    outputs = program.graph_module(*lifted, x)
    expected = model(x)
    assert sorted(o.shape[1] for o in outputs) == [2, 8]
    for out in outputs:
        assert_same(out, expected["out"] if out.shape[1] == 2 else expected["hidden"])
