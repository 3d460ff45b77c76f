"""compiler.compile(DistributedDataParallel(model)) on 2 CPU ranks (gloo): DDP's forward runs
natively around the compiled inner module, whose graph is split at DDP's gradient buckets;
3 optimizer steps match eager DDP on every rank, for aot_eager and inductor."""

from __future__ import annotations

import copy
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from models import MODELS  # noqa: E402
from ranks import run_on_ranks  # noqa: E402

STEPS = 3
TOLERANCE = dict(rtol=1e-5, atol=1e-6)


def train_compiled_and_eager(rank: int, world: int, model_name: str, backend_name: str, bucket_cap_mb: float,
                             sizes: tuple[int, ...] | None = None, dynamic: bool | None = None) -> dict:
    """`sizes`: step k's batch has sizes[k] rows (MLP) or tokens (GPT-2)."""
    import compiler
    from compiler.backends import lookup_backend
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
    from torch.nn.parallel import DistributedDataParallel as DDP

    model, batch, loss_of = MODELS[model_name]()
    eager = DDP(copy.deepcopy(model), bucket_cap_mb=bucket_cap_mb)
    ddp = DDP(model, bucket_cap_mb=bucket_cap_mb)
    events: list[str] = []

    def recording_hook(state, bucket):
        events.append(f"bucket {bucket.index()}")
        return allreduce_hook(None, bucket)

    ddp.register_comm_hook(None, recording_hook)
    graphs = []
    backend = lookup_backend(backend_name)

    def counting_backend(gm, example_inputs):
        graphs.append(sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method")))
        return backend(gm, example_inputs)

    compiled = compiler.compile(ddp, backend=counting_backend, dynamic=dynamic)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    eager_optimizer = torch.optim.SGD(eager.parameters(), lr=0.05, momentum=0.9)
    generator = torch.Generator().manual_seed(rank)  # each rank its own data
    losses = []

    def unpacked(x):
        events.append("saved tensor used")
        return x

    graphs_after_step = []
    for step in range(STEPS):
        events.clear()
        args, kwargs = batch(generator, sizes[step] if sizes else None)
        with torch.autograd.graph.saved_tensors_hooks(lambda x: x, unpacked):
            loss = loss_of(compiled(*args, **kwargs))
        loss.backward()
        compiled_events = list(events)
        optimizer.step()
        optimizer.zero_grad()
        eager_loss = loss_of(eager(*args, **kwargs))
        eager_loss.backward()
        eager_optimizer.step()
        eager_optimizer.zero_grad()
        losses.append((loss.item(), eager_loss.item()))
        graphs_after_step.append(len(graphs))
    splits = compiled._cache.compilation.graph_splits
    return {
        "losses": losses,
        "parameters": [(p.detach().clone(), q.detach().clone()) for p, q in zip(ddp.parameters(), eager.parameters())],
        "graphs": graphs,
        "graphs_after_step": graphs_after_step,
        "our_buckets": [[(len(b.parameters), b.nbytes) for b in s.buckets] for s in splits],
        # The last step's backward: in the first step DDP puts every parameter in one bucket,
        # then rebuilds its buckets in the order gradients became ready.
        "events": compiled_events,
    }


def mlp_cases(rank: int, world: int) -> dict:
    """Every MLP case in one pair of processes (starting them, and importing the compiler
    in them, is most of the time these tests take)."""
    runs = {backend: train_compiled_and_eager(rank, world, "mlp", backend, 0.01) for backend in ("aot_eager", "inductor")}
    runs["inductor_symbolic_batch"] = train_compiled_and_eager(rank, world, "mlp", "inductor", 0.01, (8, 5, 3), True)
    runs["explain"] = explain_ddp_mlp()
    return runs


def explain_ddp_mlp():
    import compiler
    from torch.nn.parallel import DistributedDataParallel as DDP

    model, batch, _ = MODELS["mlp"]()
    explanation = compiler.explain(DDP(model, bucket_cap_mb=0.01))(*batch(torch.Generator())[0])
    return {
        "graph_count": explanation.graph_count,
        "graph_break_count": explanation.graph_break_count,
        "compiled_graph_count": explanation.compiled_graph_count,
        "bucket_parameters": [len(b.parameters) for b in explanation.graph_splits[0].buckets],
        "text": str(explanation),
    }


@pytest.fixture(scope="module")
def mlp_runs():
    by_rank = run_on_ranks(mlp_cases)
    return {case: [runs[case] for runs in by_rank] for case in by_rank[0]}


def assert_compiled_matches_eager(results):
    for result in results:
        for loss, eager_loss in result["losses"]:
            torch.testing.assert_close(loss, eager_loss, **TOLERANCE)
        for param, eager_param in result["parameters"]:
            torch.testing.assert_close(param, eager_param, **TOLERANCE)
    # DDP keeps the replicas equal: every rank ends with the same parameters.
    for (p0, _), (p1, _) in zip(results[0]["parameters"], results[1]["parameters"]):
        torch.testing.assert_close(p0, p1, **TOLERANCE)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_mlp_training_matches_eager_ddp(mlp_runs, backend):
    assert_compiled_matches_eager(mlp_runs[backend])


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_mlp_graph_is_split_at_ddp_buckets(mlp_runs, backend):
    for result in mlp_runs[backend]:
        # bucket_cap_mb=0.01 (10485 bytes), filled from the last layer back: the last two
        # linears (1040 + 16640 bytes) fill the first bucket, the first linear the second;
        # one captured graph, compiled as two pieces (linear, relu; linear, relu, linear).
        assert result["graphs"] == [2, 3], result["graphs"]
        assert result["our_buckets"] == [[(2, 4352), (4, 17680)]]


def test_mlp_with_symbolic_batch_sizes_is_split_once_and_matches_eager_ddp(mlp_runs):
    """dynamic=True, batches of 8, 5 and 3 rows: the graph is split at the same buckets, each
    piece compiled once for symbolic sizes, and training matches eager DDP."""
    results = mlp_runs["inductor_symbolic_batch"]
    assert_compiled_matches_eager(results)
    for result in results:
        assert result["graphs"] == [2, 3], result["graphs"]
        assert result["our_buckets"] == [[(2, 4352), (4, 17680)]]


def test_first_bucket_is_reduced_before_the_backward_of_earlier_layers(mlp_runs):
    """The overlap the split exists for: DDP's first bucket starts its all-reduce while the
    backward of the first piece (the first linear) has not used its saved tensors yet. (One
    graph would be one autograd node: every gradient, so every bucket, only at its end.)"""
    for result in mlp_runs["aot_eager"]:
        events = result["events"]
        first = events.index("bucket 0")
        assert "saved tensor used" in events[first:], events


def test_explain_reports_the_bucket_split(mlp_runs):
    for explanation in mlp_runs["explain"]:
        assert explanation["graph_count"] == 1 and explanation["graph_break_count"] == 0
        assert explanation["compiled_graph_count"] == 2
        assert explanation["bucket_parameters"] == [2, 4]
        assert "split into 2 graphs at DDP bucket boundaries" in explanation["text"]


LENGTHS = (16, 24, 9)
# (backend, dynamic): aot_eager with automatic dynamic shapes; inductor with dynamic=True (one
# compile to keep CI short).
GPT2_CASES = {"aot_eager-automatic": ("aot_eager", None), "inductor-dynamic": ("inductor", True)}


def gpt2_cases(rank: int, world: int) -> dict:
    """Both GPT-2 cases in one pair of processes: starting a rank and importing transformers and
    the compiler in it cost ~8 s of CPU, as much as a case's training."""
    return {name: train_compiled_and_eager(rank, world, "gpt2", backend, 0.05, LENGTHS, dynamic)
            for name, (backend, dynamic) in GPT2_CASES.items()}


@pytest.fixture(scope="module")
def gpt2_runs():
    by_rank = run_on_ranks(gpt2_cases)
    return {case: [runs[case] for runs in by_rank] for case in by_rank[0]}


@pytest.mark.slow
@pytest.mark.parametrize("case", GPT2_CASES)
def test_gpt2_with_changing_sequence_lengths_matches_eager_ddp(gpt2_runs, case):
    """GPT-2 at 16, 24 then 9 tokens a step. Automatic dynamic: the first length compiles a
    static split, the second a symbolic one (its pieces get the length as an int input), the
    third reuses it. dynamic=True (inductor): symbolic from the first step. Every step's loss
    and every final parameter match eager DDP on every rank."""
    dynamic = GPT2_CASES[case][1]
    results = gpt2_runs[case]
    assert_compiled_matches_eager(results)
    for result in results:
        pieces = [len(split) for split in result["our_buckets"]]
        assert pieces == ([2, 2] if dynamic is None else [2]), "each capture split into 2 DDP buckets"
        assert all(count > 0 for count in result["graphs"])
        # No graph compiled after the last new capture: not one per new length.
        assert result["graphs_after_step"] == ([2, 4, 4] if dynamic is None else [2, 2, 2]), result["graphs"]
