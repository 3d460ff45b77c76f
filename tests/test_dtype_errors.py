"""A program whose op eager's CPU kernel rejects for its dtype (abs of bools, frac of ints)
raises eager's error compiled too. Inductor used to return a value: its kernels, and the
decompositions before them, compute any dtype (fake_tensor/dtype_support.py)."""

from __future__ import annotations

import pytest
import torch

import compiler

PROGRAMS = {
    "abs_bool": (lambda x: torch.abs(x) + 1, lambda: torch.tensor([True, False, True])),
    "relu_bool": (lambda x: torch.relu(x).sum(), lambda: torch.tensor([True, False, True])),
    "round_bool": (lambda x: x.round() * 2, lambda: torch.tensor([True, False, True])),
    "frac_int": (lambda x: x.frac() + x, lambda: torch.arange(5)),
    "hypot_uint8": (lambda x: torch.hypot(x, x), lambda: torch.arange(5, dtype=torch.uint8)),
    "pow_bool": (lambda x: torch.pow(x, x), lambda: torch.tensor([True, False, True])),
}


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("program", PROGRAMS)
def test_dtype_errors_are_eagers(program, backend):
    fn, make = PROGRAMS[program]
    with pytest.raises((NotImplementedError, RuntimeError)) as eager:
        fn(make())
    compiler.reset()
    with pytest.raises(type(eager.value)):
        compiler.compile(fn, backend=backend)(make())
    # the same ops at a dtype eager accepts: compiled, same values
    x = make().float()
    torch.testing.assert_close(compiler.compile(fn, backend=backend)(x), fn(x))
