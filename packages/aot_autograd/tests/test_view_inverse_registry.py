"""The view-inverse table (functionalization/view_inverses.py) refuses a second inverse for a
view op instead of silently replacing the first, and leaves the table as it was."""

from __future__ import annotations

import pytest
import torch

from aot_autograd.functionalization import view_inverses

aten = torch.ops.aten


def test_a_second_inverse_for_a_view_op_is_refused():
    before = dict(view_inverses._INVERSES)
    with pytest.raises(ValueError, match="two view inverses for aten.t.default"):
        view_inverses.inverse_of(aten.cosine_similarity.default, aten.t.default)(lambda *args: None)
    assert view_inverses._INVERSES == before
