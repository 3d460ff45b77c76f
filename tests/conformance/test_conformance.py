"""The conformance corpus in CI: no case may give a wrong result under compiler.compile.

Every case (tests/conformance/corpus/) runs through ours with the `eager` backend and
fullgraph=False, and a deterministic third of them with fullgraph=True as well, against eager
(see runner.py for what is compared). A wrong value, dtype, mutation or grad, or a missing
exception, fails the case's test. Refusals (Unsupported) and other errors are recorded, not
failed: `python tests/conformance/report.py` lists them grouped by reason, beside torch.compile.

A fixed handful of cases (BACKEND_CASES: arithmetic on symbolic sizes, views, grads and buffer
mutation, where aot_autograd and inductor have given wrong results the eager backend did not)
also runs under `aot_eager` and `inductor`, fullgraph=False.

CONFORMANCE_FULL=1 runs every case with fullgraph False and True on the backends named by
CONFORMANCE_BACKENDS (default "eager,aot_eager,inductor"; comma-separated).

Cases marked `ci=False` (seven eighths of the round-four module families, whose cases train
modules and take about a second each, and all but a twelfth of the round-five and round-six
files, see corpus/round5_support.py) run only with CONFORMANCE_FULL=1; their tests skip here.

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
    # An lru_cache'd function's calls are inlined (as TorchDynamo does): its cache is not filled.
    "r3_deco.lru_cache_on_size_function": "lru_cache statistics do not count inlined calls",
}


# Run under aot_eager and inductor in CI as well (seconds: a few C++ kernels to build).
BACKEND_CASES = {
    "float.float_of_size",  # float(n) came back an int from aot_autograd at a new size
    "int_size.floordiv_size_by_float",  # floor(0.4*s0)
    "int_size.mod_negative_size_by_int",  # -n % 3 printed as C's truncating %
    "int_size.ge_size_by_int",  # a SymBool from a size, in a kernel and returned
    "int_size.pow_int_by_size",  # 3 ** s0 in a C++ kernel (no `**` in C)
    "itertools.pairwise_tensors_diff",  # unbind's last piece kept a [1] dim at a new size
    "builtins_tensor.tuple_of_size_arith",
    "modules_train.batchnorm_running_stats",  # buffer mutation and grads
    "autograd.function_scale_grad",  # a custom autograd.Function's backward
    "repros2_inputs.batchnorm_running_stats_across_calls",  # an uncompiled forward's saved layouts
    "subgraphs2_inputs.extended_args_branches",  # a chain of 512 lazy adds: RecursionError lowering it
    "optim4.radam_step",  # torch.tensor(0.0) state handed out as one graph constant across calls
    "training4.parameter_written_in_place_under_no_grad",  # a no_grad view's metadata run in grad mode
    "module_state4.buffer_dtype_changed",  # an op raising at run time after deferred buffer writes
}
CI_BACKENDS = ("aot_eager", "inductor")
BACKEND_TIMEOUT_S = 60


def in_ci_subset(case) -> bool:
    """The deterministic third of the corpus that CI also runs with fullgraph=True."""
    return zlib.crc32(case.name.encode()) % 3 == 0


def in_this_run(case) -> bool:
    """Cases marked `ci=False` (a sample of a slow family runs instead) run only in full runs."""
    return FULL or case.ci or case.name in BACKEND_CASES


def pairs_to_run():
    pairs = []
    for backend in BACKENDS:
        for case in filter(in_this_run, CASES):
            pairs.append((case, Column("ours", backend, False)))
            if FULL or in_ci_subset(case):
                pairs.append((case, Column("ours", backend, True)))
    return pairs


def backend_pairs_to_run():
    """BACKEND_CASES under the backends CI does not otherwise run."""
    if FULL:
        return []
    return [(case, Column("ours", backend, False)) for backend in CI_BACKENDS if backend not in BACKENDS
            for case in CASES if case.name in BACKEND_CASES]


@pytest.fixture(scope="module")
def results():
    workers = int(os.environ.get("CONFORMANCE_WORKERS", "1"))
    by_case: dict[str, list] = {}
    # Compiling C++ kernels takes longer than a normal case's few-second allowance.
    for pairs, timeout_s in ((pairs_to_run(), TIMEOUT_S), (backend_pairs_to_run(), BACKEND_TIMEOUT_S)):
        for result in run_pairs(pairs, workers=workers, timeout_s=timeout_s):
            by_case.setdefault(result.case, []).append(result)
    return by_case


def test_backend_cases_exist():
    assert BACKEND_CASES <= {case.name for case in CASES}


def test_corpus_is_large_and_sourced():
    assert len(CASES) >= 1000
    assert all(case.source.startswith(("cpython/", "dynamo/")) for case in CASES)
    # test_functions and test_misc served as the independent check once (functions_cases.py and
    # misc_cases.py came from that check, with the bugs it found), and test_modules,
    # test_ctx_manager and test_repros after them (modules_cases.py, ctx_manager_cases.py,
    # repros_cases.py). No upstream file is held apart now.


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_no_wrong_result(case, results):
    if case.name not in results:
        pytest.skip("left out of the default CI run (ci=False); CONFORMANCE_FULL=1 runs it")
    wrong = [f"{r.column}: {r.reason}" for r in results[case.name] if r.outcome == "wrong"]
    if case.name in KNOWN_WRONG:
        if wrong:
            pytest.xfail(KNOWN_WRONG[case.name])
        warnings.warn(f"{case.name} no longer gives a wrong result: remove it from KNOWN_WRONG", stacklevel=1)
    assert not wrong, f"{case.source} {case.name} gives a wrong result under compiler.compile:\n" + "\n".join(wrong) + f"\n\n{case.text}"
