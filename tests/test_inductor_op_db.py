"""Inductor's C++ kernels against eager on torch's op database (as PyTorch's
test/inductor/test_torchinductor_opinfo.py does for torch.compile).

For each OpInfo and dtype (float32, and float64, bfloat16, float16, int64, bool where the op
supports them), a fresh `compiler.compile(fn, backend="inductor", fullgraph=False)` of
`fn = lambda *a, **k: op(*a, **k)` runs the op's first CPU samples; each sample is called twice,
the second time with fresh values of the same shapes and layouts (floats scaled by a positive
factor, which keeps domains, signs and sortedness; a cache hit, no recompile). Outputs (values,
dtypes, shapes) and inputs written in place are compared with eager, per dtype tolerances as
`torch.testing.assert_close` (exact for integers and bools; bfloat16 and float16 also accepted
when close to the op computed in float32, as test_torchinductor_opinfo's `reference_in_float`;
for a factory, made with `dtype=torch.float32`: eager's CPU linspace rounds its step to the
half dtype and builds values from it in vector-width chunks, up to 3 float16 ulps off).

Each (op, dtype) ends as one outcome:
  pass     every sample agrees with eager;
  refused  agrees, but capture broke the graph (the op ran eagerly), or the compiler declined
           the program by one of its Unsupported errors (REFUSALS);
  error    the compiled function raised where eager did not;
  wrong    a silent mismatch with eager. Never acceptable: fix it.
By rule, not by name, an op is skipped when its OpInfo says its output is not comparable
(`has_nondeterministic_output`, `skip_correctness_check_compile_vs_eager`), and a sample is
skipped when eager raises on it or calls a random ATen op (tag `nondeterministic_seeded`:
dropout, normal, bernoulli, ...).

CI runs a deterministic subset in about 80 s on two cores: the ops of IMPORTANT_OPS at
CI_DTYPES plus every STRIDE-th op of op_db at float32, SAMPLES_CI samples each.
INDUCTOR_OP_DB_FULL=1 runs every op at every dtype of DTYPES, SAMPLES_FULL samples each (about
3,250 (op, dtype) pairs, some 30 minutes in one process; float16 alone, 546 pairs, took 8
minutes on 2026-12-06: 487 pass, 31 refused, 28 skipped, none wrong). Known errors are listed, with
reasons, in inductor_op_db_known_failures.py. The sweep as a script, in chunks of op_db
indices (one process at a time), writing one JSON line per (op, dtype):

    cd tests && python test_inductor_op_db.py --start 0 --stop 100 --out sweep.jsonl
    cd tests && python test_inductor_op_db.py --ops sum,hardtanh --dtypes int64

`--dynamic` compiles each op with `dynamic=True`: the samples after the first (other sizes)
run through the symbolic kernels. CI runs IMPORTANT_OPS at float32 so. The whole of op_db so on
C++ kernels on 2026-12-07 (`--dynamic --samples 6`, chunks of 100 ops, two cores shared with
other work): float32 607 pass / 39 refused / 31 skipped (4 minutes), float64 515 / 36 / 29,
bfloat16 486 / 36 / 29, float16 401 / 33 / 28, int64 430 / 24 / 14, bool 247 / 14 / 11 (about
45 minutes for all six); no error, none wrong, and float32 the same at `--samples 20` (12
minutes). Rerun at bfloat16 and float16 after the symbolic-float kernels (f92f3be, 9e72152):
bfloat16 486 / 36 / 29, float16 480 / 36 / 28 and 2 wrong by a few float16 ulps (poisson_nll_loss
with log_input=False: eager rounds `target * log(input + eps)` to float16 before the
subtraction, also wrong without --dynamic and before those commits; kl_div once, on some
random values). Results in benchmarks/results/op_db_inductor_dynamic_<dtype>.jsonl; the gradients'
in test_inductor_op_db_grad.py.

`--cpu-backend triton` runs inductor's Triton kernels instead of its C++ ones (options
`cpu_backend="triton"`): on CPU tensors, under Triton's interpreter (TRITON_INTERPRET=1, set
here before triton is first imported). CI runs TRITON_OPS at CI_DTYPES so (about 120 pairs,
20 s). The whole of op_db so on 2026-12-07 (float32, bfloat16, float16, int64, bool: 2,591
pairs) found 20 errors and 4 wrong results from five causes, all fixed; the results are in
benchmarks/results/op_db_inductor_triton_<dtype>.jsonl.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import itertools
import json
import os
import signal
import sys
import tempfile
import time
import warnings

import pytest
import torch

# Without a GPU, Triton's interpreter runs the Triton kernels of CPU tensors; it must be on
# before triton is first imported (it binds its library functions then).
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from torch.testing._internal.common_methods_invocations import op_db
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map

import capture
import compiler
from aot_autograd.errors import UnsupportedProgramError
from inductor_op_db_known_failures import KNOWN_ERRORS

DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.bool)
HALF_DTYPES = (torch.bfloat16, torch.float16)
SAMPLES_CI = 2
SAMPLES_FULL = 3
SAMPLES_DYNAMIC = 6  # op_db's first samples differ in rank; later ones repeat a rank at new sizes
STRIDE = 13
FULL = os.environ.get("INDUCTOR_OP_DB_FULL") == "1"

# What a compiler that declines a program raises, naming what it cannot do: a refusal.
REFUSALS = (capture.Unsupported, UnsupportedProgramError)

# Checked in CI at every dtype of CI_DTYPES they support, whatever STRIDE picks.
CI_DTYPES = (torch.float32, torch.bfloat16, torch.int64, torch.bool)
IMPORTANT_OPS = (
    "add", "mul", "div.no_rounding_mode", "sub", "pow", "exp", "log", "sin", "tanh", "sigmoid",
    "nn.functional.relu", "nn.functional.gelu", "where", "clamp", "sum", "mean", "amax", "var",
    "softmax", "log_softmax", "nn.functional.layer_norm", "matmul", "cat", "index_select", "gather",
    "scatter_add", "cumsum", "argmax", "remainder", "floor_divide",
)

# Checked in CI through inductor's Triton kernels too, at CI_DTYPES: IMPORTANT_OPS, and ops whose
# samples found bugs of the Triton path alone (a 0-d operand of a logical op, empty tensors,
# bfloat16 constants, the sign of a bool, a convolution's bias on CPU tensors).
TRITON_OPS = (*IMPORTANT_OPS, "logical_and", "eye", "roll", "masked_fill", "sign", "nn.functional.conv1d")
# Triton kernels of CPU tensors run only in Triton's interpreter (set above without a GPU).
INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"

# Tolerances by the output's dtype (`torch.testing.assert_close` defaults, loosened for float32
# where fused kernels reassociate sums).
TOLERANCES = {
    torch.float64: {"rtol": 1e-7, "atol": 1e-7},
    torch.complex128: {"rtol": 1e-7, "atol": 1e-7},
    torch.float32: {"rtol": 1e-5, "atol": 1e-5},
    torch.complex64: {"rtol": 1e-5, "atol": 1e-5},
    torch.bfloat16: {"rtol": 1.6e-2, "atol": 1e-5},
    torch.float16: {"rtol": 1e-3, "atol": 1e-5},
}

# (op, dtype) -> tolerances replacing TOLERANCES for it, with the reason (as
# test_torchinductor_opinfo's inductor_override_kwargs).
TOLERANCE_OVERRIDES = {
    # Running stats near zero come from cancelling O(1) bf16 terms ((1 - m) * running + m * mean):
    # eager (which rounds them three times in its composite) and ours are each ~1e-3 off float64.
    ("nn.functional.instance_norm", torch.bfloat16): {"rtol": 1.6e-2, "atol": 5e-3},
    # Convolutions run channels-last on CPU (layout_optimization.py, as torch.compile's), where
    # oneDNN sums a transposed convolution in another order: ours equals eager on a channels-last
    # input bit for bit, and eager's two layouts differ by up to one bf16 ulp of the largest
    # output (1.0 at 252, op_db's sample 0), in small outputs made of cancelling terms too.
    ("nn.functional.conv_transpose2d", torch.bfloat16): {"rtol": 1.6e-2, "atol": 1.0},
}


@dataclasses.dataclass(frozen=True)
class Outcome:
    op: str
    dtype: str
    kind: str  # "pass", "refused", "error", "wrong" or "skipped"
    detail: str = ""
    seconds: float = 0.0

    def expected(self, known_errors: dict[str, str]) -> bool:
        if self.kind == "error":
            return self.op in known_errors
        return self.kind != "wrong"


def op_name(opinfo) -> str:
    return opinfo.name + (f".{opinfo.variant_test_name}" if opinfo.variant_test_name else "")


def cases(full: bool) -> list[tuple[object, torch.dtype]]:
    """(OpInfo, dtype) pairs to run: all of them, or CI's deterministic subset."""
    picked = []
    for index, opinfo in enumerate(op_db):
        supported = opinfo.supported_dtypes("cpu")
        important = op_name(opinfo) in IMPORTANT_OPS
        for dtype in DTYPES:
            if dtype not in supported:
                continue
            if full or (important and dtype in CI_DTYPES) or (index % STRIDE == 0 and dtype == torch.float32):
                picked.append((opinfo, dtype))
    return picked


class _RandomOps(TorchDispatchMode):
    """Records whether any ATen op called is tagged nondeterministic_seeded."""

    def __init__(self):
        super().__init__()
        self.seen = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if torch.Tag.nondeterministic_seeded in getattr(func, "tags", ()):
            self.seen = True
        return func(*args, **(kwargs or {}))


def _copy(x, scale: float = 1.0):
    """A copy of `x` with its own storage but the same sizes, strides and storage offset (so
    it passes the same guards); floating values multiplied by `scale`."""
    if not isinstance(x, torch.Tensor):
        return x
    if x.layout != torch.strided or x.is_quantized:
        return x.clone()
    # The whole storage, so that strides and the offset carry over, overlapping ones included.
    elements = x.untyped_storage().nbytes() // x.element_size()
    base = x.detach().as_strided((elements,), (1,), 0).clone()
    if scale != 1.0 and (x.is_floating_point() or x.is_complex()):
        base = base * scale
    return base.as_strided(x.shape, x.stride(), x.storage_offset())


def _copies(sample, scale: float = 1.0):
    return tree_map(lambda x: _copy(x, scale), (sample.input, list(sample.args), dict(sample.kwargs)))


def _upcast(tree):
    """Half-precision tensors as float32, and a factory's half-precision `dtype=` as float32."""
    def upcast(x):
        if isinstance(x, torch.Tensor) and x.dtype in HALF_DTYPES:
            return x.float()
        return torch.float32 if isinstance(x, torch.dtype) and x in HALF_DTYPES else x

    return tree_map(upcast, tree)


def difference(actual, expected, reference_in_float=None, override=None) -> str | None:
    """None when `actual` matches `expected` (eager's result); otherwise how they differ.
    `reference_in_float`: eager computed in float32 from upcast half-precision inputs, also accepted;
    `override`: tolerances for every output instead of TOLERANCES."""
    actual_leaves, expected_leaves = tree_leaves(actual), tree_leaves(expected)
    if len(actual_leaves) != len(expected_leaves):
        return f"{len(actual_leaves)} outputs, eager has {len(expected_leaves)}"
    float_leaves = tree_leaves(reference_in_float) if reference_in_float is not None else None
    for i, (a, e) in enumerate(zip(actual_leaves, expected_leaves)):
        if not isinstance(e, torch.Tensor):
            same = a == e or (isinstance(e, float) and e != e and a != a)
            if isinstance(a, torch.Tensor) or not same:
                return f"output {i}: {a!r}, eager {e!r}"
            continue
        if not isinstance(a, torch.Tensor):
            return f"output {i}: {type(a).__name__}, eager a tensor"
        if a.dtype != e.dtype or a.shape != e.shape:
            return f"output {i}: {a.dtype} {tuple(a.shape)}, eager {e.dtype} {tuple(e.shape)}"
        tolerance = override or TOLERANCES.get(e.dtype, {"rtol": 0, "atol": 0})
        try:
            torch.testing.assert_close(a, e, equal_nan=True, **tolerance)
        except AssertionError as error:
            if float_leaves is not None and isinstance(float_leaves[i], torch.Tensor):
                try:
                    torch.testing.assert_close(a, float_leaves[i].to(e.dtype), equal_nan=True, **tolerance)
                    continue
                except AssertionError:
                    pass
            return f"output {i} ({e.dtype} {tuple(e.shape)}): " + " ".join(str(error).split("\n")[1:4])
    return None


class _Wrong(Exception):
    """A silent mismatch with eager."""


def _run_sample(opinfo, compiled, sample, scale: float) -> str | None:
    """Runs one sample (values scaled by `scale`) eagerly and compiled. None when eager refuses
    it or it is random; raises _Wrong on a mismatch; exceptions of the compiled call propagate."""
    eager_in = _copies(sample, scale)
    random_ops = _RandomOps()
    try:
        with random_ops:
            expected = opinfo.op(eager_in[0], *eager_in[1], **eager_in[2])
    except Exception:
        return "eager raises"
    if random_ops.seen:
        return "random"
    reference_in_float = inputs_in_float = None
    if in_half_precision(eager_in):
        # Eager rounds to bf16/fp16 wherever its composite stores a value (instance_norm's
        # running stats go through three bf16 tensors); ours may round less. Both are accepted.
        with contextlib.suppress(Exception):
            upcast = _upcast(_copies(sample, scale))
            reference_in_float = opinfo.op(upcast[0], *upcast[1], **upcast[2])
            inputs_in_float = upcast
    ours_in = _copies(sample, scale)
    actual = compiled(ours_in[0], *ours_in[1], **ours_in[2])
    override = TOLERANCE_OVERRIDES.get((op_name(opinfo), opinfo_dtype(eager_in)))
    why = difference(actual, expected, reference_in_float, override)
    if why is None:
        why = difference(ours_in, eager_in, inputs_in_float, override)
        why = why and "inputs written in place differ: " + why
    if why:
        raise _Wrong(why)
    return None


def opinfo_dtype(inputs) -> torch.dtype | None:
    """The dtype of the sample's first tensor (the dtype op_db made it for)."""
    return next((x.dtype for x in tree_leaves(inputs) if isinstance(x, torch.Tensor)), None)


def in_half_precision(inputs) -> bool:
    """Whether a tensor, or a factory's `dtype=` (linspace, arange), is bfloat16 or float16."""
    return any(x.dtype in HALF_DTYPES if isinstance(x, torch.Tensor) else isinstance(x, torch.dtype) and x in HALF_DTYPES
               for x in tree_leaves(inputs))


def check(opinfo, dtype: torch.dtype, samples: int, dynamic: bool = False, cpu_backend: str = "cpp") -> Outcome:
    """The outcome of one op at one dtype over its first `samples` samples."""
    return check_samples(opinfo, dtype, samples, requires_grad=False, dynamic=dynamic, cpu_backend=cpu_backend,
                         run=lambda compiled, sample, scale, index: _run_sample(opinfo, compiled, sample, scale))


def check_samples(opinfo, dtype: torch.dtype, samples: int, *, requires_grad: bool, run, dynamic: bool = False,
                  cpu_backend: str = "cpp") -> Outcome:
    """The outcome of one op at one dtype: `run(compiled, sample, scale, index)` on each of its
    first `samples` samples (made with `requires_grad`), at scale 1 and then with fresh values
    (a cache hit). `run` returns why a sample is skipped, or None; it raises _Wrong on a
    mismatch, and the compiled call's own exceptions. `dynamic`: compiled with symbolic sizes
    from the first call, so that samples of other sizes run the same kernels. `cpu_backend`:
    inductor's kernels for CPU tensors, "cpp" or "triton" (Triton's interpreter)."""
    name, dtype_name = op_name(opinfo), str(dtype).removeprefix("torch.")
    start = time.perf_counter()

    def outcome(kind, detail=""):
        return Outcome(name, dtype_name, kind, detail, round(time.perf_counter() - start, 2))

    if opinfo.has_nondeterministic_output or opinfo.skip_correctness_check_compile_vs_eager:
        return outcome("skipped", "its OpInfo marks the output as not comparable")
    compiler.reset()
    op = opinfo.op

    def fn(*args, **kwargs):
        return op(*args, **kwargs)

    compiled = compiler.compile(fn, backend="inductor", fullgraph=False, dynamic=True if dynamic else None,
                                options={"cpu_backend": cpu_backend})
    skipped = collections.Counter()
    ran = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # sample_inputs_func, not sample_inputs: the latter records its caller with
        # inspect.stack(), which costs ~0.2 s per op under pytest.
        made = opinfo.sample_inputs_func(opinfo, "cpu", dtype, requires_grad)
        for index, sample in enumerate(itertools.islice(made, samples)):
            for scale in (1.0, 0.75):
                call = "" if scale == 1.0 else " (second call, fresh values)"
                try:
                    why_skipped = run(compiled, sample, scale, index)
                except _Wrong as wrong:
                    return outcome("wrong", f"sample {index}{call}: {wrong}")
                except REFUSALS as refusal:
                    return outcome("refused", f"sample {index}{call}: {type(refusal).__name__}: {str(refusal)[:300]}")
                except Exception as error:
                    message = str(error).strip().splitlines()
                    return outcome("error", f"sample {index}{call}: {type(error).__name__}: {message[0][:300] if message else ''}")
                if why_skipped:
                    skipped[why_skipped] += 1
                    break
                ran += 1
    if not ran:
        return outcome("skipped", ", ".join(f"{why} ({n})" for why, n in skipped.items()) or "no samples")
    breaks = compiled._capture_cache.compilation.breaks
    if breaks:
        return outcome("refused", str(breaks[0]).splitlines()[0][:300])
    return outcome("pass")


@pytest.fixture(scope="module", autouse=True)
def _private_cache_dir(tmp_path_factory):
    previous = os.environ.get("PTC_INDUCTOR_CACHE_DIR")
    os.environ["PTC_INDUCTOR_CACHE_DIR"] = str(tmp_path_factory.mktemp("inductor_op_db_cache"))
    yield
    compiler.reset()
    if previous is None:
        del os.environ["PTC_INDUCTOR_CACHE_DIR"]
    else:
        os.environ["PTC_INDUCTOR_CACHE_DIR"] = previous


CASES = cases(FULL)


@pytest.mark.slow
@pytest.mark.parametrize("opinfo,dtype", CASES, ids=[f"{op_name(o)}-{str(d).removeprefix('torch.')}" for o, d in CASES])
def test_compiled_op_matches_eager(opinfo, dtype):
    assert_outcome(check(opinfo, dtype, SAMPLES_FULL if FULL else SAMPLES_CI), KNOWN_ERRORS)


def assert_outcome(result: Outcome, known_errors: dict[str, str]) -> None:
    """A test's verdict on one (op, dtype): wrong fails, a known error is expected to fail."""
    if result.kind == "wrong":
        pytest.fail(f"WRONG result: {result.detail}")
    if result.kind == "error":
        if result.op in known_errors:
            pytest.xfail(f"known: {known_errors[result.op]} ({result.detail})")
        pytest.fail(f"compiled call raised where eager did not: {result.detail}")
    if result.kind == "skipped":
        pytest.skip(result.detail)


DYNAMIC_CASES = [(o, torch.float32) for o in op_db if op_name(o) in IMPORTANT_OPS and torch.float32 in o.supported_dtypes("cpu")]


@pytest.mark.slow
@pytest.mark.parametrize("opinfo,dtype", DYNAMIC_CASES, ids=[op_name(o) for o, _ in DYNAMIC_CASES])
def test_compiled_op_matches_eager_at_symbolic_sizes(opinfo, dtype):
    # Samples after the first run at other sizes through the same symbolic kernels.
    assert_outcome(check(opinfo, dtype, SAMPLES_DYNAMIC, dynamic=True), KNOWN_ERRORS)


TRITON_CASES = [(o, d) for o in op_db if op_name(o) in TRITON_OPS for d in CI_DTYPES if d in o.supported_dtypes("cpu")]


@pytest.mark.slow
@pytest.mark.skipif(not INTERPRETED, reason="Triton kernels of CPU tensors need TRITON_INTERPRET=1")
@pytest.mark.parametrize("opinfo,dtype", TRITON_CASES, ids=[f"{op_name(o)}-{str(d).removeprefix('torch.')}" for o, d in TRITON_CASES])
def test_triton_compiled_op_matches_eager(opinfo, dtype):
    assert_outcome(check(opinfo, dtype, SAMPLES_CI, cpu_backend="triton"), KNOWN_ERRORS)


def test_known_failures_name_ops_of_op_db():
    names = {op_name(o) for o in op_db}
    assert not set(KNOWN_ERRORS) - names


def main() -> None:
    sweep(check, lambda opinfo: opinfo.supported_dtypes("cpu"), KNOWN_ERRORS, "inductor_op_db_")


def sweep(check_case, dtypes_of, known_errors: dict[str, str], cache_prefix: str) -> None:
    """The script mode of an op_db test: `check_case(opinfo, dtype, samples)` for every op of a
    range of op_db at each dtype of `dtypes_of(opinfo)` asked for, one JSON line each."""
    parser = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__.splitlines()[0])
    parser.add_argument("--dtypes", default=",".join(str(d).removeprefix("torch.") for d in DTYPES))
    parser.add_argument("--start", type=int, default=0, help="first op_db index")
    parser.add_argument("--stop", type=int, default=len(op_db))
    parser.add_argument("--ops", default="", help="comma-separated op names (default: all in range)")
    parser.add_argument("--samples", type=int, default=SAMPLES_FULL)
    parser.add_argument("--timeout", type=int, default=180, help="seconds per (op, dtype)")
    parser.add_argument("--out", help="append one JSON line per (op, dtype) here")
    parser.add_argument("--dynamic", action="store_true", help="compile with symbolic sizes (dynamic=True)")
    parser.add_argument("--cpu-backend", choices=("cpp", "triton"), default="cpp",
                        help="inductor's kernels for CPU tensors (triton: Triton's interpreter)")
    args = parser.parse_args()
    os.environ.setdefault("PTC_INDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix=cache_prefix))
    dtypes = [getattr(torch, d) for d in args.dtypes.split(",")]
    wanted = set(filter(None, args.ops.split(",")))

    def timed_out(signum, frame):
        raise TimeoutError(f"over {args.timeout} s")

    signal.signal(signal.SIGALRM, timed_out)
    counts = collections.Counter()
    for opinfo in op_db[args.start:args.stop]:
        if wanted and op_name(opinfo) not in wanted:
            continue
        for dtype in dtypes:
            if dtype not in dtypes_of(opinfo):
                continue
            signal.alarm(args.timeout)
            try:
                result = check_case(opinfo, dtype, args.samples, dynamic=args.dynamic, cpu_backend=args.cpu_backend)
            except TimeoutError as error:
                result = Outcome(op_name(opinfo), str(dtype).removeprefix("torch."), "error", f"TimeoutError: {error}")
            finally:
                signal.alarm(0)
            counts[result.kind] += 1
            flag = "" if result.expected(known_errors) else " UNEXPECTED"
            print(f"{result.kind:8} {result.op} {result.dtype} {result.seconds}s{flag} {result.detail}", flush=True)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps(dataclasses.asdict(result)) + "\n")
    print(dict(counts), file=sys.stderr)


if __name__ == "__main__":
    main()
