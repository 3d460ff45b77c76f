"""compiler.compile with FSDP2 (`fully_shard`) on 2 CPU ranks (gloo): each block compiled
(sharded then compiled, or compiled then sharded as torchtitan does) and the whole model
compiled, FSDP's hooks running natively between
graphs; 3 optimizer steps match eager FSDP2 on every rank, parameters stay sharded DTensors.
With sizes that change between steps (rows, or GPT-2's sequence length), graphs become
symbolic once and are not compiled again for each new size."""

from __future__ import annotations

import copy
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from models import MODELS, blocks  # noqa: E402
from ranks import run_on_ranks  # noqa: E402

STEPS = 3
TOLERANCE = dict(rtol=1e-5, atol=1e-6)


def shard(model, mesh):
    from torch.distributed.fsdp import fully_shard

    for block in blocks(model):
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)


def train_compiled_and_eager(rank: int, world: int, model_name: str, mode: str, backend_name: str,
                             sizes: tuple[int, ...] | None = None) -> dict:
    """`sizes`: step k's batch has sizes[k] rows (MLPs) or tokens (GPT-2), compiled with
    automatic dynamic shapes (dynamic=None)."""
    import compiler
    from compiler.backends import lookup_backend
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor

    mesh = init_device_mesh("cpu", (world,))
    model, batch, loss_of = MODELS[model_name]()
    eager = copy.deepcopy(model)
    shard(eager, mesh)
    graphs = []
    backend = lookup_backend(backend_name)

    def counting_backend(gm, example_inputs):
        graphs.append(sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method")))
        return backend(gm, example_inputs)

    def compile_blocks(**options):
        layers = blocks(model)
        for i, block in enumerate(layers):
            layers[i] = compiler.compile(block, backend=counting_backend, **options)

    compiled = model
    if mode == "compile_then_shard":
        # torchtitan's order: blocks compiled with fullgraph=True, then the compiled blocks
        # sharded (FSDP's hooks sit on the compiled module, outside its graph).
        compile_blocks(fullgraph=True)
        shard(model, mesh)
    elif mode == "per_block":
        shard(model, mesh)
        compile_blocks()
    else:
        shard(model, mesh)
        compiled = compiler.compile(model, backend=counting_backend)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    eager_optimizer = torch.optim.AdamW(eager.parameters(), lr=1e-2)
    generator = torch.Generator().manual_seed(rank)  # each rank its own data
    losses, graphs_after_step = [], []
    for step in range(STEPS):
        args, kwargs = batch(generator, sizes[step] if sizes else None)
        loss = loss_of(compiled(*args, **kwargs))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        eager_loss = loss_of(eager(*args, **kwargs))
        eager_loss.backward()
        eager_optimizer.step()
        eager_optimizer.zero_grad()
        losses.append((loss.item(), eager_loss.item()))
        graphs_after_step.append(len(graphs))
    return {
        "losses": losses,
        "sharded": all(isinstance(p, DTensor) for p in model.parameters()),
        "parameters": [(p.full_tensor(), q.full_tensor()) for p, q in zip(model.parameters(), eager.parameters())],
        "graphs": graphs,
        "graphs_after_step": graphs_after_step,
    }


ROWS = (4, 6, 3)
CASES = [
    *(("blocks", mode, backend) for mode in ("per_block", "whole_model") for backend in ("aot_eager", "inductor")),
    ("blocks", "compile_then_shard", "aot_eager"),
]
CHANGING_ROWS_CASES = [("blocks", mode, backend, ROWS) for mode in ("per_block", "whole_model") for backend in ("aot_eager", "inductor")]


def block_cases(rank: int, world: int) -> dict:
    """Every case of the small model in one pair of processes (starting them is most of the
    time these tests take)."""
    return {case: train_compiled_and_eager(rank, world, *case) for case in CASES + CHANGING_ROWS_CASES}


@pytest.fixture(scope="module")
def block_runs():
    by_rank = run_on_ranks(block_cases)
    return {case: [runs[case] for runs in by_rank] for case in by_rank[0]}


# GPT-2's key bias gets a gradient that is zero but for rounding (softmax ignores a constant
# added to every key), and AdamW divides it by its own root mean square: inductor's fused
# kernels round differently from eager, so those entries move by up to a few 1e-5 (lr 1e-2).
ADAMW_OF_ROUNDING_NOISE = dict(rtol=1e-5, atol=1e-4)


def assert_compiled_matches_eager(results, parameter_tolerance=TOLERANCE):
    for result in results:
        assert result["sharded"], "parameters stay sharded DTensors"
        for loss, eager_loss in result["losses"]:
            torch.testing.assert_close(loss, eager_loss, **TOLERANCE)
        for param, eager_param in result["parameters"]:
            torch.testing.assert_close(param, eager_param, **parameter_tolerance)


@pytest.mark.parametrize("case", CASES, ids=lambda case: "-".join(case[1:]))
def test_training_matches_eager_fsdp(block_runs, case):
    assert_compiled_matches_eager(block_runs[case])


@pytest.mark.parametrize("mode, backend", [("per_block", "aot_eager"), ("per_block", "inductor"), ("compile_then_shard", "aot_eager")])
def test_each_block_is_one_graph(block_runs, mode, backend):
    for result in block_runs[("blocks", mode, backend)]:
        assert result["graphs"] == [4, 4], "linear, relu, linear, add in each block"


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_whole_model_graphs_break_only_around_fsdp_hooks(block_runs, backend):
    """FSDP's hooks (all-gather before a block, reshard after) run natively; every operation
    of the model is still in a graph: the embedding, each block, the head."""
    for result in block_runs[("blocks", "whole_model", backend)]:
        assert result["graphs"] == [1, 4, 4, 1], result["graphs"]


@pytest.mark.parametrize("case", CHANGING_ROWS_CASES, ids=lambda case: "-".join(case[1:3]))
def test_changing_batch_sizes_match_eager_fsdp_and_compile_once_more(block_runs, case):
    """4, 6 then 3 rows: the first size compiles static graphs, the second symbolic ones, the
    third reuses them (per block: a graph per block; whole model: embedding, blocks, head)."""
    results = block_runs[case]
    assert_compiled_matches_eager(results)
    per_capture = 2 if case[1] == "per_block" else 4
    for result in results:
        assert result["graphs_after_step"] == [per_capture, 2 * per_capture, 2 * per_capture], result["graphs"]


LENGTHS = (16, 24, 9)
# Per block with inductor, whole model with aot_eager. (Per block with aot_eager was a third
# case: its capture, FSDP hooks, symbolic blocks and aot_autograd graphs are the ones inductor
# compiles here, and the residual blocks above check per-block aot_eager at tight tolerance.)
GPT2_CASES = [("whole_model", "aot_eager"), ("per_block", "inductor")]


def gpt2_cases(rank: int, world: int) -> dict:
    """Every GPT-2 case in one pair of processes: starting a rank and importing transformers and
    the compiler in it cost ~8 s of CPU, as much as a case's training."""
    return {case: train_compiled_and_eager(rank, world, "gpt2", *case, LENGTHS) for case in GPT2_CASES}


@pytest.fixture(scope="module")
def gpt2_runs():
    by_rank = run_on_ranks(gpt2_cases)
    return {case: [runs[case] for runs in by_rank] for case in by_rank[0]}


@pytest.mark.slow
@pytest.mark.parametrize("mode, backend", GPT2_CASES)
def test_gpt2_with_changing_sequence_lengths_matches_eager_fsdp(gpt2_runs, mode, backend):
    """GPT-2 at 16, 24 then 9 tokens a step: graphs become symbolic at the second length and
    the third compiles none of its own (after FSDP's hooks break the graph, the resume
    functions get GPT-2's `output_shape` as an argument, whose length item becomes symbolic
    too). Every loss and parameter matches eager FSDP2, parameters stay DTensors."""
    results = gpt2_runs[(mode, backend)]
    assert_compiled_matches_eager(results, ADAMW_OF_ROUNDING_NOISE if backend == "inductor" else TOLERANCE)
    for result in results:
        graphs, after = result["graphs"], result["graphs_after_step"]
        assert all(count > 0 for count in graphs), graphs
        if mode == "per_block":
            assert after == [2, 4, 4], "one graph per GPT2Block, static then symbolic"
        else:
            assert len(graphs) >= 6, "the blocks' graphs and the embedding's and head's around them"
            assert after[1] == 2 * after[0], graphs
            assert after[2] == after[1], "no graph compiled for the third length"
