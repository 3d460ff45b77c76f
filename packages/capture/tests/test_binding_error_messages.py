"""The TypeErrors and NameErrors a traced program raises read as CPython's, word for word
(a program may show or test them): argument binding (too many, missing, keyword-only,
positional-only passed by keyword, calling a compiled method wrongly), unbound locals and
free variables, and unpacking a non-iterable."""

from __future__ import annotations

import pytest
import torch

from helpers import compile_eager


def h(a, b, /, c, d=1, *, e, f=2):
    return a


class C:
    def m(self, a):
        return a


BODIES = {
    "missing_two": lambda: h(1),
    "missing_one": lambda: h(1, 2),
    "too_many_with_defaults": lambda: h(1, 2, 3, 4, 5),
    "too_many_and_keyword_only": lambda: h(1, 2, 3, 4, 5, e=1),
    "positional_only_by_keyword": lambda: h(a=1, b=2, c=3, e=4),
    "multiple_values": lambda: h(1, 2, 3, c=4, e=1),
    "missing_keyword_only": lambda: h(1, 2, 3),
    "unexpected_keyword": lambda: h(1, 2, 3, zz=1, e=1),
    "method_missing_argument": lambda: C().m(),
}


@pytest.mark.parametrize("name", BODIES)
def test_binding_errors_read_as_cpythons(name):
    call = BODIES[name]

    def fn(x):
        try:
            call()
        except TypeError as e:
            return x, str(e)
        return x, ""

    expected = fn(torch.ones(1))[1]
    assert expected and compile_eager(fn)(torch.ones(1))[1] == expected


def test_unbound_names_and_unpacking_read_as_cpythons():
    def fn(x):
        messages = []

        def inner():
            return late

        try:
            inner()
        except NameError as e:
            messages.append(str(e))
        late = 1
        try:
            if x.sum() > 100:
                never = 1
            print(never)
        except UnboundLocalError as e:
            messages.append(str(e))
        try:
            a, b = 5
        except TypeError as e:
            messages.append(str(e))
        return x + late, messages

    assert compile_eager(fn)(torch.ones(1))[1] == fn(torch.ones(1))[1]


def test_star_of_a_number_reads_as_cpythons():
    # CALL_FUNCTION_EX names the callable (module and qualname), LIST_EXTEND says 'Value'.
    def fn(x):
        messages = []
        calls = (lambda: h(*x.shape[0]), lambda: max(*x.shape[0]), lambda: h(1, *x.shape[0]),
                 lambda: [*x.shape[0]], lambda: C().m(*None), lambda: torch.add(*2.5))  # fmt: skip
        for call in calls:
            try:
                call()
            except TypeError as e:
                messages.append(str(e))
        return x, messages

    compiled = compile_eager(fn)
    for n in (1, 1, 2):
        assert compiled(torch.ones(n))[1] == fn(torch.ones(n))[1]


def test_a_compiled_function_called_wrongly_names_itself():
    def scale(x, k):
        return x * k

    with pytest.raises(TypeError) as expected:
        scale(torch.ones(1))
    with pytest.raises(TypeError) as actual:
        compile_eager(scale)(torch.ones(1))
    assert str(actual.value) == str(expected.value)


def test_a_method_run_through_its_dispatcher_called_wrongly_names_itself():
    # The class statement breaks the graph: the rest runs natively, the method through the
    # dispatcher of its compiled version, whose own parameters fail to bind.
    def fn(x):
        class Local:
            def m(self, a):
                return a

        try:
            Local().m()
        except TypeError as e:
            return x, str(e)
        return x, ""

    assert compile_eager(fn)(torch.ones(1))[1] == fn(torch.ones(1))[1]


def test_bad_sequence_indices_and_membership_read_as_cpythons():
    # A float or str index of a list, tuple or torch.Size, a float slice bound, del past the
    # end, and `in` a size raised CaptureInternalError (or named torch's SymInt).
    def fn(x):
        messages = []
        n = x.shape[0]
        items = list(range(n))
        attempts = (lambda: items[n / 2], lambda: (1, 2)[str(n)], lambda: x.shape[0.5], lambda: items[1.0:],
                    lambda: items.__delitem__(n * 2), lambda: items.__setitem__(1.5, 0), lambda: 1 in n)  # fmt: skip
        for attempt in attempts:
            try:
                attempt()
            except (TypeError, IndexError) as e:
                messages.append(str(e))
        try:
            del items[n * 2]
        except IndexError as e:
            messages.append(str(e))
        return x, messages

    compiled = compile_eager(fn)
    for n in (3, 3, 5):
        assert compiled(torch.ones(n))[1] == fn(torch.ones(n))[1]
