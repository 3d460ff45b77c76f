"""How many graphs the call sequences of dynamo's test_recompiles and test_subgraphs compile:
no more than torch.compile's (the counts its tests assert), so a change of bool, size, module
mode or closure value does not recompile on every call."""

from __future__ import annotations

import capture
import torch


def counted(fn, **options):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    return capture.optimize(fn, backend, **options), graphs


def test_sizes_two_to_six_compile_twice():
    compiled, graphs = counted(lambda x, y: x * y)
    for n in (2, 3, 4, 4, 5, 5, 6):
        compiled(torch.randn(n), torch.randn(n))
    assert len(graphs) == 2


def test_bool_flipping_then_sizes_compile_three_times():
    compiled, graphs = counted(lambda flag, y: y * 2 if flag else y * y)
    for flag, n in ((True, 2), (False, 2), (True, 3), (True, 4), (True, 5)):
        compiled(flag, torch.randn(n))
    assert len(graphs) == 3


def test_module_train_eval_flips_compile_twice():
    model = torch.nn.Sequential(torch.nn.Linear(10, 1), torch.nn.Dropout(0.5))
    compiled, graphs = counted(model, fullgraph=True)
    for _ in range(20):
        model.eval()
        compiled(torch.randn(10))
        model.train()
        compiled(torch.randn(10))
    assert len(graphs) == 2


def test_closures_over_changing_ints_compile_twice():
    def make(i):
        def g(y):
            return y + i

        return g

    compiled, graphs = counted(lambda x, g: g(x))
    for i in range(10):
        compiled(torch.randn(5), make(i))
    assert len(graphs) == 2


def test_branches_on_three_flags_compile_seven_graphs_not_two_to_the_n():
    def fn(x, c1, c2, c3):
        x = x + 1
        if c1:
            x = x + 2
        x = x + 3
        if c2:
            x = x + 4
        x = x + 5
        if c3:
            x = x + 6
        return x + 7

    compiled, graphs = counted(fn)
    x, true, false = torch.randn(10), torch.tensor([1.0]), torch.tensor([0.0])
    for a in (true, false):
        for b in (true, false):
            for c in (true, false):
                torch.testing.assert_close(compiled(x, a, b, c), fn(x, a, b, c))
    assert len(graphs) == 7
