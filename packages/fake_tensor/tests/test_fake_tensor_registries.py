"""fake_tensor's registries refuse a second rule for one key instead of silently replacing the
first, and leave the table as it was: op rules (by overload and by tag), value ranges' bound
rules (by sympy class) and shape analysis' value rules (by op packet)."""

from __future__ import annotations

import pytest
import sympy
import torch

import fake_tensor  # noqa: F401  (fills the op rule tables)
from fake_tensor import op_rules
from fake_tensor.analysis.value_bounds import VALUE_RULES, value_rule
from fake_tensor.symbolic.value_ranges import BOUND_RULES, bound_rule

aten = torch.ops.aten


def test_a_second_op_rule_for_an_overload_is_refused():
    before = dict(op_rules._RULES)
    with pytest.raises(ValueError, match="two fake tensor rules for aten.lift_fresh.default"):
        op_rules.rule_for(aten.cos.default, aten.lift_fresh.default)(lambda mode, func, args, kwargs: None)
    assert op_rules._RULES == before


def test_a_second_op_rule_for_a_tag_is_refused():
    before = dict(op_rules._TAG_RULES)
    with pytest.raises(ValueError, match="two fake tensor rules for Tag.data_dependent_output"):
        op_rules.rule_for_tag(torch.Tag.data_dependent_output)(lambda mode, func, args, kwargs: None)
    assert op_rules._TAG_RULES == before


def test_a_second_bound_rule_for_a_sympy_class_is_refused():
    before = dict(BOUND_RULES)
    with pytest.raises(ValueError, match="two bound rules for Add"):
        bound_rule(sympy.Function("Fresh"), sympy.Add)(lambda expr, sub: None)
    assert BOUND_RULES == before


def test_a_second_value_rule_for_an_op_is_refused():
    before = dict(VALUE_RULES)
    with pytest.raises(ValueError, match="two value rules for aten.arange"):
        value_rule(aten.cos, aten.arange)(lambda values_of, args, kwargs: None)
    assert VALUE_RULES == before
