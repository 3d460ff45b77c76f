"""The kernels of a foreach optimizer step over many layers (issue 18: a 24-layer MLP's AdamW
step), compiled alone by inductor, with C++ kernels and with Triton's in its interpreter:

    - parameters and state match eager over three steps, and on a cache hit (a second model
      whose step compiles to the same graph) with new values;
    - every parameter's update is one pass: the wrapper allocates no buffer of a weight's shape
      (the scheduler's window of open groups used to emit the decay of the first weights alone);
    - the updates of same-shaped weights share one kernel source, with Triton one member
      function of combo kernels (each reads its bias correction at another position of one
      buffer: an argument, not text);
    - with Triton, the updates run as a few combo launches, with `combo_kernels` or without
      (kernels that store into inputs alone join their independent neighbours either way;
      without, the one-pass test checks it on the same compile);
    - with Triton, the biases' updates, one loop since each is small, run side by side: one
      combo launch, each bias over programs of its own.

Weights of 16x16 stand for large ones: the scheduler's bound on unrelated work sharing a loop
(scheduler.MAX_UNRELATED_ELEMENTS) is lowered below their size, so each gets its own loop as a
2048x2048 weight does.
"""

from __future__ import annotations

import copy
import json
import os
import re

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is first imported

import compiler  # noqa: E402
from inductor import metrics, scheduler  # noqa: E402
from inductor.codegen.triton import combo_planning  # noqa: E402

# 24 layers: three groups open per weight overran the scheduler's former window of 64
LAYERS, FEW_LAYERS, WIDTH = 24, 6, 16
OPTIMIZERS = {
    "AdamW": lambda params: torch.optim.AdamW(params, lr=1e-2, weight_decay=0.1, foreach=True),
    "Adam": lambda params: torch.optim.Adam(params, lr=1e-2, foreach=True),
    "SGD-momentum": lambda params: torch.optim.SGD(params, lr=1e-2, momentum=0.9, foreach=True),
}


def _interpreter_on() -> bool:
    from triton import knobs

    return bool(knobs.runtime.interpret)


@pytest.fixture(params=["cpp", "triton"])
def cpu_backend(request, monkeypatch, tmp_path):
    if request.param == "triton" and not _interpreter_on():
        pytest.skip("Triton's interpreter is off (set TRITON_INTERPRET=1 before triton is imported)")
    monkeypatch.setattr(scheduler, "MAX_UNRELATED_ELEMENTS", WIDTH * WIDTH // 2)
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))  # graphs of this scheduling only
    return request.param


def _model_and_optimizer(name, layers):
    model = torch.nn.Sequential(*[torch.nn.Linear(WIDTH, WIDTH) for _ in range(layers)])
    return model, OPTIMIZERS[name](model.parameters())


def _train_three_steps(name, options, layers=LAYERS):
    """Three compiled steps of a fresh model against eager's."""
    model, optimizer = _model_and_optimizer(name, layers)
    expected_model, expected_optimizer = copy.deepcopy((model, optimizer))
    step = compiler.compile(optimizer.step, backend="inductor", fullgraph=True, options=options)
    for _ in range(3):
        for p, q in zip(model.parameters(), expected_model.parameters()):
            p.grad = torch.randn_like(p)
            q.grad = p.grad.clone()
        step()
        expected_optimizer.step()
    for p, expected in zip(model.parameters(), expected_model.parameters()):
        torch.testing.assert_close(p, expected)
        for key, value in optimizer.state[p].items():
            torch.testing.assert_close(value, expected_optimizer.state[expected][key], msg=lambda m: f"{key}: {m}")


def _steady_state_graph():
    """(wrapper source, kernel records) of the step graph that updates existing state (the
    last compiled: the first step's graph also creates the state)."""
    folders = sorted((p for p in (_cache() / "graphs").iterdir()), key=lambda p: (p / "wrapper.py").stat().st_mtime)
    folder = folders[-1]
    return (folder / "wrapper.py").read_text(), json.loads((folder / "kernels.json").read_text())


def _cache():
    import pathlib

    return pathlib.Path(os.environ["PTC_INDUCTOR_CACHE_DIR"])


def _launches(source: str) -> list[str]:
    return re.findall(r"^    (kernel\d+)\(", source[source.index("def call(args)"):], re.MULTILINE)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_each_parameter_updates_in_one_pass(name, cpu_backend):
    # The others: the same kernels, fewer of them. The 24 layers that overran the scheduler's
    # window (shared by both backends) run once: on Triton's interpreter where it is on (which
    # also checks its launches), else on C++; C++'s own one-library-per-update shows at 6.
    long_on = "triton" if _interpreter_on() else "cpp"
    layers = LAYERS if name == "AdamW" and cpu_backend == long_on else FEW_LAYERS
    _train_three_steps(name, {"cpu_backend": cpu_backend}, layers)
    source, kernels = _steady_state_graph()
    body = source[source.index("def call(args)"):]
    assert f"empty_strided(({WIDTH}, {WIDTH})" not in body, "a weight-sized buffer between two kernels"
    # one source for every weight's update, beside the biases' kernel and Adam's step count
    # and bias corrections (Adam(W) reads each weight's at another position of one buffer)
    launches = _launches(source)
    if cpu_backend == "cpp":
        assert len(launches) >= layers
        assert len({kernels[k]["source"] for k in launches}) <= 4, launches
    else:
        assert len(_member_functions(launches, kernels)) <= 3
        if name == "AdamW":  # without combo_kernels, kernels that only store into inputs still join
            _assert_few_launches(launches)


def _member_functions(launches: list[str], kernels: dict) -> set[str]:
    return {m for k in launches for m in re.findall(r"^def (member_\w+)\(", kernels[k]["source"], re.MULTILINE)}


def test_a_cache_hit_updates_new_values_as_eager(cpu_backend):
    _train_three_steps("AdamW", {"cpu_backend": cpu_backend}, FEW_LAYERS)
    hits = metrics.counters.graph_cache_hits
    _train_three_steps("AdamW", {"cpu_backend": cpu_backend}, FEW_LAYERS)  # new values, same graphs
    assert metrics.counters.graph_cache_hits > hits


def test_the_updates_run_in_a_few_launches_with_combo_kernels(cpu_backend):
    # (without combo_kernels: test_each_parameter_updates_in_one_pass[AdamW])
    layers = LAYERS if cpu_backend == "triton" else FEW_LAYERS
    _train_three_steps("AdamW", {"cpu_backend": cpu_backend, "combo_kernels": True}, layers)
    source, kernels = _steady_state_graph()
    launches = _launches(source)
    if cpu_backend == "cpp":  # C++ kernels are never combined
        assert len(launches) >= layers
        return
    _assert_few_launches(launches)
    assert len(_member_functions(launches, kernels)) <= 3


def _assert_few_launches(launches: list[str]) -> None:
    # the step count, the bias corrections and combos of at most MAX_COMBO_MEMBERS updates
    # (each weight's and the biases' kernel; the bound on arguments ends the first early)
    assert len(launches) <= 2 + 3, launches


def test_the_biases_updates_run_side_by_side(cpu_backend, monkeypatch):
    # Small unrelated work shares a loop (the scheduler saves launches), so one program would
    # run every bias's update in turn. Split at biases this small (the bound stands at 1024
    # elements, a GPU block); the step counts, one element each, stay one loop.
    monkeypatch.setattr(combo_planning, "MIN_SPLIT_ELEMENTS", WIDTH)
    _train_three_steps("AdamW", {"cpu_backend": cpu_backend}, FEW_LAYERS)
    source, kernels = _steady_state_graph()
    combos = [k for k in _launches(source) if "A combo kernel" in kernels[k]["source"]]
    if cpu_backend == "cpp":
        assert not combos
        return
    # (the weights' updates join in combos of their own: each stores into inputs alone)
    [biases] = [k for k in combos if set(_member_sizes(source, kernels[k]["source"], k)) == {WIDTH}]
    assert len(_member_sizes(source, kernels[biases]["source"], biases)) == FEW_LAYERS
    # one member function: every bias's update is the same code
    assert len(set(re.findall(r"^def (member_\w+)\(", kernels[biases]["source"], re.MULTILINE))) == 1


def _member_sizes(wrapper: str, combo: str, name: str) -> list[int]:
    """The element counts a combo's launch passes, one per member (its last arguments)."""
    members = int(re.search(r"A combo kernel: (\d+)", combo).group(1))
    arguments = re.search(rf"^    {name}\((.*)\)$", wrapper, re.MULTILINE).group(1).split(", ")
    return [int(a) for a in arguments[-members:]]
