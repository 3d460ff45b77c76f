"""Generators as CPython runs them: a StopIteration leaving a generator's body becomes
RuntimeError (PEP 479), and throw() and close() on a generator suspended in `yield from` go to
the generator it delegates to first (gen_throw's gi_yieldfrom)."""

from __future__ import annotations

import pytest
import torch

from helpers import compile_eager


def run_both(fn):
    expected = fn(torch.ones(2))
    actual = compile_eager(fn, fullgraph=True)(torch.ones(2))
    assert actual[1:] == expected[1:]
    torch.testing.assert_close(actual[0], expected[0])
    return actual


def test_stopiteration_raised_in_a_body_is_runtimeerror():
    def fn(t):
        def gen():
            yield t + 1
            raise StopIteration("boom")

        g = gen()
        next(g)
        try:
            next(g)
        except RuntimeError as e:
            return t + 1.0, str(e), type(e.__cause__).__name__
        except StopIteration:
            return t + 2.0, "", ""
        return t, "", ""

    assert run_both(fn)[1] == "generator raised StopIteration"


def test_stopiteration_of_an_inner_next_leaking_is_runtimeerror():
    def fn(t):
        def inner():
            yield t + 1

        def gen():
            it = inner()
            while True:
                yield next(it)

        try:
            return t, len(list(gen()))
        except RuntimeError:
            return t * 2, "runtime error"

    assert run_both(fn)[1] == "runtime error"


@pytest.mark.parametrize("caught", [True, False])
def test_throw_goes_to_the_delegated_generator(caught):
    def fn(t):
        def nested():
            try:
                yield 1
                yield 2
            except ValueError:
                if caught:
                    return 123
                raise KeyError("from nested")

        def outer():
            r = yield from nested()
            yield r

        g = outer()
        next(g)
        try:
            return t * 2, g.throw(ValueError("stop"))
        except KeyError as e:
            return t * 3, e.args[0]

    assert run_both(fn)[1] == (123 if caught else "from nested")


def test_close_runs_the_delegated_generators_finally_first():
    def fn(t):
        log = []

        def nested():
            try:
                yield 1
            finally:
                log.append("nested")

        def outer():
            try:
                yield from nested()
            finally:
                log.append("outer")

        g = outer()
        next(g)
        g.close()
        return t + 1, log

    assert run_both(fn)[1] == ["nested", "outer"]


def test_send_through_yield_from_a_list_is_attributeerror():
    # CPython's SEND hands a value other than None to the delegate's send(), which a list
    # iterator lacks. Before: the value was dropped, the generator went on, the function
    # returned None where eager caught AttributeError.
    def fn(t):
        def outer():
            yield from [t, t + 1]

        g = outer()
        next(g)
        try:
            g.send(5)
        except AttributeError as e:
            return t * 2, str(e)
        return t, None

    run_both(fn)


def test_send_through_yield_from_reaches_the_inner_generator():
    def fn(t):
        def inner():
            v = yield t
            w = yield t * v
            return w

        def outer():
            r = yield from inner()
            yield r

        g = outer()
        next(g)
        return g.send(3), g.send("done")

    expected = fn(torch.ones(2))
    actual = compile_eager(fn, fullgraph=True)(torch.ones(2))
    torch.testing.assert_close(actual[0], expected[0])
    assert actual[1] == expected[1]


def test_a_generator_resumed_by_its_own_body_is_valueerror():
    # Before: CaptureInternalError (IndexError: pop from empty list) tracing `yield next(gen)`.
    def fn(t):
        def gen_fn():
            yield next(gen)

        gen = gen_fn()
        try:
            next(gen)
        except ValueError as e:
            return t + 1, str(e)
        return t, None

    run_both(fn)
