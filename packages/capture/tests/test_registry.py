"""capture's registries refuse what would silently never match or silently replace a rule: a
second handler, native step, call rule or wrap rule for one key (leaving the table as it was),
or a name that is no opname of a supported CPython."""

from __future__ import annotations

import pytest
import torch

from capture.calls.registry import CALL_RULES, rule
from capture.interpreter.registry import HANDLERS, KNOWN_OPNAMES, ONLY_IN_311, ONLY_IN_312, handles
from capture.runtime.native_steps import NATIVE_STEPS, native_step
from capture.wrap import RULES, wraps


def _unregistered(table) -> str:
    """An opname with no entry in `table` yet: registering it with a taken one must not stick."""
    return next(name for name in sorted(KNOWN_OPNAMES) if name not in table)


def test_a_misspelt_opname_is_refused():
    with pytest.raises(ValueError, match="no opname"):
        handles("LOAD_FASTT")(lambda frame, inst: None)
    with pytest.raises(ValueError, match="no opname"):
        native_step("CALLL")(lambda *args: None)


def test_a_second_handler_for_an_opname_is_refused():
    before = dict(HANDLERS)
    with pytest.raises(ValueError, match="two handlers for LOAD_FAST"):
        handles(_unregistered(HANDLERS), "LOAD_FAST")(lambda frame, inst: None)
    assert HANDLERS == before


def test_a_second_native_step_for_an_opname_is_refused():
    before = dict(NATIVE_STEPS)
    with pytest.raises(ValueError, match="two native steps for CALL"):
        native_step(_unregistered(NATIVE_STEPS), "CALL")(lambda *args: None)
    assert NATIVE_STEPS == before


def test_a_second_call_rule_for_a_callable_is_refused():
    before = dict(CALL_RULES)
    with pytest.raises(ValueError, match="two call rules for <built-in function len>"):
        rule(lambda: None, len)(lambda frame, args, kwargs: None)
    assert CALL_RULES == before


def test_a_second_wrap_rule_for_a_type_is_refused():
    before = dict(RULES)
    with pytest.raises(ValueError, match="two wrap rules for Tensor"):
        wraps(type("Fresh", (), {}), torch.Tensor)(lambda session, obj, source: None)
    assert RULES == before


def test_the_version_specific_opname_lists_do_not_overlap():
    assert not ONLY_IN_311 & ONLY_IN_312
