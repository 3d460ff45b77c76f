"""Differential fuzzing of programs whose sizes come from data, through every backend (eager,
aot_eager, inductor with C++ and with Triton kernels): numbers read with .item() / int(t) / tolist(), bounded by
torch._check (single-symbol bounds and compound ones such as k + w <= x.shape[0]), used as
offsets, lengths and indices (slicing with and without steps, narrow, select, negative indices,
index by arange, split, view / expand, zeros / arange / repeat / cat of those lengths), beside
sizes made by nonzero, boolean masks, masked_select and unique; pointwise ops and reductions on
the results, and outputs whose size is data-dependent.

Each program runs compiled and in eager on a first call, a cache hit with new numbers, new sizes
(dynamic=True and automatic dynamic), then calls whose numbers break a check: compiled must
raise where eager raises, and keep working after.

The class of bug this guards: a compiled program that decides something by a guess of a
data-dependent number instead of what the checks prove (inductor clamped x[k:k+4] by the
placeholder hint of k and returned an empty window), or that computes with a number before
checking it (a kernel read x at k = 10**9 before torch._check(k + 4 <= n) ran: a segfault).

CI runs a fixed budget; `FUZZ_DATA_DEPENDENT_EXAMPLES=200` runs more (a failure prints the
program).
"""

from __future__ import annotations

import os
import re

import pytest
import torch

# Without a GPU, Triton's interpreter runs the `inductor-triton` backend's kernels; it must be
# on before triton is first imported.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import compiler  # noqa: E402
from fake_tensor.errors import GuardOnDataDependentError

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("FUZZ_DATA_DEPENDENT_EXAMPLES", "4"))
# inductor with C++ kernels, and with Triton kernels (on CPU tensors: Triton's interpreter).
BACKENDS = ["eager", "aot_eager", "inductor", "inductor-triton"]

# How the program reads its two numbers k (an offset) and w (a length) from `kw`.
READS = {
    "item": ["k = kw[0].item()", "w = kw[1].item()"],
    "int": ["k = int(kw[0])", "w = int(kw[1])"],
    "tolist": ["k, w = kw.tolist()"],
}
# What every program checks: together they make each use below valid (0 <= k, 1 <= w,
# k + w <= n), so eager raises exactly where a check does. Written in a few equivalent forms.
CHECKS = [
    ["torch._check(k >= 0)", "torch._check(w >= 1)", "torch._check(k + w <= x.shape[0])"],
    ["torch._check(w > 0)", "torch._check(k >= 0)", "torch._check(x.shape[0] - w >= k)"],
    ["torch._check(k > -1)", "torch._check(w >= 1)", "torch._check(w <= x.shape[0] - k)"],
]
# Uses of k and w (valid under the checks), and of sizes from masks (`m`, any length).
USES = [
    "x[k : k + w]",
    "x.narrow(0, k, w)",
    "x[k]",
    "x.select(0, k + w - 1)",
    "x[k - x.shape[0]]",
    "x[w - 1 - k]",
    "x[-w:]",
    "x[-k - 1]",
    "x[-(k + w) :]",
    "x[: -k]",
    "x[k:-1]",
    "x[k - x.shape[0] : k + w - x.shape[0]]",
    "x[-w : x.shape[0] - k]",
    "x[k : k + w : 2]",
    "x[k:][:w]",
    "x[k::3]",
    "x[: k + 1]",
    "x[torch.arange(k, k + w)]",
    "torch.arange(w) * x[k]",
    "torch.zeros(w) + x[:w]",
    "x[k : k + w].repeat(2)",
    "torch.cat([x[:k], x[k + w :]])",
    "torch.split(x, [k, x.shape[0] - k])[1]",
    "x[k : k + w].view(w, 1).expand(w, 3)",
    "x.view(1, -1).expand(w, -1)[:, k]",
    "x.unsqueeze(1)[k : k + w, 0]",
    "x.unsqueeze(0).expand(3, -1)[:, k : k + w]",
    "x[k : k + w].unsqueeze(0).expand(2, w).reshape(-1)",
    "x[k : k + w].flip(0)",
    "x[k : k + w].softmax(0)",
    "x[k : k + w].max()",
    "x[k : k + w] @ x[:w]",
    "torch.stack([x[k : k + w], x[-w:]])",
    "torch.full((w, 2), 1.0) * x[k]",
    "x.new_zeros(k + 1)",
    "x.roll(k)",
    "torch.nn.functional.pad(x, (k, 0))",
    "x[k : k + w].repeat_interleave(2)",
    "torch.topk(x, w).values",
    "x.clone().index_fill(0, torch.arange(k, k + w), 0.0)",
    "y = x.clone(); y[k : k + w] = 0.0; y",
    "y = x.clone(); y[k] = 5.0; y",
    "y = x.clone(); y[k - x.shape[0]] += 1.0; y",
    "y = x.clone(); y[k : k + w].mul_(2); y",
    "y = torch.zeros(w + 2); y[1 : w + 1] = x[k : k + w]; y",
    "m[kw[:1]]",
    "torch.gather(m, 0, kw[:1])",
    "m[:w]",
    "m[k:]",
    "m[-w:]",
    "torch.cat([m, x[k : k + w]])",
    "torch.cat([x[:w], m * 2])",
    "torch.nn.functional.pad(m, (1, 2))",
    "x[m.shape[0] // 2 :]",
    "torch.ones(m.shape[0]) * k",
]
# unique and masked_select of a tensor that requires grad have no gradient at symbolic sizes
# (eager: none for unique; ours: refused for masked_select): their inputs are detached. `x > 2.5`
# selects nothing most of the time.
MASKS = [
    "m = x[x > 0]",
    "m = x[x > 2.5]",
    "m = torch.masked_select(x.detach(), x.detach() > 0.5)",
    "m = x[torch.nonzero(x < 0).squeeze(1)]",
    "m = torch.unique((x.detach() * 2).round())",
]
AFTER = ["{v}", "{v} * 2 + 1", "{v}.sum()", "{v}.cumsum(0)", "{v}.relu().sum(0) + w", "{v}.exp()"]


@st.composite
def programs(draw):
    lines = [*READS[draw(st.sampled_from(sorted(READS)))], *draw(st.sampled_from(CHECKS))]
    uses = draw(st.lists(st.sampled_from(USES), min_size=1, max_size=3, unique=True))
    if any(re.search(r"\bm\b", use) for use in uses):
        lines.insert(0, draw(st.sampled_from(MASKS)))
    outputs = []
    for number, use in enumerate(uses):
        *statements, value = use.split("; ")
        lines += [s.replace("y", f"y{number}") for s in statements]
        value = value.replace("y", f"y{number}") if statements else value
        outputs.append(draw(st.sampled_from(AFTER)).format(v=f"({value})"))
    lines.append(f"return {', '.join(outputs)},")
    return "def program(x, kw):\n" + "".join(f"    {line}\n" for line in lines)


def _function(source: str):
    scope: dict = {"torch": torch}
    exec(compile(source, "<fuzzed program>", "exec"), scope)  # noqa: S102  (a program we generated)
    return scope["program"]


def _outcome(fn, x, kw):
    """The outputs and x's gradient through them, or the kind of error eager-style code raises."""
    try:
        outputs = fn(x, kw)
        differentiable = [o.sum() for o in outputs if o.requires_grad]
        if differentiable:
            torch.stack(differentiable).sum().backward()
        return (outputs, x.grad), None
    except (RuntimeError, IndexError) as error:
        return None, (type(error), str(error).splitlines()[0][:200])


def _calls(seed: int):
    """(n, k, w) of each call: valid ones at a first size, again with new numbers, at new sizes;
    then numbers that break a check (past the end, negative, zero length, far out), then a
    valid call again."""
    g = torch.Generator().manual_seed(seed)

    def valid(n):
        k = int(torch.randint(0, n, (), generator=g))
        return n, k, int(torch.randint(1, n - k + 1, (), generator=g))

    return [
        valid(10),
        valid(10),
        valid(13),
        valid(7),
        (10, 8, 3),
        (10, -1, 2),
        (10, 2, 0),
        (10, 10**9, 1),
        (10, 3, -(10**9)),
        valid(10),
    ]


def _check(source: str, backend: str, dynamic, grad: bool, seed: int):
    fn = _function(source)
    options = {"cpu_backend": "triton"} if backend == "inductor-triton" else None
    compiled = compiler.compile(_function(source), backend=backend.removesuffix("-triton"), dynamic=dynamic,
                                fullgraph=False, options=options)
    g = torch.Generator().manual_seed(seed)
    for n, k, w in _calls(seed):
        x, kw = torch.randn(n, generator=g), torch.tensor([k, w])
        ours, theirs = x.clone().requires_grad_(grad), x.clone().requires_grad_(grad)
        expected, refusal = _outcome(fn, theirs, kw)
        where = f"backend={backend} dynamic={dynamic} grad={grad} n={n} k={k} w={w}\n{source}"
        try:
            actual, error = _outcome(compiled, ours, kw)
        except Exception as unexpected:
            raise AssertionError(f"compiled raised {unexpected!r} where eager gave {refusal}\n{where}") from unexpected
        if grad and error and issubclass(error[0], GuardOnDataDependentError):
            # A backward formula that branches on a data-dependent size (cumsum's `numel <= 1`)
            # refuses the graph when it is compiled; torch.compile fails the same way.
            return
        assert (error and error[0]) == (refusal and refusal[0]), f"compiled raised {error}, eager {refusal}\n{where}"
        if refusal is None:
            torch.testing.assert_close(actual, expected, equal_nan=True, msg=lambda m: f"{m}\n{where}")


@pytest.fixture(autouse=True)
def captured_data_dependent_ops():
    compiler.reset()
    with compiler.config.patch(capture_dynamic_output_shape_ops=True, capture_scalar_outputs=True):
        yield
    compiler.reset()


# No shrinking: programs are a few lines already, and shrinking one that compiles three times
# per attempt took over five minutes.
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(source=programs(), dynamic=st.sampled_from([True, None]), grad=st.booleans(), seed=st.integers(0, 2**16))
@pytest.mark.parametrize("backend", BACKENDS)
def test_data_dependent_sizes_match_eager(backend, source, dynamic, grad, seed):
    _check(source, backend, dynamic, grad, seed)
