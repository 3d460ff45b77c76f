"""Guard soundness for state a function reaches by name: globals (rebound, mutated, deleted),
builtins shadowed later, closure cells rebound from outside, defaults and keyword defaults,
functools.partial arguments, a bound method's object, modules imported inside the function.
See guard_soundness_harness."""

from __future__ import annotations

import builtins
import functools
import inspect
import os
import sys
import types

import pytest
import torch

from guard_soundness_harness import backends_of, case, check_case

SCALE = 2
FLAG = True
ITEMS = [1, 2]
TABLE = {"a": 1, "b": 2}
CONFIG = types.SimpleNamespace(scale=2, mode="add")
WEIGHT = torch.ones(3)
MAYBE = 1.5
COUNTER = 0
SEEN = []
PICK = max
_ABS = builtins.abs


def reset_globals(**values):
    def setup():
        fresh = dict(SCALE=2, FLAG=True, ITEMS=[1, 2], TABLE={"a": 1, "b": 2}, CONFIG=types.SimpleNamespace(scale=2, mode="add", pick=max),
                     WEIGHT=torch.ones(3), MAYBE=1.5, COUNTER=0, SEEN=[], PICK=max)
        fresh.update(values)
        globals().update(fresh)
        for name in ("len", "abs"):
            globals().pop(name, None)
        helper.__code__ = HELPER_CODE
        root.__code__ = ROOT_CODE
        cached_scale.cache_clear()
        cached_ramp.cache_clear()
        counted_scale.cache_clear()
        counted_bounded.cache_clear()
        counted_other.cache_clear()
        globals()["ADDER"] = make_adder(1)
        return types.SimpleNamespace()

    return setup


def set_global(name, value):
    return lambda state: globals().__setitem__(name, value() if callable(value) else value)


def uses_scale(x):
    return x * SCALE


def uses_flag(x):
    return x + 1 if FLAG else x - 1


def uses_items(x):
    return x * sum(ITEMS) + len(ITEMS)


def uses_table(x):
    return [x * v for v in TABLE.values()], list(TABLE)


def uses_config(x):
    return x * CONFIG.scale if CONFIG.mode == "mul" else x + CONFIG.scale


def uses_weight(x):
    return x * WEIGHT


def uses_maybe(x):
    try:
        return x + MAYBE
    except NameError:
        return x - 1


def uses_len(x):
    return x + len([1, 2, 3]) + abs(-2)


def uses_pick(x):
    return x + PICK(1, 2) + CONFIG.pick(3, 4)


def helper(x):
    return x * 2


def other_helper(x):
    return x * 3


HELPER_CODE = helper.__code__


def make_adder(k):
    def add(x):
        return x + k

    return add


ADDER = make_adder(1)


def uses_helpers(x):
    return helper(x) + ADDER(x)


@functools.lru_cache(maxsize=None)
def cached_scale(k):
    return SCALE * k


@functools.cache
def cached_ramp(n):
    return torch.arange(n, dtype=torch.float32) * SCALE


def uses_cached(x):
    return x * cached_scale(3) + cached_ramp(3)


@functools.lru_cache(maxsize=None)
def counted_scale(k):
    """Counts the runs of its body (COUNTER): a call the program would not make is seen."""
    global COUNTER
    COUNTER += 1
    return SCALE * k


@functools.lru_cache(maxsize=2)
def counted_bounded(k):
    global COUNTER
    COUNTER += 10
    return SCALE + k


def uses_counted_for_small_inputs(x):
    if x.shape[0] > 3:
        return x
    return x * counted_scale(3) + counted_bounded(1)


@functools.lru_cache(maxsize=2)
def counted_other(k):
    global COUNTER
    COUNTER += 100
    return k


def uses_two_bounded_caches(x):
    return x * counted_bounded(1) + counted_other(1)


def uses_bounded_for_small_inputs(x):
    if x.shape[0] > 3:
        return x
    return x * counted_bounded(1)


def small_large_small(state, call):
    return (torch.randn(5 if call in (2, 3) else 3),)


def cache_contents(cached):
    """What a cache holds, by its counts (not its hits: a compiled call reads the cache without
    calling it)."""
    info = cached.cache_info()
    return info.misses, info.currsize


def grows_after_the_first_mutation(state, call):
    return (torch.randn(3 if call < 2 else 5),)


def root(x):
    return x * 2


ROOT_CODE = root.__code__


def counts_calls(x):
    global COUNTER
    COUNTER += 1
    return x * COUNTER


def appends_seen(x):
    SEEN.append(x.sum())
    return x * len(SEEN)


def snapshot(*names):
    return lambda state: {name: globals().get(name, "<deleted>") for name in names}


def gcase(name, make, *mutations, **options):
    """A case over this module's globals, reset before each run."""
    return case(name, make, *mutations, setup=reset_globals(), **options)


GLOBAL_CASES = [
    gcase("global_int_rebound", lambda s: uses_scale, set_global("SCALE", 3), set_global("SCALE", 3.0), set_global("SCALE", True),
         set_global("SCALE", lambda: torch.full((3,), 2.0)), backends=("aot_eager", "inductor")),
    gcase("global_bool_flipped", lambda s: uses_flag, set_global("FLAG", False), set_global("FLAG", 0), set_global("FLAG", [])),
    gcase("global_list_mutated", lambda s: uses_items, lambda s: ITEMS.append(5), lambda s: ITEMS.__setitem__(0, 10), lambda s: ITEMS.clear(),
         backends=("inductor",)),
    gcase("global_list_rebound_to_tuple", lambda s: uses_items, set_global("ITEMS", (1, 2)), set_global("ITEMS", (1, 2, 3))),
    gcase("global_dict_mutated", lambda s: uses_table, lambda s: TABLE.__setitem__("c", 3), lambda s: TABLE.__setitem__("a", 7),
         lambda s: TABLE.pop("a"), lambda s: TABLE.update(a=1)),
    gcase("global_object_attribute_changed", lambda s: uses_config, lambda s: setattr(CONFIG, "scale", 5), lambda s: setattr(CONFIG, "mode", "mul"),
         lambda s: delattr(CONFIG, "scale")),
    gcase("global_tensor_rebound", lambda s: uses_weight, set_global("WEIGHT", lambda: torch.full((3,), 3.0)),
         set_global("WEIGHT", lambda: torch.ones(3, dtype=torch.float64)), set_global("WEIGHT", lambda: torch.ones(1, 3)),
         lambda s: WEIGHT.mul_(2), set_global("WEIGHT", 2), backends=("aot_eager", "inductor")),
    gcase("global_deleted_then_restored", lambda s: uses_maybe, lambda s: globals().pop("MAYBE"), set_global("MAYBE", 2.5)),
    gcase("builtin_shadowed_by_a_global", lambda s: uses_len, set_global("len", lambda: (lambda obj: 10)), lambda s: globals().pop("len"),
         set_global("abs", lambda: (lambda v: 100))),
    gcase("builtin_patched_in_builtins", lambda s: uses_len, lambda s: setattr(builtins, "abs", lambda v: 100),
         lambda s: setattr(builtins, "abs", _ABS)),
    gcase("builtin_function_rebound_in_a_global_or_attribute", lambda s: uses_pick, set_global("PICK", lambda: min),
         lambda s: setattr(CONFIG, "pick", min), lambda s: setattr(CONFIG, "pick", pow)),
    gcase("inlined_function_code_and_closure_changed", lambda s: uses_helpers, lambda s: setattr(helper, "__code__", other_helper.__code__),
         lambda s: setattr(ADDER.__closure__[0], "cell_contents", 10), set_global("ADDER", lambda: make_adder(2.5)), backends=("inductor",)),
    gcase("compiled_function_code_replaced", lambda s: root, lambda s: setattr(root, "__code__", other_helper.__code__)),
    gcase("lru_cache_answers_as_in_python", lambda s: uses_cached, set_global("SCALE", 5), lambda s: cached_scale.cache_clear(),
          lambda s: cached_ramp(3).mul_(2), lambda s: cached_ramp.cache_clear(), backends=("inductor",)),
    # Entries are tried in turn: the guard of the small-input entry must not run the cached
    # function's body (cleared cache) for a large input, whose path never calls it.
    gcase("lru_cache_cleared_is_not_called_by_a_guard", lambda s: uses_counted_for_small_inputs,
          lambda s: (counted_scale.cache_clear(), counted_bounded.cache_clear()), lambda s: None,
          args=grows_after_the_first_mutation, observe=lambda s: (COUNTER, cache_contents(counted_scale), cache_contents(counted_bounded))),
    # A bounded cache evicts its least recently used entry: a guard whose call marks an entry
    # used where the program's path makes no call (the large inputs) changes which one goes.
    gcase("lru_cache_eviction_order_as_in_python", lambda s: uses_bounded_for_small_inputs, lambda s: counted_bounded(2),
          lambda s: counted_bounded(3), args=small_large_small,
          observe=lambda s: (COUNTER, cache_contents(counted_bounded))),
    # A bounded cache's call in a guard counts a hit and marks its entry used, as the program's
    # own call does: its hits are compared. The entry must find both calls cached before it
    # calls either (the second cache cleared, it fails before the first one's call), and the
    # check right after a capture must not call them again.
    gcase("two_bounded_lru_caches_checked_before_either_is_called", lambda s: uses_two_bounded_caches,
          lambda s: counted_other.cache_clear(), lambda s: counted_bounded(2), lambda s: counted_bounded(3),
          observe=lambda s: (COUNTER, tuple(counted_bounded.cache_info()), tuple(counted_other.cache_info()))),
    gcase("global_counter_written_by_the_function", lambda s: counts_calls, set_global("COUNTER", 10), observe=snapshot("COUNTER")),
    gcase("global_list_appended_by_the_function", lambda s: appends_seen, lambda s: SEEN.clear(), set_global("SEEN", list),
         observe=snapshot("SEEN")),
]


def closure_rebound(state):
    scale = 2
    items = [1]

    def fn(x):
        return x * scale + len(items)

    def rebind(value):
        nonlocal scale
        scale = value

    state.rebind, state.items = rebind, items
    return fn


def closure_written_inside(state):
    count = 0

    def fn(x):
        nonlocal count
        count += 1
        return x * count

    state.count = lambda: fn.__closure__[0].cell_contents
    state.cell = fn.__closure__[0]
    return fn


def with_defaults(state):
    def fn(x, scale=2, *, shift=1.0, table={"k": 1}):  # noqa: B006 - the default is mutated between calls
        return x * scale + shift + table["k"]

    state.fn = fn
    return fn


def partial_of(state):
    def base(scale, x, shift=0):
        return x * scale + shift

    state.partial = functools.partial(base, 2, shift=1)
    return lambda x: state.partial(x)


class Scaler:
    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):
        return x * self.scale


def bound_method(state):
    state.obj = Scaler(2)
    state.method = state.obj.apply
    return lambda x: state.method(x)


def bound_method_compiled(state):
    state.obj = Scaler(2)
    return state.obj.apply


def function_attributes(state):
    """A function whose attributes (those functools.wraps copies, and what inspect.signature
    reads) are reassigned between calls."""

    def base(v, k=2.0):
        "doc"
        return v * 2

    @functools.wraps(base)
    def wrapper(v, k=2.0):
        return wrapper.__wrapped__(v)

    state.base, state.wrapper = base, wrapper

    def fn(x):
        w = state.wrapper
        default = inspect.signature(state.base).parameters["k"].default
        return w(x) * len(w.__name__) + len(w.__doc__ or "") + len(w.__annotations__) + default

    return fn


def fresh_imported_module(scale=2):
    """A module `gs_imported` filed in sys.modules (a fresh one per run), as an import inside a
    function finds it."""
    module = types.ModuleType("gs_imported")
    module.SCALE = scale
    sys.modules["gs_imported"] = module
    return types.SimpleNamespace()


_STUBBED = ("gs_stubbed", "gs_alias", "gs_optional", "gs_absent")


def stub_module(name, scale, module_name=None):
    """`sys.modules[name] = module` as tests and plugins stub a module (the module may carry
    another name, as an alias or a mock does)."""
    module = types.ModuleType(module_name or name)
    module.SCALE = scale
    sys.modules[name] = module


def fresh_stubbed_modules():
    for name in _STUBBED:
        sys.modules.pop(name, None)
    stub_module("gs_stubbed", 2)
    stub_module("gs_alias", 3, module_name="gs_other")
    return types.SimpleNamespace()


def reads_sys_modules(state):
    def fn(x):
        import importlib

        import gs_alias

        try:
            import gs_absent
        except ImportError:
            gs_absent = None
        optional = sys.modules.get("gs_optional")
        out = x * importlib.import_module("gs_stubbed").SCALE + sys.modules["gs_stubbed"].SCALE + gs_alias.SCALE
        out = out + ("gs_optional" in sys.modules) + (optional.SCALE if optional is not None else 0)
        return out + __import__("gs_stubbed").SCALE + (gs_absent.SCALE if gs_absent is not None else 0)

    return fn


def _lazy_attribute(name):
    if name == "lazy":
        return 3
    raise AttributeError(name)


def fresh_lazy_module():
    """A module whose `lazy` comes from its module-level __getattr__ (PEP 562) until a
    mutation defines it; and an environment variable."""
    module = types.ModuleType("gs_lazy")
    module.__getattr__ = _lazy_attribute
    os.environ["GS_SOUNDNESS_FLAG"] = "1"
    return types.SimpleNamespace(module=module)


def reads_lazy_module_and_environment(state):
    def fn(x):
        return x * state.module.lazy + (1 if os.environ.get("GS_SOUNDNESS_FLAG") == "1" else 2)

    return fn


def fresh_stdlib_data():
    """Data the standard library's modules hold, which programs change between calls."""
    import logging

    state = types.SimpleNamespace(path=list(sys.path), argv=list(sys.argv), level=logging.root.level)
    logging.root.setLevel(logging.WARNING)
    return state


def reads_stdlib_data(state):
    import logging

    def fn(x):
        return x * len(sys.argv) + (1 if logging.root.level > logging.INFO else 0) + (2 if "/gs_nowhere" in sys.path else 0)

    return fn


def restore_stdlib_data(state):
    import logging

    sys.path[:], sys.argv[:] = state.path, state.argv
    logging.root.setLevel(state.level)


def imports_inside(state):
    def fn(x):
        import gs_imported
        from gs_imported import SCALE

        return x * gs_imported.SCALE + SCALE

    return fn


def set_attr(path, name, value):
    def mutate(state):
        setattr(getattr(state, path), name, value() if callable(value) and not isinstance(value, type) else value)

    return mutate


CLOSURE_CASES = [
    case("closure_cell_rebound_from_outside", closure_rebound, lambda s: s.rebind(3), lambda s: s.rebind(2.5), lambda s: s.items.append(2),
         lambda s: s.rebind(torch.ones(3)), setup=types.SimpleNamespace, backends=("aot_eager",)),
    case("closure_cell_written_inside", closure_written_inside, lambda s: setattr(s.cell, "cell_contents", 10),
         setup=types.SimpleNamespace, observe=lambda s: s.count()),
    case("defaults_replaced", with_defaults, lambda s: setattr(s.fn, "__defaults__", (3,)), lambda s: setattr(s.fn, "__defaults__", (3.0,)),
         lambda s: s.fn.__kwdefaults__.__setitem__("shift", 5.0), lambda s: s.fn.__kwdefaults__["table"].__setitem__("k", 9),
         lambda s: setattr(s.fn, "__kwdefaults__", {"shift": -1, "table": {"k": 0}}), setup=types.SimpleNamespace),
    case("partial_arguments_changed", partial_of, lambda s: setattr(s, "partial", functools.partial(s.partial.func, 3, shift=1)),
         lambda s: s.partial.keywords.__setitem__("shift", 4), lambda s: setattr(s, "partial", functools.partial(s.partial.func, 3.5)),
         lambda s: setattr(s, "partial", functools.partial(s.partial.func, 3.5, shift=2)),  # a keyword more
         lambda s: setattr(s, "partial", functools.partial(s.partial.func, 3.5, torch.ones(3))),  # an argument more
         setup=types.SimpleNamespace),
    case("function_attributes_reassigned", function_attributes, lambda s: setattr(s.wrapper, "__name__", "longer_name"),
         lambda s: setattr(s.wrapper, "__doc__", "a longer docstring"), lambda s: s.wrapper.__annotations__.__setitem__("v", int),
         lambda s: setattr(s.wrapper, "__wrapped__", lambda v: v * 7), lambda s: setattr(s.base, "__defaults__", (5.0,)),
         setup=types.SimpleNamespace),
    case("module_imported_inside_changed_or_replaced", imports_inside, lambda s: setattr(sys.modules["gs_imported"], "SCALE", 3),
         lambda s: fresh_imported_module(scale=5), setup=fresh_imported_module),
    case("module_stubbed_in_sys_modules", reads_sys_modules, lambda s: stub_module("gs_stubbed", 5), lambda s: stub_module("gs_optional", 7),
         lambda s: stub_module("gs_alias", 11, module_name="gs_other"), lambda s: stub_module("gs_absent", 13),
         lambda s: sys.modules.pop("gs_optional"), setup=fresh_stubbed_modules),
    case("module_getattr_and_environment_changed", reads_lazy_module_and_environment, lambda s: setattr(s.module, "__getattr__", lambda n: 9),
         lambda s: setattr(s.module, "lazy", 5), lambda s: os.environ.__setitem__("GS_SOUNDNESS_FLAG", "0"), setup=fresh_lazy_module),
    # Module attributes of the standard library are read unguarded where they are functions,
    # classes or constants; their data (lists, objects) is read as any other module's.
    case("stdlib_module_data_changed", reads_stdlib_data, lambda s: sys.argv.append("-v"), lambda s: sys.path.append("/gs_nowhere"),
         lambda s: __import__("logging").root.setLevel(10), lambda s: restore_stdlib_data(s), setup=fresh_stdlib_data),
    case("bound_method_self_changed", bound_method, set_attr("obj", "scale", 3), set_attr("obj", "scale", 2.5),
         lambda s: setattr(s, "method", Scaler(4).apply), setup=types.SimpleNamespace),
    case("compiled_bound_method_self_changed", bound_method_compiled, set_attr("obj", "scale", 3), set_attr("obj", "scale", torch.ones(3)),
         setup=types.SimpleNamespace),
]

CASES = GLOBAL_CASES + CLOSURE_CASES


@pytest.fixture(autouse=True)
def _builtins_restored():
    yield
    builtins.abs = _ABS


@pytest.mark.parametrize("backend, case_", [(b, c) for c in CASES for b in backends_of(c)], ids=str)
def test_compiled_function_sees_state_changed_between_calls(backend, case_):
    check_case(case_, backend=backend)
