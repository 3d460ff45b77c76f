"""Fakes against eager on torch's op database: each op's CPU sample inputs run for real and
on fakes (twice, a fresh FakeTensorMode each time: the repeat is served by the meta output
cache), comparing every output's shape, dtype, device, strides (where the op is
stride-exact, see op_db_known_failures) and aliasing.

The full run (all samples; about two minutes on one core) prints the rate and every failure:

    python packages/fake_tensor/tests/conformance/op_db_check.py --samples all --dtype float32
"""

from __future__ import annotations

import argparse
import collections
import itertools
import warnings
from dataclasses import dataclass

import torch
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils._pytree import tree_leaves, tree_map

import fake_tensor
from op_db_known_failures import DATA_DEPENDENT, MISMATCHED, NOT_STRIDE_EXACT, UNSUPPORTED


@dataclass(frozen=True)
class Outcome:
    op: str
    kind: str  # "match", "data-dependent", "mismatch" or "error"
    detail: str = ""

    @property
    def correct(self) -> bool:
        return self.kind == "match" or (self.kind == "data-dependent" and self.op in DATA_DEPENDENT)

    @property
    def expected(self) -> bool:
        known = {"data-dependent": DATA_DEPENDENT, "mismatch": MISMATCHED, "error": UNSUPPORTED}
        return self.kind == "match" or self.op in known[self.kind]


def op_name(opinfo) -> str:
    return opinfo.name + (f".{opinfo.variant_test_name}" if opinfo.variant_test_name else "")


def run_op_db(dtype: torch.dtype, samples_per_op: int | None) -> list[Outcome]:
    outcomes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for opinfo in op_db:
            if dtype in opinfo.supported_dtypes("cpu"):
                outcomes.extend(check_op(opinfo, dtype, samples_per_op))
    return outcomes


def check_op(opinfo, dtype: torch.dtype, samples_per_op: int | None) -> list[Outcome]:
    name = op_name(opinfo)
    outcomes = []
    # sample_inputs_func, not sample_inputs: the latter records its caller with
    # inspect.stack(), which costs ~0.2 s per op under pytest.
    samples = opinfo.sample_inputs_func(opinfo, "cpu", dtype, False)
    for sample in itertools.islice(samples, samples_per_op):
        real_inputs = (sample.input, sample.args, sample.kwargs)
        try:
            real_out = opinfo(sample.input, *sample.args, **sample.kwargs)
        except Exception:
            continue  # eager rejects this sample: nothing to compare against
        outcomes.append(_check_sample(opinfo, name, real_inputs, real_out))
    return outcomes


def _check_sample(opinfo, name: str, real_inputs, real_out) -> Outcome:
    # Twice, each time in a fresh mode: the second run meets argument metadata seen before,
    # so its ops are served by fake_tensor's meta output cache, which must agree too.
    for run in ("", " (repeated call)"):
        mode = fake_tensor.FakeTensorMode()
        try:
            fake_inputs = tree_map(lambda x: mode.from_real(x) if isinstance(x, torch.Tensor) else x, real_inputs)
            with mode:
                fake_out = opinfo(fake_inputs[0], *fake_inputs[1], **fake_inputs[2])
        except fake_tensor.DataDependentError as error:
            return Outcome(name, "data-dependent", str(error.op) + run)
        except Exception as error:
            return Outcome(name, "error", f"{type(error).__name__}{run}: {str(error).splitlines()[0][:200]}")
        why = metadata_difference(
            real_out, fake_out, _tensors(real_inputs), _tensors(fake_inputs), name not in NOT_STRIDE_EXACT
        )
        if why:
            return Outcome(name, "mismatch", why + run)
    return Outcome(name, "match")


def metadata_difference(real_out, fake_out, real_inputs, fake_inputs, check_strides: bool) -> str | None:
    """None when the fake outputs describe the real ones; otherwise what differs."""
    reals, fakes = tree_leaves(real_out), tree_leaves(fake_out)
    if len(reals) != len(fakes):
        return f"{len(reals)} outputs for real, {len(fakes)} for fake"
    for i, (real, fake) in enumerate(zip(reals, fakes)):
        if not isinstance(real, torch.Tensor):
            if isinstance(fake, torch.Tensor) or not _same_value(real, fake):
                return f"output {i}: real {real!r}, fake {fake!r}"
            continue
        if not fake_tensor.is_fake(fake):
            return f"output {i}: {type(fake).__name__} is not a FakeTensor"
        for what in ("shape", "dtype", "device"):
            if getattr(real, what) != getattr(fake, what):
                return f"output {i} {what}: real {getattr(real, what)}, fake {getattr(fake, what)}"
        real_aliases = [torch._C._is_alias_of(real, x) for x in real_inputs]
        fake_aliases = [torch._C._is_alias_of(fake, x) for x in fake_inputs]
        if real_aliases != fake_aliases:
            return f"output {i} aliases inputs {real_aliases} for real, {fake_aliases} for fake"
        if check_strides and _layout(real) != _layout(fake):
            return f"output {i} of shape {tuple(real.shape)}: layout {_layout(real)} real, {_layout(fake)} fake"
    return None


def _layout(t: torch.Tensor) -> tuple:
    # Strides of size-0/1 dims never affect which element is where, and an empty tensor has
    # no layout at all; eager kernels set those strides arbitrarily. (The same "significant
    # strides" rule as torch._prims_common.check_significant_strides.)
    if t.numel() == 0:
        return ()
    return (tuple(st for size, st in zip(t.shape, t.stride()) if size > 1), t.storage_offset())


def _same_value(real, fake) -> bool:
    if type(real) is not type(fake):
        return False
    return real == fake or (real != real and fake != fake)  # NaN equals NaN here


def _tensors(tree) -> list[torch.Tensor]:
    return [x for x in tree_leaves(tree) if isinstance(x, torch.Tensor)]


@dataclass
class Summary:
    outcomes: list[Outcome]

    @property
    def rate(self) -> float:
        return sum(o.correct for o in self.outcomes) / max(1, len(self.outcomes))

    def report(self, dtype: torch.dtype, verbose: bool = False) -> str:
        kinds = collections.Counter(o.kind for o in self.outcomes)
        expected_dd = sum(o.kind == "data-dependent" and o.correct for o in self.outcomes)
        static = len(self.outcomes) - expected_dd
        lines = [
            f"op_db {dtype} on fakes: {self.rate:.2%} of {len(self.outcomes)} (op, sample) pairs correct "
            f"({kinds['match']} metadata matches + {expected_dd} DataDependentError by design); "
            f"{kinds['match'] / max(1, static):.2%} of pairs with a static answer match; "
            f"{kinds['mismatch']} mismatches, {kinds['error']} errors"
        ]
        failures = collections.defaultdict(list)
        for o in self.outcomes:
            if not o.correct and (verbose or not o.expected):
                failures[(o.op, o.kind)].append(o.detail)
        for (op, kind), details in sorted(failures.items()):
            known = "known" if Outcome(op, kind).expected else "UNEXPECTED"
            lines.append(f"  {known} {kind}: {op} x{len(details)}: {details[0]}")
        return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--samples", default="all", help="samples per op: a number, or 'all'")
    parser.add_argument("--verbose", action="store_true", help="list known failures too")
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)
    samples = None if args.samples == "all" else int(args.samples)
    print(Summary(run_op_db(dtype, samples)).report(dtype, args.verbose))


if __name__ == "__main__":
    main()
