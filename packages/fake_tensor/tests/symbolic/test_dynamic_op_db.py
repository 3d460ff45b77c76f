"""torch's op database with the leading dimension of every input dynamic (see dynamic_op_db.py).

CI runs the first sample of every third op (99.6% of 223 pairs); the full run (`python
dynamic_op_db.py`, about 3-5 minutes) measured 99.83% of 18,699 (op, sample) pairs correct
on torch 2.13 (cov with weights, resize_, resize_as_ and to_sparse still fail). The rate must
not drop below the floor.
"""

from __future__ import annotations

import pytest

from dynamic_op_db import run, summarize

pytestmark = pytest.mark.slow

RATE_FLOOR = 0.98


def test_symbolic_shapes_at_hints_match_eager_across_op_db():
    outcomes = run(samples_per_op=1, every_nth_op=3)
    rate = sum(o.correct for o in outcomes) / len(outcomes)
    print(summarize(outcomes, seconds=0))
    assert rate >= RATE_FLOOR, summarize(outcomes, seconds=0)
