"""Several optimizer steps through each backend match eager: losses, gradients, parameters,
and buffers (BatchNorm's running statistics are updated as eager updates them), for an MLP, a
conv net with batch norm and recurrent layers."""

from __future__ import annotations

import pytest
import torch

from aot_testing import BACKENDS, functions_graph, graph_of, train_side_by_side


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(12, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.Tanh(), torch.nn.Linear(32, 3)
        )

    def forward(self, x):
        return (self.layers(x),)


class ConvBatchNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8, 5)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)) + torch.nn.functional.avg_pool2d(y, 2))
        return (self.head(y.mean((2, 3))),)


class Recurrent(torch.nn.Module):
    """CPU `nn.LSTM` runs mkldnn's LSTM layer, whose workspace output (read by its backward)
    exists only when the kernel runs with grad mode on."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(5, 8, num_layers=2, batch_first=True)
        self.gru = torch.nn.GRU(8, 6, bidirectional=True)

    def forward(self, x):
        y, (h, c) = self.lstm(x)
        return (self.gru(y)[0], h, c)


MODELS = {
    "mlp": (MLP, lambda: (torch.randn(6, 12),)),
    "conv_batchnorm": (ConvBatchNorm, lambda: (torch.randn(4, 3, 10, 10),)),
    "recurrent": (Recurrent, lambda: (torch.randn(3, 7, 5),)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("model", MODELS)
def test_training_steps_match_eager(model, backend):
    make_model, make_batch = MODELS[model]
    torch.manual_seed(0)
    train_side_by_side(make_model(), graph_of, make_batch, BACKENDS[backend])


@pytest.mark.parametrize("backend", BACKENDS)
def test_batchnorm_eval_mode_leaves_running_stats(backend):
    torch.manual_seed(0)
    model = ConvBatchNorm().eval()
    train_side_by_side(model, graph_of, MODELS["conv_batchnorm"][1], BACKENDS[backend], steps=2)


def test_frozen_parameters_get_no_gradient():
    torch.manual_seed(0)
    model = MLP()
    model.layers[0].weight.requires_grad_(False)
    train_side_by_side(model, graph_of, MODELS["mlp"][1], BACKENDS["aot_eager"], steps=2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_second_backward_through_a_graph_that_saved_no_tensor_runs_as_in_eager(backend):
    # sum and mean save only sizes: eager's autograd runs their backward twice, accumulating.
    def fn(x):
        return (x.sum() + x.mean(),)

    compiled = BACKENDS[backend](functions_graph(fn), [torch.randn(5, requires_grad=True)])
    for size in (5, 5):
        x = torch.randn(size, requires_grad=True)
        x_ref = x.detach().clone().requires_grad_()
        (y,) = compiled(x)
        (y_ref,) = fn(x_ref)
        for _ in range(2):
            y.backward(retain_graph=False)
            y_ref.backward(retain_graph=False)
        torch.testing.assert_close(x.grad, x_ref.grad)
