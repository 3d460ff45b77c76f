"""Conformance of fakes with eager CPU on torch's op database (see op_db_check.py).

CI runs the first few samples of every op (float32) and the first sample of every op that
supports bfloat16; `op_db_check.py --samples all` prints the full rate. A test fails when
the rate drops below the floor reached so far: raise the floor when you fix ops.
"""

import pytest
import torch

from op_db_check import Summary, run_op_db

# (dtype, samples per op) -> the rate reached; CI fails below it.
FLOORS = {
    (torch.float32, 3): 0.994,
    (torch.bfloat16, 1): 0.994,
}


@pytest.mark.slow
@pytest.mark.parametrize("dtype,samples_per_op", list(FLOORS), ids=lambda v: str(v).replace("torch.", ""))
def test_op_db_fake_metadata_matches_eager(dtype, samples_per_op):
    summary = Summary(run_op_db(dtype, samples_per_op))
    print(summary.report(dtype))
    assert summary.rate >= FLOORS[(dtype, samples_per_op)], summary.report(dtype)
