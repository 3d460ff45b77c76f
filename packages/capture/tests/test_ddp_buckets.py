"""capture.optimize(DistributedDataParallel(model)) in one process (a gloo group of one rank):
DDP's forward runs natively around the compiled inner module, whose graph is split at DDP's
gradient buckets. (tests/distributed trains on 2 ranks.)"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

import capture

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built")


@pytest.fixture(scope="module")
def one_rank_group(tmp_path_factory):
    path = tmp_path_factory.mktemp("gloo") / "rendezvous"
    dist.init_process_group("gloo", init_method=f"file://{path}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))


def compile_counting(ddp, **options):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    return capture.optimize(ddp, backend, **options), graphs


@pytest.mark.parametrize(
    "bucket_cap_mb, pieces",
    # 0.01 MB (10485 bytes), filled from the last layer back: the last two linears (1040 +
    # 16640 bytes) make the first bucket, the first linear the second. 25 MB: one bucket.
    [(0.01, [["linear", "relu"], ["linear", "relu", "linear"]]), (25, None)],
)
def test_graph_is_split_at_ddp_buckets(one_rank_group, bucket_cap_mb, pieces):
    model = mlp()
    eager = DDP(copy.deepcopy(model), bucket_cap_mb=bucket_cap_mb)
    compiled, graphs = compile_counting(DDP(model, bucket_cap_mb=bucket_cap_mb))
    x = torch.randn(8, 16)
    out = compiled(x)
    out.square().mean().backward()
    expected = eager(x)
    expected.square().mean().backward()
    torch.testing.assert_close(out, expected)
    for p, q in zip(model.parameters(), eager.module.parameters()):
        torch.testing.assert_close(p.grad, q.grad)
    (split,) = compiled._cache.compilation.graph_splits
    if pieces is None:
        assert len(graphs) == 1 and len(split.buckets) == 1
        return
    ops = [[n.target.__name__ for n in g.graph.nodes if n.op == "call_function"] for g in graphs]
    assert ops == pieces
    assert [len(b.parameters) for b in split.buckets] == [2, 4]


def test_ddp_forward_is_not_traced(one_rank_group):
    """DDP's own Python (pre/post-forward, the reducer) runs natively: no graph break."""
    compiled, graphs = compile_counting(DDP(mlp(), bucket_cap_mb=25))
    compiled(torch.randn(8, 16))
    assert len(graphs) == 1 and not compiled._cache.compilation.breaks
    assert "forward" not in compiled._orig_mod.module.__dict__, "the compiled forward is set only during the call"


def test_ddp_of_a_compiled_module_is_split_too(one_rank_group):
    """`DDP(compiled_model)`: the graph is captured inside DDP's forward, which marks itself
    active, so it is split at DDP's buckets as when the DDP module is compiled."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    model = mlp()
    eager = copy.deepcopy(model)
    ddp = DDP(capture.optimize(model, backend), bucket_cap_mb=0.01)
    x = torch.randn(8, 16)
    torch.testing.assert_close(ddp(x), eager(x))
    assert len(graphs) == 2
    (split,) = ddp.module._cache.compilation.graph_splits
    assert [len(b.parameters) for b in split.buckets] == [2, 4]


@pytest.mark.parametrize("dynamic", [True, None], ids=["dynamic", "automatic_dynamic"])
def test_graph_with_symbolic_sizes_is_split_into_pieces_that_stay_symbolic(one_rank_group, dynamic):
    """Each piece gets the size symbols of its inputs as int inputs, so its backend compiles it
    for any size: new batch sizes run the same pieces (no compile) and match eager DDP."""
    model = mlp()
    eager = DDP(copy.deepcopy(model), bucket_cap_mb=0.01)
    compiled, graphs = compile_counting(DDP(model, bucket_cap_mb=0.01), dynamic=dynamic)
    for batch in (8, 5, 3, 11):
        x = torch.randn(batch, 16)
        out = compiled(x)
        out.square().mean().backward()
        expected = eager(x)
        expected.square().mean().backward()
        torch.testing.assert_close(out, expected)
        for p, q in zip(model.parameters(), eager.module.parameters()):
            torch.testing.assert_close(p.grad, q.grad)
            p.grad = q.grad = None
    split = compiled._cache.compilation.graph_splits[-1]
    assert [len(b.parameters) for b in split.buckets] == [2, 4]
    symbolic_pieces = graphs[-2:]
    assert len(graphs) == (2 if dynamic else 4)  # automatic dynamic: a static split first
    for piece in symbolic_pieces:
        [x] = [n for n in piece.graph.nodes if n.op == "placeholder"][:1]
        assert isinstance(x.meta["example_value"].shape[0], torch.SymInt)


def test_optimize_ddp_false_compiles_the_graph_whole(one_rank_group, monkeypatch):
    """`capture.config.optimize_ddp = False` (torch.compile's switch of that name): one graph,
    not split, still matching eager DDP."""
    monkeypatch.setattr(capture.config, "optimize_ddp", False)
    model = mlp()
    eager = DDP(copy.deepcopy(model), bucket_cap_mb=0.01)
    compiled, graphs = compile_counting(DDP(model, bucket_cap_mb=0.01))
    x = torch.randn(8, 16)
    compiled(x).square().mean().backward()
    eager(x).square().mean().backward()
    for p, q in zip(model.parameters(), eager.module.parameters()):
        torch.testing.assert_close(p.grad, q.grad)
    assert len(graphs) == 1 and not compiled._cache.compilation.graph_splits
