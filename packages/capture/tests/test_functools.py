"""functools in compiled code: partial objects (calls, `.func/.args/.keywords`, hasattr),
reduce, lru_cache/cache-wrapped functions (inlined, as TorchDynamo does) and functions
decorated with functools.wraps, all traced into one graph."""

import functools
import operator

import pytest
import torch

import capture

from helpers import check_across_sizes, compile_eager, run_and_compare


def _add(a, b, scale=1.0):
    return (a + b) * scale


_ADD_HALF = functools.partial(_add, scale=0.5)


def call_global_partial(x, y):
    return _ADD_HALF(x, y)


def read_partial_attributes(x, y):
    result = _ADD_HALF.func(x, y, **_ADD_HALF.keywords) + len(_ADD_HALF.args)
    return result, hasattr(_ADD_HALF, "func"), hasattr(_ADD_HALF, "nope")


def partial_made_inside(x, y):
    first = functools.partial(_add, x)
    nested = functools.partial(first, scale=3.0)
    return nested(y), first(y), nested.args[0] * 2


def partial_of_closure(x, y):
    k = y.sum()

    def inner(a, b):
        return a * b + k

    return functools.partial(inner, x)(2)


def partial_passed_in(x, y, fn):
    return fn(x, y)


def reduce_tensors(x, y):
    return functools.reduce(operator.add, [x, y, x * y]), functools.reduce(lambda a, b: a * b + 1, [x, y], y)


def reduce_over_generator(x, y):
    return functools.reduce(torch.maximum, (x * i for i in range(1, 4)))


@functools.lru_cache
def _cached_factor(n):
    return n * 2 + 1


@functools.lru_cache(maxsize=None)
def _cached_tensor_fn(t):
    return t.sin() * 2


@functools.cache
def _cached_scale(name):
    return {"double": 2.0, "half": 0.5}[name]


def call_cached_functions(x, y):
    return x * _cached_factor(3) + _cached_tensor_fn(y) * _cached_scale("half")


def _plus_one(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) + 1

    return wrapper


@_plus_one
def _doubled(t):
    """Doubles."""
    return t * 2


def call_wrapped_global(x, y):
    return _doubled(x) + _doubled(t=y)


def wrap_inside(x, y):
    def scaled(t):
        """Scales."""
        return t * 3

    wrapped = _plus_one(scaled)
    return wrapped(x), wrapped(y), wrapped.__name__, wrapped.__doc__, wrapped.__wrapped__(x)


def return_wrapped_function(x, y):
    def inner(t):
        return t - 1

    return _plus_one(inner)


def operator_functions(x, y):
    pair = [x, y * 2]
    total = operator.add(x, y) - operator.mul(x, 2) + operator.truediv(y, 3) + operator.neg(x) + operator.abs(y)
    shape_first = operator.attrgetter("shape")(x)[0]
    summed = operator.methodcaller("sum", dim=0)(x)
    flags = (operator.lt(1, 2), operator.truth(0), operator.is_(x, x), operator.is_not(x, y), operator.contains([1, 2], 2))
    acc = x.clone()
    acc = operator.iadd(acc, y)
    items = operator.itemgetter(1)(pair), operator.itemgetter(0, 1)(pair)
    return items, total, shape_first, summed, flags, acc, operator.index(3)


def getters_passed_in(x, y, get, method):
    return get([x, y]), method(x)


FUNCTIONS = [
    operator_functions, call_global_partial, read_partial_attributes, partial_made_inside, partial_of_closure, reduce_tensors,
    reduce_over_generator, call_cached_functions, call_wrapped_global, wrap_inside,
]  # fmt: skip


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_traces_into_one_graph(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n), torch.randn(n)))


def test_partial_passed_as_an_argument():
    fn = functools.partial(_add, scale=2.0)
    check_across_sizes(partial_passed_in, lambda n: (torch.randn(n), torch.randn(n), fn))


def test_a_returned_wrapped_function_keeps_its_metadata():
    compiled = compile_eager(return_wrapped_function, fullgraph=True)
    x, y = torch.randn(3), torch.randn(3)
    got, expected = compiled(x, y), return_wrapped_function(x, y)
    for name in ("__name__", "__qualname__", "__doc__"):
        assert getattr(got, name) == getattr(expected, name)
    assert got.__wrapped__.__name__ == expected.__wrapped__.__name__
    torch.testing.assert_close(got(x), expected(x))


def test_lru_cache_is_inlined_not_called():
    """The cache is not consulted while tracing (it would hold fake values): eager's cache is
    untouched by compiled calls."""
    _cached_tensor_fn.cache_clear()
    compiled = compile_eager(call_cached_functions, fullgraph=True)
    for _ in range(2):
        run_and_compare(compiled, call_cached_functions, (torch.randn(3), torch.randn(3)))
    assert _cached_tensor_fn.cache_info().hits == 0


def _decorates_its_own_helper(x):
    @functools.lru_cache
    def twice(n):
        return n * 2

    return x * twice(x.shape[0]) + twice.__wrapped__(1)


def test_lru_cache_applied_inside_the_compiled_function():
    """functools.lru_cache builds its wrapper in C (the graph breaks there) and update_wrapper
    then sets attributes on it: the resumed code read the half-built wrapper's __wrapped__ and
    failed with an internal error. Now the wrapper is traced as the object it is, and its call
    once __wrapped__ is set inlines the function."""
    compiled = compile_eager(_decorates_its_own_helper)
    for size in (4, 4, 7):
        run_and_compare(compiled, _decorates_its_own_helper, (torch.randn(size),))
    with pytest.raises(capture.errors.Unsupported, match="_lru_cache_wrapper"):
        compile_eager(_decorates_its_own_helper, fullgraph=True)(torch.randn(3))


def test_operator_callables_passed_in():
    get, method = operator.itemgetter(1), operator.methodcaller("mul", 3)
    check_across_sizes(getters_passed_in, lambda n: (torch.randn(n), torch.randn(n), get, method))


def test_lru_cache_answers_a_repeated_call_within_one_trace():
    """Two calls with the same constant arguments run the wrapped function once, its side
    effects (an append) once, as the cache does in eager."""

    @functools.lru_cache(maxsize=None)
    def square(n):
        calls.append(n)
        return n * n

    calls = []

    def fn(x):
        calls.clear()
        return x * (square(3) + square(3) + square(x.shape[0] + 10)), list(calls)

    compiled = compile_eager(fn, fullgraph=True)
    x = torch.randn(3)
    expected_calls = [3, 13]
    out, seen = compiled(x)
    torch.testing.assert_close(out, x * (9 + 9 + 169))
    assert seen == expected_calls


_RAMP_STEP = 2


@functools.lru_cache(maxsize=4)
def _bounded_ramp(n, *, offset=1):
    return torch.arange(n, dtype=torch.float32) * _RAMP_STEP + offset


@functools.lru_cache(maxsize=None, typed=True)
def _typed_scale(n, offset=1):
    return n * _RAMP_STEP + offset


def call_keyed_caches(x):
    return x + _bounded_ramp(3, offset=2) + _typed_scale(2, offset=1) + _typed_scale(2.0)


def test_lru_caches_answer_from_their_entries_and_a_cleared_one_captures_again():
    """The guards read each cache's entry under the key lru_cache files the call under (keyword
    arguments, typed, bounded caches whose entries are links): a value cached before a global
    changed stays the answer, as in Python, and a cleared cache fails the guard instead of
    running the body (a call the program's path might not make)."""
    global _RAMP_STEP
    _bounded_ramp.cache_clear(), _typed_scale.cache_clear()
    compiled = compile_eager(call_keyed_caches)
    x = torch.randn(3)
    try:
        for step in range(3):
            torch.testing.assert_close(compiled(x), call_keyed_caches(x), rtol=0, atol=0)
            if step == 0:
                _RAMP_STEP = 5  # the cached answers stay
            elif step == 1:
                _bounded_ramp.cache_clear(), _typed_scale.cache_clear()
        assert _bounded_ramp.cache_info().misses == _typed_scale.cache_info().misses - 1 == 1
    finally:
        _RAMP_STEP = 2


def test_partial_keywords_is_the_partials_own_dict():
    # A change through p.keywords shows in the next call and on the partial passed in.
    def fn(x, p):
        first = p(x)
        p.keywords["b"] = 3
        return first, p(x), dict(p.keywords)

    def make():
        return functools.partial(lambda a, b=1: a * b, b=2)

    expected_partial, partial = make(), make()
    expected = fn(torch.ones(2), expected_partial)
    actual = compile_eager(fn)(torch.ones(2), partial)
    torch.testing.assert_close(actual[1], expected[1])
    assert actual[2] == expected[2] and partial.keywords == expected_partial.keywords == {"b": 3}
