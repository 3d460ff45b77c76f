"""The conformance corpus in CI: no case may give a wrong result under compiler.compile.

Every case (tests/conformance/corpus/) runs through ours with the `eager` backend and
fullgraph=False, and a deterministic third of them with fullgraph=True as well, against eager
(see runner.py for what is compared). A wrong value, dtype, mutation or grad, or a missing
exception, fails the case's test. Refusals (Unsupported) and other errors are recorded, not
failed: `python tests/conformance/report.py` lists them grouped by reason, beside torch.compile.

CONFORMANCE_FULL=1 runs every case with fullgraph False and True on the backends named by
CONFORMANCE_BACKENDS (default "eager,aot_eager,inductor"; comma-separated).

KNOWN_WRONG lists the wrong results found when the corpus was written, expected to fail until
fixed (once fixed, the test passes with a warning asking to delete the entry).
"""

from __future__ import annotations

import os
import warnings
import zlib

import pytest
from corpus import all_cases
from runner import Column, run_pairs

FULL = os.environ.get("CONFORMANCE_FULL") == "1"
BACKENDS = os.environ.get("CONFORMANCE_BACKENDS", "eager,aot_eager,inductor" if FULL else "eager").split(",")
# A normal case takes well under a second; the few that hang are cut short sooner in CI.
TIMEOUT_S = 20 if FULL else 6

CASES = all_cases()

KNOWN_WRONG = {
}


def in_ci_subset(case) -> bool:
    """The deterministic third of the corpus that CI also runs with fullgraph=True."""
    return zlib.crc32(case.name.encode()) % 3 == 0


def pairs_to_run():
    pairs = []
    for backend in BACKENDS:
        for case in CASES:
            pairs.append((case, Column("ours", backend, False)))
            if FULL or in_ci_subset(case):
                pairs.append((case, Column("ours", backend, True)))
    return pairs


@pytest.fixture(scope="module")
def results():
    workers = int(os.environ.get("CONFORMANCE_WORKERS", "1"))
    by_case: dict[str, list] = {}
    for result in run_pairs(pairs_to_run(), workers=workers, timeout_s=TIMEOUT_S):
        by_case.setdefault(result.case, []).append(result)
    return by_case


def test_corpus_is_large_and_sourced():
    assert len(CASES) >= 1000
    assert all(case.source.startswith(("cpython/", "dynamo/")) for case in CASES)
    for source in ("dynamo/test_functions", "dynamo/test_misc", "dynamo/test_modules", "dynamo/test_ctx_manager", "dynamo/test_repros"):
        assert not any(case.source == source for case in CASES), f"{source} is kept apart as an independent check"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_no_wrong_result(case, results):
    wrong = [f"{r.column}: {r.reason}" for r in results[case.name] if r.outcome == "wrong"]
    if case.name in KNOWN_WRONG:
        if wrong:
            pytest.xfail(KNOWN_WRONG[case.name])
        warnings.warn(f"{case.name} no longer gives a wrong result: remove it from KNOWN_WRONG", stacklevel=1)
    assert not wrong, f"{case.source} {case.name} gives a wrong result under compiler.compile:\n" + "\n".join(wrong) + f"\n\n{case.text}"
