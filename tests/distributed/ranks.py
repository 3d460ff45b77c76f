"""Running a function on 2 CPU ranks (gloo, `file://` rendezvous in a temporary folder) and
collecting what each rank returns."""

from __future__ import annotations

import os
import pickle
import tempfile

import torch.distributed as dist
import torch.multiprocessing as mp


def _rank_main(rank: int, world: int, folder: str, fn, args) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous", rank=rank, world_size=world)
    try:
        result = fn(rank, world, *args)
    finally:
        dist.destroy_process_group()
    with open(os.path.join(folder, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(result, f)


def run_on_ranks(fn, *args, world: int = 2) -> list:
    """`fn(rank, world, *args)` on each rank of a fresh gloo group; its results by rank
    (`fn` must be importable, and return something picklable)."""
    with tempfile.TemporaryDirectory() as folder:
        mp.spawn(_rank_main, args=(world, folder, fn, args), nprocs=world, join=True)
        results = []
        for rank in range(world):
            with open(os.path.join(folder, f"rank{rank}.pkl"), "rb") as f:
                results.append(pickle.load(f))
        return results
