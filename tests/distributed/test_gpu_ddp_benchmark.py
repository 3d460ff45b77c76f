"""benchmarks/gpu_ddp.py's smoke mode (CPU, gloo, a tiny MLP, aot_eager, our child only): the
script runs end to end and writes its JSON; each variant trains like eager, and the DDP split
compiles one graph per bucket. (Its GPU numbers come from the GPU machine.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_gpu_ddp_benchmark_smoke_mode(tmp_path):
    out = tmp_path / "ddp.json"
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "gpu_ddp.py"), "--device", "cpu", "--tiny",
               "--model", "mlp", "--backend", "aot_eager", "--only", "ours", "--warmup", "1", "--iters", "2",
               "--out", str(out)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {row["workload"]: row for row in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"ours", "ours_ddp_split", "ours_ddp_whole"}, rows
    for row in rows.values():
        assert row.get("correct") is True and row["ms"] > 0, row
    split, whole = rows["ours_ddp_split"], rows["ours_ddp_whole"]
    assert split["buckets"] == [split["graphs"]] and split["graphs"] > 1, split
    assert whole["graphs"] == 1 and "buckets" not in whole, whole
