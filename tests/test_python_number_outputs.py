"""Python floats a compiled function returns or stores (a learning rate its scheduler
computed) are eager's to the last bit, through aot_autograd and inductor.

Numbers that change between calls become symbolic inputs, and a float rebuilt from its sympy
expression rounds otherwise: `(0.1 + b) * 3.0` as `3.0*b + 0.3` gave 0.30633000000000005 where
Python gives 0.30633, and a linear warmup schedule's learning rate 0.0007500000000000001 for
0.00075. Such outputs are computed by the program's own operators (aot_autograd's
number_outputs.py).
"""

from __future__ import annotations

import pytest
import torch

import compiler


def arithmetic(x, n, base):
    return x * 1, base * (float(10 - n) / 8.0), (0.1 + base) * 3.0, base * 0.1 + n * 0.2, max(base, 0.002) ** 2


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_returned_floats_are_eagers_to_the_last_bit(backend):
    compiled = compiler.compile(arithmetic, backend=backend)
    x = torch.randn(3)
    for n in range(2, 9):  # from the second call on, n and base are symbolic
        base = 1e-3 * (1 + 0.37 * n)
        expected, actual = arithmetic(x, n, base), compiled(x, n, base)
        torch.testing.assert_close(actual[0], expected[0])
        assert actual[1:] == expected[1:]


def _linear_warmup(optimizer, warmup=2, total=10):
    def factor(step):
        if step < warmup:
            return float(step) / float(max(1, warmup))
        return max(0.0, float(total - step) / float(max(1, total - warmup)))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def _step(model, optimizer, scheduler, x):
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    return loss.detach()


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_scheduled_learning_rate_is_eagers_to_the_last_bit(backend):
    runs = []
    for step in (compiler.compile(_step, backend=backend), _step):
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 2)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
        scheduler = _linear_warmup(optimizer)
        rates = []
        for i in range(6):
            torch.manual_seed(i)
            step(model, optimizer, scheduler, torch.randn(3, 4))
            rates.append(optimizer.param_groups[0]["lr"])
        runs.append((rates, [p.detach().clone() for p in model.parameters()]))
    assert runs[0][0] == runs[1][0]
    torch.testing.assert_close(runs[0][1], runs[1][1])
