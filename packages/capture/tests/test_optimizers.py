"""`optimizer.step()` of torch.optim (foreach implementations, and Adam's for-loop one)
captured into one graph and compared with an identical eager copy: parameters and optimizer
state after several steps, state tensors updated in place as eager updates them. What
optimizer code needs of capture is tested alongside: gradients of inputs (`p.grad`) read and
written, the optimizer's `state` (a dict passed in keyed by tensors), `typing.cast(list[Tensor],
x)`, a tensor `value=` of `addcdiv_`."""

import copy
import typing

import pytest
import torch

from helpers import cache_of, captures, compile_eager, run_and_compare

OPTIMIZERS = {
    "AdamW": lambda params: torch.optim.AdamW(params, lr=1e-2, weight_decay=0.1, foreach=True),
    "Adam": lambda params: torch.optim.Adam(params, lr=1e-2, foreach=True),
    "SGD-momentum": lambda params: torch.optim.SGD(params, lr=1e-2, momentum=0.9, foreach=True),
    # The default on CPU: a loop over the parameters.
    "Adam-for-loop": lambda params: torch.optim.Adam(params, lr=1e-2, foreach=False),
}


def model_and_optimizer(name):
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    return model, OPTIMIZERS[name](model.parameters())


def give_gradients(*models):
    """The same fresh random gradient on the matching parameters of each model."""
    for params in zip(*(m.parameters() for m in models)):
        grad = torch.randn_like(params[0])
        for p in params:
            p.grad = grad.clone()


def assert_same_training_state(model, optimizer, expected_model, expected_optimizer):
    for p, expected in zip(model.parameters(), expected_model.parameters()):
        torch.testing.assert_close(p, expected)
        state, expected_state = optimizer.state[p], expected_optimizer.state[expected]
        assert state.keys() == expected_state.keys()
        for key, value in state.items():
            # Same values, and the same kind of tensor (Adam's `step` is a CPU float scalar).
            torch.testing.assert_close(value, expected_state[key], msg=lambda m: f"state[{key!r}]: {m}")
            assert (value.dtype, value.device, value.shape) == (
                expected_state[key].dtype,
                expected_state[key].device,
                expected_state[key].shape,
            )


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_step_is_one_graph_and_matches_eager(name):
    model, optimizer = model_and_optimizer(name)
    expected_model, expected_optimizer = copy.deepcopy((model, optimizer))
    step = compile_eager(optimizer.step, fullgraph=True)
    for _ in range(3):
        give_gradients(model, expected_model)
        step()
        expected_optimizer.step()
    assert_same_training_state(model, optimizer, expected_model, expected_optimizer)
    # The first step creates the state (empty until then); the others update it.
    assert captures(step) == 2
    compilation = cache_of(step).compilation
    assert not compilation.breaks and len(compilation.graphs) == 2


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_step_updates_the_state_tensors_in_place(name):
    model, optimizer = model_and_optimizer(name)
    give_gradients(model)
    optimizer.step()
    step = compile_eager(optimizer.step, fullgraph=True)
    state_tensors = {id(t): t for s in optimizer.state.values() for t in s.values()}
    parameters = list(model.parameters())
    before = {id(t): t.clone() for t in state_tensors.values()}
    give_gradients(model)
    step()
    # The same tensor objects, with new values; the parameters too.
    after = {id(t): t for s in optimizer.state.values() for t in s.values()}
    assert after.keys() == state_tensors.keys()
    assert any(not torch.equal(after[i], before[i]) for i in before)
    assert list(model.parameters()) == parameters
    assert captures(step) == 1


def test_a_parameter_without_gradient_is_skipped_and_guarded():
    model, optimizer = model_and_optimizer("Adam")
    expected_model, expected_optimizer = copy.deepcopy((model, optimizer))
    step = compile_eager(optimizer.step, fullgraph=True)
    for with_bias_grad in (True, False, False):
        give_gradients(model, expected_model)
        if not with_bias_grad:
            model[2].bias.grad = expected_model[2].bias.grad = None
        step()
        expected_optimizer.step()
    assert_same_training_state(model, optimizer, expected_model, expected_optimizer)


def test_zero_grad_runs_natively_and_the_optimizer_part_is_one_graph():
    model, optimizer = model_and_optimizer("AdamW")
    expected_model, expected_optimizer = copy.deepcopy((model, optimizer))

    def train_step(model, optimizer, x):
        optimizer.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        return loss

    compiled = compile_eager(train_step)
    for _ in range(3):
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, optimizer, x), train_step(expected_model, expected_optimizer, x))
    assert_same_training_state(model, optimizer, expected_model, expected_optimizer)
    compilation = cache_of(compiled).compilation
    # zero_grad (torch marks it not to be compiled) and backward() break the graph, as under
    # torch.compile; the step after backward() is one graph.
    reasons = [str(b) for b in compilation.breaks]
    assert len(reasons) == 2, reasons
    assert "zero_grad" in reasons[0] and "backward" in reasons[1]


# --- what optimizer code needs ------------------------------------------------------------


def read_gradients(params):
    return [p.grad * 2 for p in params if p.grad is not None]


def test_gradients_of_inputs_are_graph_inputs():
    def make_params():
        params = [torch.randn(3, requires_grad=True) for _ in range(3)]
        for p in params[:2]:
            p.grad = torch.randn(3)
        return params

    def compare(params):
        # `read_gradients` writes nothing: both run on the same tensors.
        actual, expected = compiled(params), read_gradients(params)
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            torch.testing.assert_close(a, e)

    compiled = compile_eager(read_gradients, fullgraph=True)
    compare(make_params())
    compare(make_params())
    assert captures(compiled) == 1
    # A gradient that became None (or appeared) is guarded.
    params = make_params()
    params[0].grad = None
    compare(params)
    assert captures(compiled) == 2


def test_writing_gradients_is_replayed_onto_the_tensors():
    def fn(params):
        params[0].grad.mul_(0.5)
        params[1].grad = None
        params[2].grad = params[2] * 3
        return params[2].grad + 1

    compiled = compile_eager(fn, fullgraph=True)
    params = [torch.randn(3) for _ in range(3)]
    for p in params:
        p.grad = torch.randn(3)
    expected = [p.clone() for p in params]
    for p, e in zip(params, expected):
        e.grad = p.grad.clone()
    torch.testing.assert_close(compiled(params), fn(expected))
    assert params[1].grad is None
    for p, e in zip(params, expected):
        torch.testing.assert_close(p.grad, e.grad)


def test_subscripted_builtin_classes_are_constants():
    def fn(xs):
        ys = typing.cast(list[torch.Tensor], xs)
        return [y + 1 for y in ys], dict[str, int] == dict[str, int]

    compiled = compile_eager(fn, fullgraph=True)
    run_and_compare(compiled, fn, ([torch.randn(2), torch.randn(3)],))


@pytest.mark.parametrize("method", ["addcdiv_", "addcdiv", "addcmul_", "addcmul"])
def test_a_tensor_value_of_addcdiv_stays_in_the_graph(method):
    # Eager reads the 0-dim tensor as a number (`.item()`, which a graph cannot do).
    def fn(x, a, b, scale):
        return getattr(x, method)(a, b, value=-scale * 2)

    compiled = compile_eager(fn, fullgraph=True)
    run_and_compare(compiled, fn, (torch.randn(4), torch.randn(4), torch.rand(4) + 1, torch.tensor(0.3)))


def test_step_wrapped_by_an_lr_scheduler_matches_eager():
    # The scheduler replaces `optimizer.step` by a wrapper that reaches the optimizer through
    # a weak reference and binds `step` by hand (`func.__get__(opt, cls)`).
    model, optimizer = model_and_optimizer("AdamW")
    expected_model, expected_optimizer = copy.deepcopy((model, optimizer))
    schedulers = [torch.optim.lr_scheduler.StepLR(o, 1, gamma=0.5) for o in (optimizer, expected_optimizer)]
    step = compile_eager(optimizer.step, fullgraph=True)
    for _ in range(3):
        give_gradients(model, expected_model)
        step()
        expected_optimizer.step()
        for scheduler in schedulers:
            scheduler.step()
    assert_same_training_state(model, optimizer, expected_model, expected_optimizer)
    assert optimizer._opt_called
    # A float learning rate is guarded by value: each new rate is a new capture.
    assert captures(step) == 3
