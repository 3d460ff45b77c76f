"""torch.nn modules constructed inside the compiled function: parameter-free ones are built
from their constant arguments and traced; ones that create parameters break the graph with
the reason (their initialisation draws from the global random generator on every call), and
still give eager's result without fullgraph."""

import pytest
import torch
from torch import nn

from helpers import cache_of, check_across_sizes, compile_eager


def activation(x):
    return nn.ReLU()(x) + nn.GELU(approximate="tanh")(x) + nn.Softmax(dim=-1)(x)


def sequential_of_new_modules(x):
    block = nn.Sequential(nn.Flatten(0), nn.Tanh(), nn.Dropout(p=0.0), nn.Identity())
    return block(x), len(block), [type(m).__name__ for m in block]


def module_list_iterated(x):
    layers = nn.ModuleList([nn.ReLU(), nn.Sigmoid(), nn.LeakyReLU(0.2)])
    for layer in layers:
        x = layer(x) - 0.5
    return x, layers[1](x)


def new_module_in_eval_mode(x):
    m = nn.Dropout(0.5).eval()
    return m(x), m.training


@pytest.mark.parametrize(
    "fn", [activation, sequential_of_new_modules, module_list_iterated, new_module_in_eval_mode], ids=lambda f: f.__name__
)
def test_parameter_free_modules_are_traced(fn):
    check_across_sizes(fn, lambda n: (torch.randn(2, n),))


def test_a_returned_new_module_is_a_fresh_copy():
    def fn(x):
        m = nn.Softmax(dim=0)
        return m, m(x)

    compiled = compile_eager(fn, fullgraph=True)
    x = torch.randn(3)
    (first, out), (second, _) = compiled(x), compiled(x)
    assert type(first) is nn.Softmax and first.dim == 0 and first is not second
    torch.testing.assert_close(out, fn(x)[1])


def linear_made_inside(x):
    lin = nn.Linear(x.shape[-1], 2)
    return lin(x).relu() + 1


def test_module_with_parameters_breaks_with_a_reason():
    with pytest.raises(Exception, match="creates parameters"):
        compile_eager(linear_made_inside, fullgraph=True)(torch.randn(3))


def test_module_with_parameters_runs_like_eager_without_fullgraph():
    compiled = compile_eager(linear_made_inside)
    for _ in range(2):
        x = torch.randn(4, 3)
        torch.manual_seed(0)
        expected = linear_made_inside(x)
        torch.manual_seed(0)
        torch.testing.assert_close(compiled(x), expected)
    assert any("creates parameters" in b.reason for b in cache_of(compiled).compilation.breaks)
