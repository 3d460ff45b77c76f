"""Programs aot_autograd cannot compile faithfully are refused with errors that say what
the graph does and what to change, never run with a silently different result."""

from __future__ import annotations

import pytest
import torch

from aot_autograd import AotAutogradError, TracingError, UnsupportedProgramError, aot_eager, aot_module_simplified
from aot_testing import functions_graph, recording_compiler


def transpose_in_place(x):
    return (x.t_() + 1,)


def resize_in_place(x):
    return (x.resize_(2, 2) + 1,)


def write_into_expanded(x):
    y = x[:1].expand(3, 4)
    y.add_(1)
    return (y,)


def write_first_read_second(x, y):
    x.add_(1)
    return (y * 2,)


@pytest.mark.parametrize(
    "fn, message",
    [
        (transpose_in_place, "shape or storage in place"),
        (resize_in_place, "shape or storage in place"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_unsupported_in_place_ops_raise_clear_errors(fn, message):
    with pytest.raises(UnsupportedProgramError, match=message) as error:
        aot_eager(functions_graph(fn), [torch.randn(3, 4)])
    assert "aot_autograd cannot compile" in str(error.value)


def test_write_eager_refuses_fails_the_trace_with_eagers_message():
    with pytest.raises(RuntimeError) as eager:
        write_into_expanded(torch.randn(3, 4))
    with pytest.raises(TracingError) as error:
        aot_eager(functions_graph(write_into_expanded), [torch.randn(3, 4)])
    assert str(eager.value) in str(error.value)


def test_write_into_an_input_sharing_memory_with_another_is_refused_where_they_cannot_merge():
    # A member requiring grad: the inputs are not read as views of one base (synthetic_bases.py).
    x = torch.randn(4, 4, requires_grad=True)
    with pytest.raises(UnsupportedProgramError, match="shares memory with another input"):
        aot_eager(functions_graph(write_first_read_second), [x.detach(), x])


def index_put_then_read(x):
    x.index_put_((torch.tensor([1]),), torch.tensor([5.0]))
    return (x * 1,)


def fill_then_read(x):
    x.fill_(2.0)
    return (x + 1,)


@pytest.mark.parametrize("fn", [index_put_then_read, fill_then_read], ids=lambda f: f.__name__)
def test_write_into_an_expanded_input_is_refused(fn):
    # Eager allows these writes; after index_put_, every element of the one memory location
    # reads 5, where the functional graph's value had 5 at index 1 alone (inductor once
    # returned [0, 5, 0] for eager's [5, 5, 5]).
    expanded = torch.zeros(1).expand(3)
    with pytest.raises(UnsupportedProgramError, match="memory that its arguments share .*an expanded tensor"):
        aot_eager(functions_graph(fn), [expanded])


def test_partitioner_saving_a_tuple_is_reported():
    def save_everything(joint_module, joint_inputs, *, num_fwd_outputs):
        from aot_autograd.partitioners.joint import JointGraph

        joint = JointGraph(joint_module, num_fwd_outputs)
        return joint.split(n for n in joint.forward_required if n.op != "output")

    def layer_norm(x, w):
        return (torch.nn.functional.layer_norm(x, (4,), w),)

    with pytest.raises(AotAutogradError, match="getitem outputs"):
        aot_module_simplified(
            functions_graph(layer_norm), [torch.randn(3, 4), torch.randn(4, requires_grad=True)],
            recording_compiler([]), partition_fn=save_everything,
        )
