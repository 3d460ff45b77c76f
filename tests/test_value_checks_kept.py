"""Ops that check their values and raise, compiled, raise as eager does.

linalg.cholesky, inv, solve... are their `_ex` op (which returns the factor and an `info`
tensor) followed by `_linalg_check_errors(info)`, which raises on a matrix they cannot factor.
That check has no result anyone reads: dead-code removal dropped it, and the compiled function
returned a garbage factor (or inf/nan) where eager raises torch.linalg.LinAlgError. one_hot at
a symbolic size checks its classes with `_assert_async`, dropped the same way (and inductor
had no lowering for either).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import compiler

CASES = {
    # program, a good input of size n, a bad one
    "cholesky": (lambda x: torch.linalg.cholesky(x) * 2,
                 lambda n: torch.eye(n) * 2 + 0.1, lambda n: -torch.eye(n) + torch.randn(n, n) * 0.01),
    "inv": (lambda x: torch.linalg.inv(x) + 1, lambda n: torch.eye(n) + 0.1, lambda n: torch.zeros(n, n)),
    "solve": (lambda x: torch.linalg.solve(x, torch.ones(x.shape[0])), lambda n: torch.eye(n) * 3,
              lambda n: torch.zeros(n, n)),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("case", CASES)
def test_linalg_op_on_a_matrix_it_cannot_factor_raises_as_eager(case, backend, requires_grad):
    fn, good, bad = CASES[case]
    compiled = compiler.compile(fn, backend=backend)
    for n in (4, 4, 6):  # first call, cache hit with new values, new size
        x = bad(n).requires_grad_(requires_grad)
        with pytest.raises(torch.linalg.LinAlgError) as eager:
            fn(x)
        with pytest.raises(torch.linalg.LinAlgError) as ours:
            compiled(x)
        assert str(ours.value) == str(eager.value)
        x = good(n).requires_grad_(requires_grad)
        torch.testing.assert_close(compiled(x), fn(x))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_one_hot_at_a_symbolic_size_checks_its_classes(backend):
    def fn(labels):
        return F.one_hot(labels, 4) * 2

    compiled = compiler.compile(fn, backend=backend)
    compiled(torch.tensor([0, 3]))
    compiled(torch.tensor([1, 2, 3]))  # the size is symbolic from here
    for labels in (torch.tensor([0, 1, 2, 3, 4]), torch.tensor([-1, 0, 1, 2])):
        with pytest.raises(RuntimeError, match="Class values must be"):
            fn(labels)
        with pytest.raises(RuntimeError, match="Class values must be"):
            compiled(labels)
    good = torch.tensor([3, 0, 1, 1, 2, 0])
    torch.testing.assert_close(compiled(good), fn(good))
