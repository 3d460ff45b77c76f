"""Calls made for their output (warnings, log records) keep their place and location, and a few
standard-library objects behave as in eager: generator.throw(type, value) raises that value,
TypedDict classes make dicts, struct sequences such as sys.version_info fold, and IntFlag
combinations reach the graph as ints. Found by tests/conformance/corpus/round3_*_cases.py."""

from __future__ import annotations

import contextlib
import enum
import logging
import sys
import typing
import warnings

import torch

from helpers import compile_eager


def _warns_twice(x):
    y = x + 1
    warnings.warn("same text")
    warnings.warn("same text")
    return y


def _recorded(fn, x):
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("default")
        fn(x)
    return [(str(m.message), m.filename, m.lineno) for m in recorded]


def test_warning_names_the_users_line_once_per_location():
    expected = _recorded(_warns_twice, torch.ones(2))
    assert len(expected) == 2  # two lines, two locations
    assert _recorded(compile_eager(_warns_twice), torch.ones(2)) == expected


def _helper_warns():
    warnings.warn("from helper", stacklevel=2)


def _calls_helper(x):
    _helper_warns()
    return x * 2


def test_warning_stacklevel_names_the_callers_line():
    assert _recorded(compile_eager(_calls_helper), torch.ones(2)) == _recorded(_calls_helper, torch.ones(2))


def _calls_helper_in_a_frame_that_runs_eagerly(x):
    with warnings.catch_warnings():  # setting warnings.filters: the frame runs eagerly
        _helper_warns()
    return x * 2


def test_warning_stacklevel_past_the_compiled_function_names_the_callers_line():
    """The helper is compiled as a frame of its own (callees of an eager frame are, as under
    torch.compile): its stacklevel=2 names the caller's line, not the dispatcher between."""
    fn = _calls_helper_in_a_frame_that_runs_eagerly
    compiled = compile_eager(fn)
    for _ in range(2):
        assert _recorded(compiled, torch.ones(2)) == _recorded(fn, torch.ones(2))


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append((record.getMessage(), record.lineno, record.funcName))


def _logger(name, handler):
    logger = logging.getLogger(name)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.handlers[:] = [handler]
    return logger


def test_log_records_read_back_inside_the_function():
    handler = _Collect()
    logger = _logger("capture.tests.read_back", handler)

    def fn(x):
        handler.records.clear()
        logger.info("size %d", x.shape[0])
        return x + 1, [message for message, _, _ in handler.records]

    assert compile_eager(fn)(torch.ones(3))[1] == fn(torch.ones(3))[1] == ["size 3"]


def test_log_record_made_after_the_graph_names_the_users_line():
    stream = logging.StreamHandler(open("/dev/null", "w"))  # noqa: SIM115  (closed below)
    seen = []
    stream.emit = lambda record: seen.append((record.getMessage(), record.lineno, record.funcName))
    logger = _logger("capture.tests.location", stream)

    def fn(x):
        logger.warning("sum %s", "known")
        return x * 2

    fn(torch.ones(2))
    compile_eager(fn)(torch.ones(2))
    stream.stream.close()
    assert seen[0] == seen[1]


@contextlib.contextmanager
def _reraising():
    try:
        yield
    except KeyError:
        raise


def test_contextmanager_reraises_the_same_exception_object():
    def fn(x):
        err = KeyError("same")
        try:
            with _reraising():
                raise err
        except KeyError as e:
            return x + 1, e is err

    assert compile_eager(fn, fullgraph=True)(torch.ones(2))[1] is True


class _Config(typing.TypedDict):
    width: int


def test_typeddict_class_call_makes_a_dict():
    def fn(x):
        c = _Config(width=x.shape[0])
        return x * c["width"], type(c)

    assert compile_eager(fn, fullgraph=True)(torch.ones(2))[1] is dict


def test_version_info_compared_and_sliced():
    def fn(x):
        if sys.version_info >= (3, 8):
            return x + sys.version_info.major, sys.version_info[:2]
        return x, ()

    assert compile_eager(fn, fullgraph=True)(torch.ones(2))[1] == sys.version_info[:2]


class _Bits(enum.IntFlag):
    A = 1
    B = 2


def test_intflag_combination_as_graph_argument():
    def fn(x):
        return x * (_Bits.B | _Bits.A)

    torch.testing.assert_close(compile_eager(fn, fullgraph=True)(torch.ones(2)), torch.full((2,), 3.0))


def test_a_bare_object_made_in_the_function_survives_a_graph_break():
    # object() has no __dict__: rebuilding it for the code after the break raised
    # AttributeError where eager runs on (operator.length_hint breaks the graph here).
    import operator

    def fn(x):
        sentinel = object()
        return x + 1, operator.length_hint(sentinel, x.shape[0]), type(sentinel).__name__

    compiled = compile_eager(fn)
    for n in (2, 2, 3):
        assert compiled(torch.ones(n))[1:] == fn(torch.ones(n))[1:]
