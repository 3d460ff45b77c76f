"""`copy.copy` and `copy.deepcopy` of plain Python objects and containers: copy.py is inlined,
and the C steps it reaches (`object.__reduce_ex__`, `id()` as memo keys, an object's
`__dict__`, `cls.__new__(cls)`) are modelled (capture.calls.copy_protocol). Each test runs
eager and compiled on separately built but equal arguments, on fresh tensors of a first size,
again, and of a new size, and compares results and the arguments' state afterwards: the copy is
a new object, and mutating it never reaches the original."""

from __future__ import annotations

import copy

import pytest
import torch

from helpers import assert_same, cache_of, captures, compile_eager


class Settings:
    def __init__(self, scale=2.0, sizes=None, table=None):
        self.scale = scale
        self.sizes = [1, 2] if sizes is None else sizes
        self.table = {"a": [3, 4], "b": {"c": 5}} if table is None else table


class AliasedConfig:
    """Like transformers' PreTrainedConfig: attribute aliases resolved by a Python
    __getattribute__ and __setattr__."""

    attribute_map = {"hidden_size": "d_model"}

    def __init__(self, d_model=8, layers=2):
        self.d_model = d_model
        self.decoder_layers = layers
        self.labels = {0: "a", 1: "b"}

    def __setattr__(self, key, value):
        if key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        super().__setattr__(key, value)

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)


def state_of(obj):
    """A plain-data picture of `obj` (objects as their class and attributes), to compare the
    eager and compiled arguments after the calls."""
    if type(obj).__module__ == __name__:
        return (type(obj).__name__, state_of(object.__getattribute__(obj, "__dict__")))
    if isinstance(obj, dict):
        return {k: state_of(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(state_of(v) for v in obj)
    return obj


def agree_across_sizes(fn, make_objects, sizes=(4, 4, 7), *, fullgraph=True):
    """Compile `fn(x, *objects)` and compare it with eager for each size, each side given its
    own `make_objects()`; returns the compiled function."""
    compiled = compile_eager(fn, fullgraph=fullgraph)
    for size in sizes:
        x = torch.randn(size)
        eager_objects, compiled_objects = make_objects(), make_objects()
        expected = fn(x.clone(), *eager_objects)
        actual = compiled(x.clone(), *compiled_objects)
        assert_same(state_of(actual), state_of(expected))
        assert_same(state_of(list(compiled_objects)), state_of(list(eager_objects)), "arguments after the call")
    if fullgraph:
        distinct = len(dict.fromkeys(sizes))
        assert captures(compiled) == distinct, f"expected {distinct} captures, got {captures(compiled)}"
    return compiled


def test_deepcopy_of_an_object_passed_in_is_a_new_object():
    def fn(x, settings):
        copied = copy.deepcopy(settings)
        copied.sizes.append(3)
        copied.table["a"][0] = 10
        copied.scale = 4.0
        return x * copied.scale + len(copied.sizes) + copied.table["a"][0] + settings.table["a"][0] + len(settings.sizes) + settings.scale

    agree_across_sizes(fn, lambda: (Settings(),))


def test_shallow_copy_shares_the_attributes_values():
    def fn(x, settings):
        copied = copy.copy(settings)
        copied.scale = 3.0
        copied.sizes.append(9)  # the one list both objects hold
        return x * copied.scale + settings.scale, len(settings.sizes), copied.sizes is settings.sizes

    agree_across_sizes(fn, lambda: (Settings(),))


def test_deepcopy_of_nested_dicts_and_lists_returned():
    def fn(x, data):
        copied = copy.deepcopy(data)
        copied["a"][1].append(5)
        copied["b"][1].pop()
        return x + len(copied["a"][1]) + len(data["a"][1]), copied

    agree_across_sizes(fn, lambda: ({"a": [1, [2, 3]], "b": (4, [5, 6]), "c": "text"},))


def test_memo_copies_a_shared_sub_object_once():
    def fn(x, data):
        copied = copy.deepcopy(data)
        copied["p"].append(3)
        return x + len(copied["q"]), copied["p"] is copied["q"], copied

    compiled = agree_across_sizes(fn, lambda: ({"p": (shared := [1, 2]), "q": shared},))
    _, _, returned = compiled(torch.randn(4), {"p": (shared := [1, 2]), "q": shared})
    assert returned["p"] is returned["q"] and returned["p"] is not shared


def test_copy_of_an_object_made_in_the_function_escapes():
    def fn(x, scale):
        made = Settings(scale, [1], {"k": [2]})
        copied = copy.deepcopy(made)
        copied.table["k"].append(3)
        return x * copied.scale, made, copied

    compiled = agree_across_sizes(fn, lambda: (1.5,))
    _, made, copied = compiled(torch.randn(4), 1.5)
    assert copied is not made and copied.table is not made.table and made.table == {"k": [2]}


def test_deepcopy_returned_is_not_the_original():
    def fn(x, settings):
        return copy.deepcopy(settings), x + 1

    compiled = agree_across_sizes(fn, lambda: (Settings(),))
    settings = Settings()
    copied, _ = compiled(torch.randn(4), settings)
    assert copied is not settings and copied.table is not settings.table and copied.table["b"] is not settings.table["b"]


def test_config_with_python_getattribute_and_setattr():
    def fn(x, config):
        copied = copy.deepcopy(config)
        value = getattr(copied, "decoder_layers")
        delattr(copied, "decoder_layers")
        copied.hidden_size = copied.hidden_size * 2  # an alias of d_model
        setattr(copied, "num_layers", value)
        return x * copied.d_model + copied.num_layers + config.hidden_size, hasattr(copied, "decoder_layers"), copied

    agree_across_sizes(fn, lambda: (AliasedConfig(),))


def test_a_changed_attribute_of_the_original_is_seen_on_the_next_call():
    def fn(x, settings):
        return x * copy.deepcopy(settings).scale + copy.deepcopy(settings).table["b"]["c"]

    compiled = compile_eager(fn, fullgraph=True)
    settings = Settings()
    x = torch.randn(4)
    assert_same(compiled(x, settings), fn(x, settings))
    settings.scale = 5.0
    settings.table["b"]["c"] = -1
    assert_same(compiled(x, settings), fn(x, settings))
    settings.new_attribute = 1  # another key in __dict__
    assert_same(compiled(x, settings), fn(x, settings))


def test_changing_ints_that_become_one_object_are_copied_without_recapturing():
    """deepcopy's memo looks up id() of every value, ints included: the ints are symbolic
    once they change, and equal small ints are one object (the interpreter's cache). Their
    identity is not guarded (it is the interpreter's choice), else the capture with two equal
    ints would hold a guard failing at once."""

    def fn(x, settings):
        copied = copy.deepcopy(settings)
        return x * copied.scale + copied.sizes[0] * copied.sizes[1]

    compiled = compile_eager(fn, fullgraph=True)
    for first, second in ((1, 5), (2, 7), (3, 3), (4, 4)):
        settings, x = Settings(sizes=[first, second]), torch.randn(4)
        assert_same(compiled(x, settings), fn(x, settings))
    assert captures(compiled) <= 2


def test_the_original_changed_in_the_function_before_the_copy_breaks():
    """Attribute writes wait in the side-effect log until the graph has run: the real
    `__dict__` does not hold them yet, so copying it then is refused, not answered stale."""

    def fn(x, settings):
        settings.scale = 7.0
        return x * copy.deepcopy(settings).scale

    compiled = compile_eager(fn)
    for size in (4, 4, 7):
        x = torch.randn(size)
        eager_settings, compiled_settings = Settings(), Settings()
        assert_same(compiled(x, compiled_settings), fn(x, eager_settings))
        assert state_of(compiled_settings) == state_of(eager_settings)
    assert any("__dict__" in b.reason for b in cache_of(compiled).compilation.breaks)


def test_a_plain_tensor_inside_is_cloned_in_the_graph():
    def fn(x, settings):
        copied = copy.deepcopy(settings)
        copied.weight.add_(1)
        return x * copied.weight + settings.weight

    def make():
        settings = Settings()
        settings.weight = torch.arange(4.0)
        return (settings,)

    compiled = compile_eager(fn, fullgraph=True)
    for _ in range(2):
        x = torch.randn(4)
        assert_same(compiled(x, *make()), fn(x, *make()))
    assert captures(compiled) == 1


def test_deepcopy_of_a_dict_of_tensors_hits_the_cache_with_new_tensors():
    # It used to break inside copy.py, whose frames then captured again on every call: the
    # memo they receive is keyed by the id()s of that call's objects.
    def fn(d):
        c = copy.deepcopy(d)
        c["a"].add_(1)
        return {k: v * 2 for k, v in c.items()}, c["a"] is d["a"]

    compiled = compile_eager(fn)
    for _ in range(3):
        d = {"a": torch.randn(4), "b": torch.randn(4, 2)}
        expected_d = {k: v.clone() for k, v in d.items()}
        assert_same(compiled(d), fn(expected_d))
        assert_same(d, expected_d, "argument after the call")
    assert captures(compiled) == 1
    assert not cache_of(compiled).compilation.breaks


def test_deepcopy_of_a_module_runs_natively_once_it_breaks_without_recapturing():
    # A Parameter's copy breaks the graph inside copy.py. Its frames, handed the memo keyed by
    # the id()s of that call's objects, were compiled on their own and captured again on every
    # call: the recompile limit was hit within one call (a warning eager never gives). Now
    # the copy.deepcopy call runs natively.
    import warnings

    def fn(m, x):
        twin = copy.deepcopy(m)
        with torch.no_grad():
            twin.weight.mul_(2)
        return m(x), twin(x)

    compiled = compile_eager(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for rows in (4, 4, 7):
            torch.manual_seed(0)
            m, x = torch.nn.Linear(3, 3), torch.randn(rows, 3)
            assert_same(compiled(m, x), fn(m, x))


@pytest.mark.parametrize("kind", ["requires_grad", "view", "view_made_inside", "attribute"])
def test_a_tensor_copy_can_not_be_a_clone_breaks_the_graph_with_a_reason(kind):
    # A copy of a leaf that requires grad is a new leaf; views copied through one memo share
    # a copied storage; a tensor's own attributes are copied too.
    def fn(x, d):
        if kind == "view_made_inside":
            d = {"a": d["a"], "b": d["a"][1:]}
        c = copy.deepcopy(d)
        c["b"].mul_(2) if not c["b"].requires_grad else None
        return x * c["a"] + c["b"].sum(), c["a"].requires_grad, getattr(c["a"], "tag", None)

    def make():
        base = torch.arange(4.0)
        d = {"a": base, "b": base[1:] if kind == "view" else torch.ones(3)}
        if kind == "requires_grad":
            d["a"] = base.requires_grad_()
        if kind == "attribute":
            base.tag = "t"
        return d

    compiled = compile_eager(fn)
    for _ in range(2):
        x = torch.randn(4)
        assert_same(compiled(x, make()), fn(x, make()))
    reasons = [b.reason for b in cache_of(compiled).compilation.breaks]
    assert any("deepcopy of" in r for r in reasons), reasons
    with pytest.raises(Exception, match="deepcopy of") as raised:
        compile_eager(fn, fullgraph=True)(torch.randn(4), make())
    assert "test_copy_module.py" in str(raised.value)


class WithReduce:
    def __init__(self, value):
        self.value = value

    def __reduce__(self):
        return (WithReduce, (self.value * 2,))


class Slotted:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class WithDeepcopy:
    def __init__(self, value):
        self.value = value

    def __deepcopy__(self, memo):
        return WithDeepcopy([v * 2 for v in self.value])


@pytest.mark.parametrize("cls", [WithReduce, WithDeepcopy])
def test_copy_protocol_methods_written_in_python_are_followed(cls):
    def fn(x, obj):
        return x + len(copy.deepcopy(obj).value)

    agree_across_sizes(fn, lambda: (cls([1, 2]),))


def test_slots_break_the_graph_and_copy_natively():
    def fn(x, obj):
        copied = copy.deepcopy(obj)
        copied.value.append(1)
        return x + len(copied.value) + len(obj.value)

    compiled = compile_eager(fn)
    for size in (4, 4, 7):
        x = torch.randn(size)
        assert_same(compiled(x, Slotted([1])), fn(x, Slotted([1])))
    assert any("__slots__" in b.reason for b in cache_of(compiled).compilation.breaks)


def test_id_of_a_container_passed_in_is_its_own():
    def fn(x, items, settings):
        return x + 1, id(items), id(settings), id(items) == id(items), id(items) == id(settings)

    compiled = compile_eager(fn, fullgraph=True)
    for size in (4, 4, 7):
        x, items, settings = torch.randn(size), [1], Settings()
        assert_same(compiled(x, items, settings), fn(x, items, settings))
    assert captures(compiled) == 2


def test_id_of_an_object_made_in_the_function_is_the_returned_objects():
    def fn(x):
        made = [x.shape[0]]
        return made, id(made)

    compiled = compile_eager(fn, fullgraph=True)
    made, number = compiled(torch.randn(4))
    assert number == id(made)


def test_arithmetic_on_an_id_breaks_the_graph():
    def fn(x, items):
        return x + 1, id(items) + 1

    compiled = compile_eager(fn)
    items = [1]
    x = torch.randn(3)
    assert_same(compiled(x, items), fn(x, items))
    with pytest.raises(Exception, match=r"id\(\) of list"):
        compile_eager(fn, fullgraph=True)(x, items)


def test_reading_dict_then_setting_an_attribute_breaks():
    """`obj.__dict__` of an object passed in is read as it is at the read: a later attribute
    write in the function would leave it stale, so that write breaks the graph."""

    def fn(x, settings):
        attributes = settings.__dict__
        settings.scale = 9.0
        return x * attributes["scale"]

    compiled = compile_eager(fn)
    for size in (4, 7):
        x = torch.randn(size)
        eager_settings, compiled_settings = Settings(), Settings()
        assert_same(compiled(x, compiled_settings), fn(x, eager_settings))
        assert state_of(compiled_settings) == state_of(eager_settings)
