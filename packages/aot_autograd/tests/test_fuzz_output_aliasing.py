"""Differential fuzzing of what a graph's outputs are, beyond their values: random programs
return inputs, tensors they made, views and detached aliases of either (repeated, in any
order), after writing into an input in place. Compiled through aot_autograd (symbolic sizes;
with and without core ATen's decompositions) vs eager, with grad mode on and off, at a first call, new values and a new size; beside the
values, each output must be the same object, share storage, be a view, require grad and
carry the gradients that eager's does (also after a write with grad mode on into the first
output), and a write into an output after the call must show through the same tensors.

The class of bug this guards: the epilogue rebuilding aliased outputs from the wrong base
(`return t.detach(), t` handed back the detached tensor twice, and `t` lost its gradient), or
handing back a view the autograd.Function made, which refuses writes eager allows.

CI runs a fixed budget; `AOT_ALIAS_FUZZ_EXAMPLES=2000` runs more (a failure prints the program).
"""

from __future__ import annotations

import os

import pytest
import torch

from aot_autograd import aot_eager, aot_eager_decomp_partition
from aot_testing import dynamic_functions_graph

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("AOT_ALIAS_FUZZ_EXAMPLES", "60"))

# Tensors made from earlier ones ({a}, {b}): sizes stay (n, 4).
MADE = [
    "{a} * 2 + {b}", "torch.sin({a})", "{a}.clone()", "{a} + 1",
    # A factory's tensor is traced as a detached one; an in-place op then gives it history.
    "torch.zeros_like({a}).add_({b})", "torch.empty({a}.shape).fill_(1.0).mul_({b})",
]  # fmt: skip
# Aliases of a tensor ({a}): views of every kind and detached objects over its storage.
ALIASES = [
    "{a}.detach()", "{a}.view(-1)", "{a}[1:]", "{a}.transpose(0, 1)", "{a}.unsqueeze(0)",
    "{a}[:, :2]", "{a}.expand(2, -1, -1)", "{a}.detach()[1:]", "{a}.view(-1).detach()", "{a}.t()[0]",
]  # fmt: skip
# Writes into `y` (an input that requires no grad), reading a tensor ({a}).
WRITES = ["y.add_({a}.detach())", "y.mul_(2)", "y[0].add_(1)", "y.select(1, 0).copy_({a}.detach()[:, 1])"]


@st.composite
def programs(draw) -> str:
    bases = ["x", "y"]  # inputs and tensors made from them: what aliases and writes read
    names = list(bases)
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["made", "alias", "alias", "write"]))
        a, b = draw(st.sampled_from(bases)), draw(st.sampled_from(bases))
        if kind == "write":
            lines.append(draw(st.sampled_from(WRITES)).format(a=a))
            continue
        name = f"t{len(names)}"
        template = draw(st.sampled_from(MADE if kind == "made" else ALIASES))
        lines.append(f"{name} = {template.format(a=a, b=b)}")
        names.append(name)
        if kind == "made":
            bases.append(name)
    returned = draw(st.lists(st.sampled_from(names), min_size=1, max_size=5))
    body = "\n".join(f"    {line}" for line in [*lines, f"return ({', '.join(returned)},)"])
    return f"def f(x, y):\n{body}\n"


def _inputs(size: int):
    return torch.randn(size, 4, requires_grad=True), torch.randn(size, 4)


def _structure(outputs, inputs) -> tuple:
    """Which outputs are one object (with each other and with the inputs), which share storage,
    which are views (of what the caller can see: the view of a tensor that died in the graph
    may be one in either), which require grad, which have autograd history."""
    everything = [*outputs, *inputs]
    storage = [t.untyped_storage().data_ptr() for t in everything]
    shared = [[s == other for other in storage] for s in storage[: len(outputs)]]
    seen_elsewhere = [any(row[j] and everything[j] is not t for j in range(len(everything))) for t, row in zip(outputs, shared)]
    return (
        [[a is b for b in everything] for a in outputs],
        shared,
        [t._is_view() if elsewhere else None for t, elsewhere in zip(outputs, seen_elsewhere)],
        [t.requires_grad for t in outputs],
        [t.grad_fn is None for t in outputs],
    )


def _compile(fn, inputs, backend):
    return backend(dynamic_functions_graph(fn, inputs), list(inputs))


def _agree(source: str, grad: bool, backend) -> None:
    namespace: dict = {"torch": torch}
    exec(compile(source, "<fuzz program>", "exec"), namespace)
    fn = namespace["f"]
    compiled = None
    for size in (4, 4, 6):
        x, y = _inputs(size)
        ours = [x.detach().clone().requires_grad_(), y.clone()]
        with torch.set_grad_enabled(grad):
            compiled = compiled or _compile(fn, ours, backend)
            expected, actual = fn(x, y), compiled(*ours)
        torch.testing.assert_close(actual, expected)
        torch.testing.assert_close(ours, [x, y])
        ours_structure, eager_structure = _structure(actual, ours), _structure(expected, [x, y])
        assert ours_structure == eager_structure, f"aliasing differs: {ours_structure} vs eager's {eager_structure}"
        if grad:  # a write with history into an output: autograd replays it on what it aliases
            try:
                expected[0].mul_(2)
            except RuntimeError:  # eager refuses it (a view of a leaf that requires grad...)
                pass
            else:
                actual[0].mul_(2)
                torch.testing.assert_close(actual, expected)
                torch.testing.assert_close(ours, [x, y])
        # (Under no_grad a view of `x` requires grad but has no history: no gradient to take.)
        carrying = [i for i, e in enumerate(expected) if grad and e.requires_grad]
        if carrying:
            cotangents = [torch.randn_like(expected[i]) for i in carrying]
            torch.testing.assert_close(
                _gradients([actual[i] for i in carrying], ours[0], cotangents),
                _gradients([expected[i] for i in carrying], x, cotangents),
            )
        with torch.no_grad():  # a write into an output shows through what it aliases
            try:
                expected[0].add_(1)
            except RuntimeError:  # an expanded view: eager refuses the write
                continue
            actual[0].add_(1)
            # (Still without grad mode: a view made under no_grad, its base now written, may
            # not be read with grad mode on.)
            torch.testing.assert_close(actual, expected)
            torch.testing.assert_close(ours, [x, y])


def _gradients(outputs, wrt, cotangents):
    """The gradients, or None where autograd refuses them."""
    try:
        return torch.autograd.grad(outputs, wrt, cotangents, allow_unused=True)
    except RuntimeError as error:  # a tensor the backward reads was written in place since
        assert "modified by an inplace operation" in str(error)
        return None


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.booleans(), st.sampled_from(["aot_eager", "aot_eager_decomp_partition"]))
def test_outputs_alias_what_eager_outputs_alias(source, grad, backend):
    # With decompositions too: core ATen's table turns `detach` into `alias`, which carries
    # history (`return x.detach()` required grad under inductor, which decomposes).
    chosen = {"aot_eager": aot_eager, "aot_eager_decomp_partition": aot_eager_decomp_partition}[backend]
    try:
        _agree(source, grad, chosen)
    except Exception as error:
        raise AssertionError(f"{type(error).__name__}: {error}\nprogram ({backend}, grad mode {grad}):\n{source}") from error
