"""`optimizer.step()` of torch.optim (foreach implementations, fused AdamW, and Adam's for-loop one) through
`compiler.compile` with `fullgraph=True`: one graph per capture, compiled by inductor (C++
kernels on CPU) or aot_eager, against an identical eager copy on fresh random parameters and
gradients over three steps: parameters, optimizer state (values, dtypes, devices) and the
in-place updates of the state tensors.
"""

from __future__ import annotations

import copy
import sys

import pytest
import torch

import compiler

OPTIMIZERS = {
    "AdamW": lambda params: torch.optim.AdamW(params, lr=1e-2, weight_decay=0.1, foreach=True),
    "Adam": lambda params: torch.optim.Adam(params, lr=1e-2, foreach=True),
    "SGD-momentum": lambda params: torch.optim.SGD(params, lr=1e-2, momentum=0.9, foreach=True),
    # One fused op writing several lists, one of them empty (max_exp_avg_sqs without amsgrad).
    "AdamW-fused": lambda params: torch.optim.AdamW(params, lr=1e-2, weight_decay=0.1, fused=True),
    # The default on CPU: a loop over the parameters.
    "Adam-for-loop": lambda params: torch.optim.Adam(params, lr=1e-2, foreach=False),
}


def counting(backend_name):
    """The backend `backend_name`, counting the graphs it is handed."""
    inner = compiler.lookup_backend(backend_name)
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return inner(gm, example_inputs)

    return backend, graphs


def model_and_optimizer(name, device="cpu"):
    model = torch.nn.Sequential(torch.nn.Linear(16, 12), torch.nn.GELU(), torch.nn.Linear(12, 4)).to(device)
    return model, OPTIMIZERS[name](model.parameters())


def give_gradients(model, expected_model):
    for p, q in zip(model.parameters(), expected_model.parameters()):
        p.grad = torch.randn_like(p)
        q.grad = p.grad.clone()


def assert_same_training_state(model, optimizer, expected_model, expected_optimizer):
    for p, expected in zip(model.parameters(), expected_model.parameters()):
        torch.testing.assert_close(p, expected)
        state, expected_state = optimizer.state[p], expected_optimizer.state[expected]
        assert state.keys() == expected_state.keys()
        for key, value in state.items():
            torch.testing.assert_close(value, expected_state[key], msg=lambda m: f"state[{key!r}]: {m}")
            assert (value.dtype, value.device) == (expected_state[key].dtype, expected_state[key].device)


DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a GPU: Triton kernels choose block sizes by timing there")])]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("backend_name", ["inductor", "aot_eager"])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_compiled_step_matches_eager(name, backend_name, device):
    # On the GPU, kernels are timed at their first launch: each step, the first one included,
    # must update the parameters once (timing on the real tensors updated them several times).
    model, optimizer = model_and_optimizer(name, device)
    expected_model, expected_optimizer = copy.deepcopy((model, optimizer))
    if device == "cuda" and name == "AdamW-fused":
        # Compiling a fused step on the GPU makes its group capturable (as torch.compile does).
        make_capturable(expected_optimizer)
    backend, graphs = counting(backend_name)
    step = compiler.compile(optimizer.step, backend=backend, fullgraph=True)

    # The first step creates the state: one graph.
    give_gradients(model, expected_model)
    step()
    expected_optimizer.step()
    assert len(graphs) == 1
    assert [g.get("capturable") for g in optimizer.param_groups] == \
        [g.get("capturable") for g in expected_optimizer.param_groups]

    # The next steps update it in place: one more graph, reused.
    state_tensors = [t for s in optimizer.state.values() for t in s.values()]
    for _ in range(2):
        give_gradients(model, expected_model)
        step()
        expected_optimizer.step()
    assert len(graphs) == 2
    assert [t for s in optimizer.state.values() for t in s.values()] == state_tensors
    assert_same_training_state(model, optimizer, expected_model, expected_optimizer)


def make_capturable(optimizer):
    for group in optimizer.param_groups:
        if "capturable" in group:
            group["capturable"] = True


@pytest.mark.parametrize("name", ["AdamW", "Adam", "AdamW-fused", "Adam-for-loop"])
def test_capturable_step_matches_eager(name):
    # The implementations a GPU step takes once capturable (compiling makes a fused step so,
    # as torch.compile makes any GPU step; torch.optim runs a fused step that is not natively,
    # between graphs). Eager refuses capturable=True on the CPU, so the expected values come
    # from its usual step (the same arithmetic, bias corrections in float32 tensors rather
    # than Python floats).
    model, optimizer = model_and_optimizer(name)
    expected_model, expected_optimizer = copy.deepcopy((model, optimizer))
    make_capturable(optimizer)
    backend, graphs = counting("inductor")
    step = compiler.compile(optimizer.step, backend=backend, fullgraph=True)
    for _ in range(3):
        give_gradients(model, expected_model)
        step()
        expected_optimizer.step()
    assert len(graphs) == 2
    assert_same_training_state(model, optimizer, expected_model, expected_optimizer)


def test_training_step_is_a_forward_graph_and_an_optimizer_graph():
    model, optimizer = model_and_optimizer("AdamW")
    expected_model, expected_optimizer = copy.deepcopy((model, optimizer))

    def train_step(model, optimizer, x):
        optimizer.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        return loss

    backend, graphs = counting("inductor")
    compiled = compiler.compile(train_step, backend=backend)
    for _ in range(3):
        x = torch.randn(8, 16)
        torch.testing.assert_close(compiled(model, optimizer, x), train_step(expected_model, expected_optimizer, x))
    assert_same_training_state(model, optimizer, expected_model, expected_optimizer)
    # zero_grad runs natively and backward() breaks the graph, as under torch.compile: the
    # forward and loss are one graph, the optimizer step another (captured again once the
    # first step has created the state).
    assert len(graphs) == 3


def test_step_compiles_after_torch_dynamo_patched_the_optimizers():
    # Importing torch._dynamo (any torch.compile in the process) wraps every optimizer's
    # _init_group in a disabled wrapper; our graph of step() must not break on it (nor
    # depend on whether torch._dynamo was imported).
    import torch._dynamo  # noqa: F401  (the import patches the optimizer classes)

    torch.compile(lambda x: x + 1, backend="eager")(torch.zeros(1))
    assert getattr(torch.optim.AdamW._init_group, "_torchdynamo_disable", False)
    test_compiled_step_matches_eager(next(iter(OPTIMIZERS)), "aot_eager", "cpu")
    # ...and each fused implementation (torch.optim.adam._fused_adam) in another
    assert getattr(sys.modules["torch.optim.adam"]._fused_adam, "_torchdynamo_disable", False)
    test_compiled_step_matches_eager("AdamW-fused", "aot_eager", "cpu")


def test_compiled_adamw_writes_parameters_and_state_in_place(caplog):
    # The step's kernels store every parameter and state tensor through its own memory: the
    # wrapper allocates nothing of a parameter's shape and copies nothing back.
    import logging

    model = torch.nn.Sequential(torch.nn.Linear(20, 24), torch.nn.GELU(), torch.nn.Linear(24, 6))
    optimizer = OPTIMIZERS["AdamW"](model.parameters())
    expected_model, expected_optimizer = copy.deepcopy((model, optimizer))
    step = compiler.compile(optimizer.step, backend="inductor", fullgraph=True)
    with caplog.at_level(logging.INFO, logger="compiler.output_code"):
        for _ in range(3):
            give_gradients(model, expected_model)
            step()
            expected_optimizer.step()
    assert_same_training_state(model, optimizer, expected_model, expected_optimizer)
    wrappers = [r.getMessage() for r in caplog.records if "def call(args)" in r.getMessage()]
    source = wrappers[-1]  # the steady-state step (the first one also creates the state)
    source = source[source.index("def call(args)"):source.index('extern "C"') if 'extern "C"' in source else None]
    assert "copy_" not in source
    for p in model.parameters():
        assert f"empty_strided({tuple(p.shape)}" not in source, source
