"""The lowering table refuses a second lowering for an overload instead of silently replacing
the first, and a refused registration (a packet, some of whose overloads are taken) leaves the
table as it was."""

from __future__ import annotations

import pytest
import torch

from inductor.lowering import LOWERINGS, register_lowering

aten = torch.ops.aten


def test_a_second_lowering_for_an_overload_is_refused():
    before = dict(LOWERINGS)
    with pytest.raises(ValueError, match="two lowerings for aten.add.Tensor"):
        register_lowering(aten.add.Tensor)(lambda *args: None)
    assert LOWERINGS == before


def test_a_packet_with_a_taken_overload_registers_none_of_them():
    before = dict(LOWERINGS)
    assert aten.add.Tensor in LOWERINGS
    free = aten.cosine_similarity.default  # composite: no lowering of its own
    assert free not in LOWERINGS
    with pytest.raises(ValueError, match="two lowerings for aten.add"):
        register_lowering(free, aten.add)(lambda *args: None)
    assert LOWERINGS == before
