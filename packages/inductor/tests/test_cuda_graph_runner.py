"""CudaGraphRunner's bookkeeping (runtime/cuda_graphs.py) on CPU: the CUDA graph is replaced by
a stand-in whose replay runs the recorded call again on the recorded inputs, writing into the
recorded outputs, as a graph replay does. Every call is compared with eager."""

import pytest
import torch

from conftest import assert_same, compile_aten, compile_graph
from inductor.runtime import cuda_graphs
from inductor.runtime.cuda_graphs import CudaGraphRunner

aten = torch.ops.aten


class ReplayOnCpu:
    def __init__(self, fn, static_inputs):
        self.fn, self.static_inputs = fn, static_inputs
        self.outputs = fn(*static_inputs)

    def replay(self):
        for out, new in zip(self.outputs, self.fn(*self.static_inputs)):
            if isinstance(out, torch.Tensor):
                out.copy_(new)


@pytest.fixture
def recordings(monkeypatch):
    made = []

    def capture(runner, static_inputs):
        graph = ReplayOnCpu(runner.fn, static_inputs)
        made.append(graph)
        return graph, graph.outputs

    monkeypatch.setattr(CudaGraphRunner, "_capture", capture)
    return made


def scaled_row_sums(x, w):
    return (aten.mul.Tensor(aten.sum.dim_IntList(x, [1]), aten.select.int(w, 0, 0)), aten.exp.default(w))


def rows_key(args):  # what a wrapper with a symbolic row count would read
    return (args[0].size(0),)


scaled_row_sums.size_key = rows_key


def sums_and_a_count(x, w):
    """Outputs that are not all tensors: a graph may return a size or None beside them."""
    total, exp = scaled_row_sums(x, w)
    return total, None, 3, exp


sums_and_a_count.size_key = rows_key


@pytest.mark.parametrize("graph", [scaled_row_sums, sums_and_a_count], ids=["tensors", "with non-tensors"])
def test_outputs_survive_the_next_replay(recordings, graph):
    w = torch.randn(3)
    runner = CudaGraphRunner(graph)
    xs = [torch.randn(5, 4) for _ in range(4)]
    outputs = [runner(x, w) for x in xs]
    for x, out in zip(xs, outputs):
        assert_same(out, graph(x, w))  # non-tensor outputs compared with ==, in their places
    assert len(recordings) == 1


def test_in_place_inputs_are_read_where_they_are(recordings):
    x, w = torch.randn(5, 4), torch.randn(3)
    runner = CudaGraphRunner(scaled_row_sums)
    for _ in range(4):
        w.add_(0.5)  # an optimizer updating a parameter in place
        assert_same(runner(x, w), scaled_row_sums(x, w))
    assert len(recordings) == 1


def test_a_moved_in_place_input_is_recorded_again_and_copied_from_then_on(recordings):
    x, w = torch.randn(5, 4), torch.randn(3)
    runner = CudaGraphRunner(scaled_row_sums)
    runner(x, w), runner(x, w)
    moved = torch.randn(3)
    assert_same(runner(x, moved), scaled_row_sums(x, moved))
    assert len(recordings) == 2 and runner.moved == {1}
    moved.mul_(2.0)
    again = torch.randn(3)
    assert_same(runner(x, again), scaled_row_sums(x, again))
    assert len(recordings) == 2  # copied in now: the second recording serves any address


def test_new_sizes_the_wrapper_reads_get_their_own_recording(recordings, monkeypatch):
    w = torch.randn(3)
    runner = CudaGraphRunner(scaled_row_sums)
    # Each x is kept alive: one allocated where the first call's was would be read in place
    # by its recording, and the next x, elsewhere, would then need a recording of its own.
    kept = []
    for rows in (5, 5, 7, 7, 5):
        x = torch.randn(rows, 4)
        kept.append(x)
        assert_same(runner(x, w), scaled_row_sums(x, w))
    assert len(recordings) == 2
    # A replay reads only the wrapper's sizes, not every input's whole metadata.
    monkeypatch.setattr(cuda_graphs, "_signature", lambda args: pytest.fail("whole signature computed"))
    x = torch.randn(7, 4)
    assert_same(runner(x, w), scaled_row_sums(x, w))


def test_a_compiled_graph_replays_through_its_size_key(recordings):
    x, w = torch.randn(5, 4), torch.randn(3)
    compiled = compile_aten(scaled_row_sums, [x, w])
    assert compiled.size_key([x, w]) == ()  # static sizes: one recording serves every call
    runner = CudaGraphRunner(compiled)
    for _ in range(3):
        x = torch.randn(5, 4)
        assert_same(runner(x, w), scaled_row_sums(x, w))
    assert len(recordings) == 1


def test_a_dynamic_graph_gets_a_recording_per_size_it_reads(recordings):
    from test_dynamic_kernels import trace_dynamic

    x, w = torch.randn(5, 4), torch.randn(3)
    compiled = compile_graph(trace_dynamic(scaled_row_sums, [x, w], {0: [0]}), [x, w])
    assert compiled.size_key([x, w]) == (5,)
    runner = CudaGraphRunner(compiled)
    # Each x is kept alive: one allocated where the first call's was would be read in place
    # by its recording, and the next x, elsewhere, would then need a recording of its own.
    kept = []
    for rows in (5, 5, 7, 7, 5):
        x = torch.randn(rows, 4)
        kept.append(x)
        assert_same(runner(x, w), scaled_row_sums(x, w))
    assert len(recordings) == 2
