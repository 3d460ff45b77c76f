"""Recompile reasons: why each cache entry's guard function rejected a call."""

from __future__ import annotations

import torch

from guards import ConstantMatch, GuardSet, LocalSource, TensorMatch, failure_reasons, recompile_reason


def fn(x):
    return x


def entry_for(x):
    return GuardSet([TensorMatch.of(LocalSource("x"), x)]).compile(fn)


def test_failure_reasons_name_each_entrys_first_failing_guard():
    entries = [entry_for(torch.randn(8, 3)), entry_for(torch.randn(8, 3, dtype=torch.float64))]
    call = torch.randn(9, 3)
    assert failure_reasons(entries, call) == [
        "L['x'].size()[0] == 8 failed: got 9",
        "L['x'].size()[0] == 8 failed: got 9",
    ]
    half = torch.randn(8, 3, dtype=torch.float16)
    assert failure_reasons(entries, half) == [
        "L['x'].dtype == torch.float32 failed: got torch.float16",
        "L['x'].dtype == torch.float64 failed: got torch.float16",
    ]


def test_failure_reasons_mark_entries_that_pass():
    entries = [entry_for(torch.randn(2)), entry_for(torch.randn(3))]
    assert failure_reasons(entries, torch.randn(3)) == ["L['x'].size()[0] == 2 failed: got 3", None]


def test_recompile_reason_lists_entries_in_cache_order():
    entries = [entry_for(torch.randn(2)), entry_for(torch.randn(2).requires_grad_())]
    reason = recompile_reason(entries, torch.randn(4))
    assert reason == (
        "entry 0: L['x'].size()[0] == 2 failed: got 4\n"
        "entry 1: L['x'].size()[0] == 2 failed: got 4"
    )


def test_arguments_that_do_not_bind_are_reported():
    (reason,) = failure_reasons([entry_for(torch.randn(2))], torch.randn(2), torch.randn(2))
    assert reason.startswith("the arguments do not match the function's parameters: ")


class _ReprRaises:
    def __repr__(self):
        raise AttributeError("not built yet")


def test_failure_reason_of_a_value_whose_repr_raises_is_still_given():
    # copy.deepcopy's memo dict holds half-built objects (a module without its attributes yet)
    # whose repr raises: the explanation of a recompile must not raise in the user's program.
    entry = GuardSet([ConstantMatch(LocalSource("x"), None)]).compile(fn)
    reason = recompile_reason([entry], {"b": _ReprRaises()})
    assert reason.startswith("entry 0: ") and "whose repr raised AttributeError" in reason
