"""torch's op database on fakes whose leading dimension is dynamic.

For each op's CPU float32 sample, every tensor input's dim 0 becomes a symbol (sizes 0 and 1
stay static, equal sizes share a symbol); the op runs on those fakes and for real. A sample
passes when every output's symbolic shape, evaluated at the example sizes, equals the real
shape, the dtypes agree, and the guards the run recorded hold for the real inputs.

The full run prints the rate and every failure grouped by op:

    python packages/fake_tensor/tests/symbolic/dynamic_op_db.py            # all samples
    python packages/fake_tensor/tests/symbolic/dynamic_op_db.py --samples 1 --every 3   # what CI runs
"""

from __future__ import annotations

import argparse
import collections
import itertools
import time
import warnings
from dataclasses import dataclass

import torch
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils._pytree import tree_flatten, tree_leaves, tree_unflatten

import fake_tensor


@dataclass(frozen=True)
class Outcome:
    op: str
    kind: str  # "match", "data-dependent", "mismatch" or "error"
    detail: str = ""

    @property
    def correct(self) -> bool:
        # A DataDependentError is the right answer for ops whose output shape depends on data.
        return self.kind in ("match", "data-dependent")


def op_name(opinfo) -> str:
    return opinfo.name + (f".{opinfo.variant_test_name}" if opinfo.variant_test_name else "")


def run(samples_per_op: int | None, every_nth_op: int = 1, dtype: torch.dtype = torch.float32) -> list[Outcome]:
    outcomes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for opinfo in op_db[::every_nth_op]:
            if dtype in opinfo.supported_dtypes("cpu"):
                outcomes.extend(check_op(opinfo, dtype, samples_per_op))
    return outcomes


def check_op(opinfo, dtype: torch.dtype, samples_per_op: int | None) -> list[Outcome]:
    outcomes = []
    samples = opinfo.sample_inputs("cpu", dtype, requires_grad=False)
    for sample in itertools.islice(samples, samples_per_op):
        inputs = (sample.input, sample.args, sample.kwargs)
        if any(isinstance(x, torch.Tensor) and x.layout != torch.strided for x in tree_leaves(inputs)):
            continue  # fakes stand for strided tensors only
        try:
            real_out = opinfo(sample.input, *sample.args, **sample.kwargs)
        except Exception:
            continue  # eager rejects this sample: nothing to compare against
        outcomes.append(check_sample(opinfo, inputs, real_out))
    return outcomes


def check_sample(opinfo, inputs, real_out) -> Outcome:
    name = op_name(opinfo)
    env = fake_tensor.ShapeEnv()
    mode = fake_tensor.FakeTensorMode(shape_env=env)
    leaves, spec = tree_flatten(inputs)
    by_source = {}
    fakes = []
    try:
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, torch.Tensor):
                source = f"input{i}"
                by_source[source] = leaf
                dims = [0] if leaf.dim() > 0 else None
                leaf = mode.from_real(leaf, dynamic_dims=dims, source=source)
            fakes.append(leaf)
        fake_input, fake_args, fake_kwargs = tree_unflatten(fakes, spec)
        with mode:
            fake_out = opinfo(fake_input, *fake_args, **fake_kwargs)
    except fake_tensor.DataDependentError as error:
        return Outcome(name, "data-dependent", str(error.op))
    except Exception as error:
        return Outcome(name, "error", f"{type(error).__name__}: {str(error).splitlines()[0][:160]}")
    why = difference(env, real_out, fake_out)
    if why is None:
        failed = env.failed_guards(by_source)
        if failed:
            why = f"guards fail on the example inputs: {failed[:3]}"
    return Outcome(name, "mismatch", why) if why else Outcome(name, "match")


def difference(env, real_out, fake_out) -> str | None:
    reals, fakes = tree_leaves(real_out), tree_leaves(fake_out)
    if len(reals) != len(fakes):
        return f"{len(reals)} outputs for real, {len(fakes)} for fake"
    for i, (real, fake) in enumerate(zip(reals, fakes)):
        if not isinstance(real, torch.Tensor):
            fake_value = env.size_hint(fake) if isinstance(fake, (torch.SymInt, torch.SymFloat, torch.SymBool)) else fake
            if isinstance(fake, torch.Tensor) or not (real == fake_value or real != real):
                return f"output {i}: real {real!r}, fake {fake!r}"
            continue
        shape = tuple(env.size_hint(s) for s in fake.shape)
        if shape != tuple(real.shape):
            return f"output {i} shape: real {tuple(real.shape)}, fake {tuple(fake.shape)} = {shape} at the hints"
        if real.dtype != fake.dtype:
            return f"output {i} dtype: real {real.dtype}, fake {fake.dtype}"
    return None


def summarize(outcomes: list[Outcome], seconds: float) -> str:
    correct = sum(o.correct for o in outcomes)
    kinds = collections.Counter(o.kind for o in outcomes)
    lines = [
        f"op_db float32, leading dims dynamic: {correct / max(1, len(outcomes)):.2%} of {len(outcomes)} "
        f"(op, sample) pairs correct ({kinds['match']} matches, {kinds['data-dependent']} "
        f"DataDependentError); {kinds['mismatch']} mismatches, {kinds['error']} errors; {seconds:.0f} s"
    ]
    failures = collections.defaultdict(list)
    for o in outcomes:
        if not o.correct:
            failures[(o.op, o.kind)].append(o.detail)
    for (op, kind), details in sorted(failures.items()):
        lines.append(f"  {op} [{kind}] x{len(details)}: {details[0]}")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=None, help="samples per op (default: all)")
    parser.add_argument("--every", type=int, default=1, help="check every n-th op only (default: all ops)")
    options = parser.parse_args()
    start = time.perf_counter()
    results = run(options.samples, options.every)
    print(summarize(results, time.perf_counter() - start))
