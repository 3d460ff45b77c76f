"""A compiled module copied (copy.copy, copy.deepcopy: an EMA of the weights), pickled
(torch.save, a spawned process's argument: multiprocessing pickles it) or unpickled is the original's copy compiled again
with the same settings, as torch.compile's OptimizedModule is: each copy runs its own weights
and matches eager at the first call, on new values and at a new size. Copying or pickling
one raised (TypeError: cannot pickle '_thread.RLock'; a local backend closure).
"""

from __future__ import annotations

import copy
import io
import pickle

import pytest
import torch
from torch import nn

import compiler


def _model() -> nn.Module:
    return nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.Linear(8, 3))


def _compare(compiled: nn.Module, original: nn.Module) -> None:
    for n in (4, 4, 7):
        x = torch.randn(n, 6)
        torch.testing.assert_close(compiled(x), original(x), rtol=1e-5, atol=1e-5)


def _torch_save_round_trip(module):
    buffer = io.BytesIO()
    torch.save(module, buffer)
    return torch.load(io.BytesIO(buffer.getvalue()), weights_only=False)


COPIES = {
    "deepcopy": copy.deepcopy,
    "pickle": lambda m: pickle.loads(pickle.dumps(m)),
    "torch.save": _torch_save_round_trip,
}


@pytest.mark.parametrize("how", sorted(COPIES))
@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_a_copied_compiled_module_is_compiled_again_with_its_own_weights(how, backend):
    original = _model()
    compiled = compiler.compile(original, backend=backend)
    _compare(compiled, original)
    copied = COPIES[how](compiled)
    assert isinstance(copied, type(compiled)) and copied._orig_mod is not original
    with torch.no_grad():  # the copy's weights move on (an EMA step); the original's stay
        for p in copied.parameters():
            p.mul_(0.5)
    _compare(copied, copied._orig_mod)
    _compare(compiled, original)


def test_a_shallow_copy_shares_the_module():
    original = _model()
    compiled = compiler.compile(original, backend="eager")
    shallow = copy.copy(compiled)
    assert shallow._orig_mod is original
    _compare(shallow, original)
