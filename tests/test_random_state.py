"""The global random state read and restored inside a compiled function, through every
backend, against eager over several calls: `torch.get_rng_state()` recorded in a graph
returned the state at compile time on every call (aot_autograd traced it into a constant),
so restoring it replayed the first call's numbers. Reading and setting the state now run
between graphs; a generator passed in is read where it is.
"""

from __future__ import annotations

import pytest
import torch

import compiler


def draw_twice_from_one_state(x):
    state = torch.get_rng_state()
    first = torch.randn(3)
    torch.set_rng_state(state)
    return x + first - torch.randn(3), first


def draw_twice_from_one_generator_state(x, generator):
    state = generator.get_state()
    first = torch.rand(3, generator=generator)
    generator.set_state(state)
    return x + first - torch.rand(3, generator=generator), first


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_a_saved_random_state_restores_this_calls_numbers(backend):
    compiled = compiler.compile(draw_twice_from_one_state, backend=backend)
    for seed in range(3):
        torch.manual_seed(seed)
        expected = draw_twice_from_one_state(torch.zeros(3))
        torch.manual_seed(seed)
        actual = compiled(torch.zeros(3))
        torch.testing.assert_close(actual, expected)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_a_generators_saved_state_restores_this_calls_numbers(backend):
    compiled = compiler.compile(draw_twice_from_one_generator_state, backend=backend)
    for seed in range(3):
        expected = draw_twice_from_one_generator_state(torch.zeros(3), torch.Generator().manual_seed(seed))
        actual = compiled(torch.zeros(3), torch.Generator().manual_seed(seed))
        torch.testing.assert_close(actual, expected)
