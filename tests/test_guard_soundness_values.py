"""Guard soundness for values whose identity or contents the program reads through a constant:
an Enum member's mutable value or attribute (the member is fixed, what it holds is not).
See guard_soundness_harness."""

from __future__ import annotations

import enum
import types

import pytest

from guard_soundness_harness import backends_of, case, check_case


def fresh_enum():
    class Table(enum.Enum):
        SCALES = [1, 2]
        OFFSETS = {"a": 1.0}

        def __init__(self, value):
            self.extra = [0.5]

    return types.SimpleNamespace(Table=Table)


def reads_enum_values(state):
    Table = state.Table

    def fn(x):
        scales = Table.SCALES.value
        return x * sum(scales) + Table["OFFSETS"].value["a"] + Table.SCALES.extra[0] + len([m for m in Table][1].value)

    return fn


CASES = [
    case("enum_member_value_mutated", reads_enum_values, lambda s: s.Table.SCALES.value.append(5),
         lambda s: s.Table.OFFSETS.value.__setitem__("a", 3.0), lambda s: s.Table.SCALES.extra.__setitem__(0, 7.0),
         lambda s: s.Table.OFFSETS.value.__setitem__("b", 0), setup=fresh_enum, backends=("aot_eager",)),
]


@pytest.mark.parametrize("backend, case_", [(b, c) for c in CASES for b in backends_of(c)], ids=str)
def test_compiled_function_sees_values_changed_between_calls(backend, case_):
    check_case(case_, backend=backend)
