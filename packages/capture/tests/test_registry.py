"""The opcode registry refuses what would silently never match: a second handler for one
opname, or a name that is no opname of a supported CPython."""

from __future__ import annotations

import pytest

from capture.interpreter.registry import ONLY_IN_311, ONLY_IN_312, handles


def test_a_misspelt_opname_is_refused():
    with pytest.raises(ValueError, match="no opname"):
        handles("LOAD_FASTT")(lambda frame, inst: None)


def test_a_second_handler_for_an_opname_is_refused():
    with pytest.raises(ValueError, match="two handlers for LOAD_FAST"):
        handles("LOAD_FAST")(lambda frame, inst: None)


def test_the_version_specific_opname_lists_do_not_overlap():
    assert not ONLY_IN_311 & ONLY_IN_312
