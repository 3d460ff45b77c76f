"""guards' registries refuse a second rule for one key instead of silently replacing the first,
and leave the table as it was: guard emitters by guard kind, printers by sympy class name."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from guards.kinds import EMITTERS, Guard, GradMode, emits
from guards.printer import PRINTERS, prints


def test_a_second_emitter_for_a_guard_kind_is_refused():
    before = dict(EMITTERS)
    with pytest.raises(ValueError, match="two emitters for GradMode"):
        emits(GradMode)(lambda guard, ctx: [])
    assert EMITTERS == before


def test_an_emitter_for_a_new_kind_is_taken():
    @dataclass(frozen=True)
    class Fresh(Guard):
        pass

    emitter = emits(Fresh)(lambda guard, ctx: [])
    try:
        assert EMITTERS[Fresh] is emitter
    finally:
        del EMITTERS[Fresh]


def test_a_second_printer_for_a_sympy_class_is_refused():
    before = dict(PRINTERS)
    with pytest.raises(ValueError, match="two printers of sympy classes for FloorDiv"):
        prints("FreshFunction", "FloorDiv")(lambda expr, printer: ("", 0))
    assert PRINTERS == before
