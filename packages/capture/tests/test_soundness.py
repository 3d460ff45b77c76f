"""Never a silent wrong result: constructs that once gave an answer different from eager's
without any error (issue 16). Each test compares with eager on fresh inputs: the first call,
a cache hit with new values, and a call with another size (or with the input that must miss
the cache)."""

from __future__ import annotations

import collections
import functools
import typing

import pytest
import torch

from helpers import assert_same, compile_eager, run_and_compare


def agree(fn, *argument_sets, **options):
    """Compile `fn` once and compare each call with eager, in order."""
    compiled = compile_eager(fn, **options)
    for arguments in argument_sets:
        run_and_compare(compiled, fn, arguments)
    return compiled


def sizes(*shapes):
    return [(torch.randn(shape),) for shape in shapes]


class Plain:
    pass


class WithCall:
    def __call__(self, t):
        return t + 1


class WithCallInBase(WithCall):
    pass


@pytest.mark.parametrize(
    "obj", [Plain(), WithCall(), WithCallInBase(), [1], (1,), {"a": 1}, Plain, len, "s", 1.5, torch.nn.ReLU()],
    ids=lambda o: type(o).__name__,
)
def test_callable_follows_the_type_call_slot(obj):
    def fn(t, o):
        return t + (1 if callable(o) else 2)

    agree(fn, (torch.randn(3), obj), (torch.randn(3), obj), (torch.randn(5), obj))


def test_callable_entry_does_not_serve_a_non_callable():
    def fn(t, o):
        return t + (1 if callable(o) else 2)

    agree(fn, (torch.randn(3), Plain()), (torch.randn(3), WithCall()), (torch.randn(3), [2]))


class Overriding(torch.nn.Module):
    def forward(self, t):
        return t + 1

    def __call__(self, t):
        return t * 100


class OverridingThenForward(Overriding):
    def __call__(self, t):
        return super().__call__(t) - self.forward(t)


@pytest.mark.parametrize("cls", [Overriding, OverridingThenForward])
def test_module_call_override_runs(cls):
    module = cls()

    def fn(t):
        return module(t)

    agree(fn, *sizes(3, 3, 5))


def test_module_call_override_of_an_argument():
    def fn(m, t):
        return m(t)

    agree(fn, (Overriding(), torch.randn(3)), (torch.nn.Identity(), torch.randn(3)), (Overriding(), torch.randn(4)))


def test_dict_views_compare_and_count():
    def fn(t, d):
        return t + (1 if d.keys() == {"a", "b"} else 2) + len(d.values()) + (d.items() == {("a", 1), ("b", 2)})

    agree(fn, (torch.randn(3), {"a": 1, "b": 2}), (torch.randn(3), {"a": 1, "c": 2}), (torch.randn(4), {"b": 2, "a": 1}))


def test_dict_views_are_live_and_set_like():
    def fn(t, d):
        keys, values = d.keys(), d.values()
        d["z"] = 3
        total = sum(len(k) for k in keys) + sum(values)
        return (
            t + total + len(keys & {"a", "z"}) + len({"q"} | keys) + ("z" in keys) + (("a", 1) in d.items()),
            sorted(keys - {"a"}),
            sorted(keys ^ {"a", "w"}),
            keys != ["a"],
            values == values,  # noqa: PLR0124 (a values view equals only itself)
            d.values() == d.values(),
            list(d.items()),
            keys <= {"a", "b", "c", "z"},
        )

    agree(fn, (torch.randn(3), {"a": 1, "b": 2}), (torch.randn(3), {"a": 1, "b": 5}), (torch.randn(4), {"a": 1, "c": 2}))


def test_dict_view_escapes_live():
    def fn(t, d):
        return t * 2, d.keys(), d.items()

    compiled = compile_eager(fn)
    d = {"a": 1}
    _, keys, items = compiled(torch.randn(3), d)
    d["b"] = 2
    assert list(keys) == ["a", "b"] and list(items) == [("a", 1), ("b", 2)]


def test_set_iterates_in_the_real_order():
    def fn(t):
        out = []
        for item in {"x", "yy", "zzz", "abc", "q", "hello", "w"}:  # noqa: PLC0208 (the set's order is the point)
            out.append(item)  # noqa: PERF402 (a loop over the set is what is traced)
        return t + len(out[0]), out

    agree(fn, *sizes(3, 3, 4))


def test_hasattr_on_a_tensor_attribute_is_guarded():
    def fn(t):
        return t + (1 if hasattr(t, "foo") else 2)

    tagged = torch.randn(3)
    tagged.foo = 1
    agree(fn, (torch.randn(3),), (tagged,), (torch.randn(3),), (tagged,))


def test_tensor_instance_attributes_are_read_and_guarded():
    def fn(t):
        return t * getattr(t, "scale", 1) + t.bias_value

    def tagged(n, **attrs):
        x = torch.randn(n)
        x.__dict__.update(attrs)
        return (x,)

    agree(fn, tagged(3, bias_value=1), tagged(3, bias_value=2), tagged(3, bias_value=2, scale=3), tagged(4, bias_value=2))


def test_tensor_attribute_missing_raises_like_eager():
    def fn(t):
        return t + t.not_there

    compiled = compile_eager(fn)
    with pytest.raises(AttributeError):
        compiled(torch.randn(3))


@pytest.mark.parametrize(
    "call",
    [
        "isinstance(t, torch.Tensor, kw=1)",
        "isinstance(t)",
        "len()",
        "len([1], [2])",
        "getattr(t)",
        "hasattr(t, 'x', 1)",
        "max()",
        "[1, 2].index(2, kw=1)",
        "{}.keys(1)",
        "sorted([1], lambda x: x)",
        "callable()",
        "iter()",
        "len(5)",
        "list(5)",
        "torch.no_grad(1, 2)",
        "range('a')",
        "set([[]])",
        "{}[[]]",
        "{[1]: 2}",
        "getattr(t, 1)",
        "hasattr(t, None)",
        "isinstance(1, 2)",
        "issubclass(1, int)",
    ],
)
def test_builtins_called_wrongly_raise_what_eager_raises(call):
    fn = eval(f"lambda t: (t, {call})")
    compiled = compile_eager(fn)
    with pytest.raises(TypeError) as eager:
        fn(torch.randn(3))
    with pytest.raises(type(eager.value)):
        compiled(torch.randn(3))


@pytest.mark.parametrize(
    "call",
    [
        "[1, 2, 3, 2].index(2, 2)",
        "int('ff', 16)",
        "int('11', base=2)",
        "str(b'ab', 'ascii')",
        "list(enumerate(iterable=[1, 2]))",
        "list(enumerate([1, 2], start=3))",
        "torch.is_autocast_enabled(device_type='cpu')",
    ],
)
def test_builtin_forms_a_rule_does_not_model_run_natively(call):
    fn = eval(f"lambda t: t + len(str({call}))")
    agree(fn, *sizes(3, 3, 4))


def test_grad_mode_decorator_without_parentheses():
    def fn(t):
        @torch.no_grad
        def double(v):
            return v * 2

        return double(t)

    agree(fn, *[(torch.randn(n, requires_grad=True),) for n in (3, 3, 4)])


def test_typing_annotations_do_not_change_guards():
    def fn(t, d: typing.Dict[str, int], n: typing.Optional[int] = None):  # noqa: UP006, UP045 (typing is the point)
        s = t.sum()
        print("break")
        return t + d["a"] + s + (n or 0)

    agree(fn, (torch.randn(3), {"a": 1}), (torch.randn(3), {"a": 5}), (torch.randn(3), {"a": 5}, 2), (torch.randn(4), {"b": 1, "a": 1}))


def test_defaultdict_across_a_graph_break():
    def fn(t, d):
        s = t.sum()
        print("break")
        d["seen"] += 1
        return t + d["a"] + s

    agree(
        fn,
        (torch.randn(3), collections.defaultdict(int, a=1)),
        (torch.randn(3), collections.defaultdict(int, a=2)),
        (torch.randn(4), collections.defaultdict(int, a=torch.ones(4))),
    )


class ReadOnlyMap(collections.abc.Mapping):
    def __init__(self, **items):
        self._items = items

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)


def test_dict_of_a_custom_mapping_goes_through_keys_and_getitem():
    mapping = ReadOnlyMap(a=1, b=2)

    def fn(t):
        return t + dict(mapping)["a"] + {**mapping}["b"]

    agree(fn, *sizes(3, 3, 4))


def test_double_star_of_a_custom_mapping():
    mapping = ReadOnlyMap(a=1, b=2)

    def fn(t):
        def inner(a=0, b=0, c=0):
            return a * 10 + b + c

        return t + inner(**mapping)

    agree(fn, *sizes(3, 3, 4))


class Affine:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, t, shift=0.0):
        return t * self.scale + shift


@pytest.mark.parametrize(
    "target",
    [
        Affine(3.0),
        functools.partial(torch.add, alpha=2),
        functools.partial(lambda a, b: a - b, torch.ones(1)),
        torch.sin,
        torch.Tensor.relu,
        abs,
    ],
    ids=["callable object", "partial of torch.add", "partial of a lambda", "torch.sin", "Tensor.relu", "abs"],
)
def test_any_callable_compiles(target):
    compiled = compile_eager(target)
    binary = isinstance(target, functools.partial) and not target.args
    for t in (torch.randn(3), torch.randn(3), torch.randn(5)):
        arguments = (t, t) if binary else (t,)
        torch.testing.assert_close(compiled(*arguments), target(*arguments))


def test_namedtuple_made_inside_the_compiled_function_across_a_break():
    # collections.namedtuple breaks inside (exec of the class body): its resume functions
    # take its locals `_tuple`, `_map` as parameters, which no generated name may shadow.
    def fn(t):
        Point = collections.namedtuple("Point", "a b")
        p = Point(t, 1)
        print("break")
        return p.a + p.b

    agree(fn, *sizes(3, 3, 4))


def test_entry_names_do_not_shadow_parameters():
    def fn(outs, _v0, _s1, _new, _tuple):
        _tuple.append(outs.sum())
        print("break")
        return outs + _v0 * _s1, tuple(_tuple), _new

    agree(fn, *[(torch.randn(n), torch.randn(n), 2, {"k": 1}, [1]) for n in (3, 3, 4)])


def test_class_builtins_are_not_the_metaclass_methods():
    def fn(t):
        pair = tuple.__new__(tuple, (t, t * 2))
        keys = dict.fromkeys(["a", "b"], 0)
        return pair[1] + len(keys)

    agree(fn, *sizes(3, 3, 4))


@pytest.mark.parametrize("rebind", ["before", "after"])
def test_closure_rebound_around_a_break(rebind):
    def fn(t):
        h = lambda v: v + 1
        def g(v):
            return h(v)

        a = g(t)
        if rebind == "before":
            h = lambda v: v * 10
        print("break")
        if rebind == "after":
            h = lambda v: v * 10
        return g(a)

    agree(fn, *sizes(3, 3, 4))


def test_partial_of_a_closure_across_a_break():
    def fn(t):
        k = 3

        def inner(a, b):
            return a * b + k

        p = functools.partial(inner, t)
        print("break")
        k = 5
        return p(2)

    agree(fn, *sizes(3, 3, 4))


def test_cell_written_after_a_break_is_the_calls_own_cell():
    def fn(n):
        print("break")
        k = n + 1  # a cell variable, written in the resume function
        return lambda v: v + k

    compiled = compile_eager(fn)
    for t, n in ((torch.randn(3), 2), (torch.randn(3), 2), (torch.randn(4), 5)):
        torch.testing.assert_close(compiled(n)(t), fn(n)(t))


MEMBERS = {1, 2}


def test_a_global_set_mutated_between_calls():
    def fn(t):
        return t + (3 in MEMBERS) + len(MEMBERS)

    compiled = compile_eager(fn)
    try:
        for change in (None, 3, 4):
            if change is not None:
                MEMBERS.add(change)
            t = torch.randn(3)
            torch.testing.assert_close(compiled(t), fn(t))
    finally:
        MEMBERS.difference_update({3, 4})


def test_hasattr_on_an_object_argument_is_guarded():
    def fn(t, o):
        return t + hasattr(o, "w")

    tagged = Plain()
    tagged.w = 1
    agree(fn, (torch.randn(3), Plain()), (torch.randn(3), tagged), (torch.randn(3), Plain()))


def test_length_and_truth_of_a_c_container_argument_are_guarded():
    def fn(t, q):
        return t + len(q) + bool(q)

    agree(fn, *[(torch.randn(3), collections.deque(range(n))) for n in (1, 2, 0, 2)])


def test_mutable_default_argument_changed_between_calls():
    def helper(v, cache={}):  # noqa: B006 (the mutable default is the point)
        return v + len(cache)

    def fn(t):
        return helper(t)

    compiled = compile_eager(fn)
    for step in range(3):
        if step == 1:
            helper.__defaults__[0]["a"] = 1
        if step == 2:
            helper.__defaults__ = ({"a": 1, "b": 2},)
        t = torch.randn(3)
        torch.testing.assert_close(compiled(t), fn(t))


def test_list_appended_while_iterated():
    def fn(t, items):
        for v in items:
            if len(items) < 5:
                items.append(v + 1)
        return t + sum(items)

    agree(fn, (torch.randn(3), [1]), (torch.randn(3), [2]), (torch.randn(4), [1, 2]))


def test_list_sorted_while_iterated_across_a_break():
    def fn(t, items):
        seen = []
        for v in items:
            items.sort(reverse=True)
            seen.append(v)
        return t, seen

    agree(fn, (torch.randn(3), [1, 3, 2]), (torch.randn(3), [5, 4, 6]), (torch.randn(4), [0, 9, 1]))


def _grow_dict(t):
    d = {"a": 1}
    for k in d:
        d[k + "x"] = 1
    return t


def _grow_set(t):
    s = {1, 2}
    for v in s:
        s.add(v + 5)
    return t


@pytest.mark.parametrize("fn", [_grow_dict, _grow_set])
def test_dict_or_set_growing_while_iterated_raises(fn):
    with pytest.raises(RuntimeError):
        fn(torch.randn(3))
    with pytest.raises(RuntimeError):
        compile_eager(fn)(torch.randn(3))


class Flagged:
    flag = 1


def test_class_attribute_read_through_type_is_guarded():
    def fn(t, o):
        return t + type(o).flag + o.__class__.flag

    compiled = compile_eager(fn)
    try:
        for flag in (1, 1, 5):
            Flagged.flag = flag
            t = torch.randn(3)
            torch.testing.assert_close(compiled(t, Flagged()), fn(t, Flagged()))
    finally:
        Flagged.flag = 1


def test_getattr_default_on_an_object_argument_is_guarded():
    def fn(t, o):
        return t + getattr(o, "w", 0)

    tagged = Plain()
    tagged.w = 1
    agree(fn, (torch.randn(3), Plain()), (torch.randn(3), tagged), (torch.randn(4), Plain()))


def test_hasattr_on_a_class_and_a_function_is_guarded():
    class Holder:
        pass

    def marked(v):
        return v

    def fn(t):
        return t + hasattr(Holder, "extra") + hasattr(marked, "tag")

    compiled = compile_eager(fn)
    for step in range(3):
        if step == 1:
            Holder.extra = 1
        if step == 2:
            marked.tag = True
        t = torch.randn(3)
        torch.testing.assert_close(compiled(t), fn(t))


def test_compiling_a_module_that_overrides_call_runs_the_override():
    module = OverridingThenForward()
    compiled = compile_eager(module)
    for t in (torch.randn(3), torch.randn(3), torch.randn(4)):
        torch.testing.assert_close(compiled(t), module(t))


def _counting(items):
    for i in range(3):
        items.append(i)
        yield i


def _counting_with_break(items):
    for i in range(3):
        print("break")
        items.append(i)
        yield i


@pytest.mark.parametrize("producer", [_counting, _counting_with_break])
def test_generator_steps_interleave_with_the_loop(producer):
    def fn(t):
        items, seen = [], []
        for v in producer(items):
            seen.append(len(items) + v)
        return t, seen

    agree(fn, *sizes(3, 3, 4))


def test_generator_expression_sees_later_appends():
    def fn(t, items):
        doubled = (v * 2 for v in items)
        items.append(3)
        return t, list(doubled)

    agree(fn, (torch.randn(3), [1, 2]), (torch.randn(3), [1, 2]), (torch.randn(4), [5]))


def test_value_reached_through_a_container_the_entry_changes():
    # In the resume function `x` is first met as `d["k"]`; the entry replays the update of d
    # and must still return the x it was given.
    def fn(x, d):
        d["k"] = x
        print("break")
        d.update(k=x * 2)
        return x

    agree(fn, *[(torch.randn(n), {"a": 1}) for n in (3, 3, 4)])


def test_map_zip_filter_enumerate_are_lazy():
    def fn(t, items):
        seen = []

        def record(v):
            seen.append(v)
            return v * 2

        mapped, zipped = map(record, items), zip(items, items)
        numbered, kept = enumerate(items, 5), filter(None, items)
        items.append(3)
        interleaved = [len(seen) for _ in mapped]
        return t, interleaved, list(zipped), list(numbered), list(kept)

    agree(fn, (torch.randn(3), [1, 0]), (torch.randn(3), [1, 0]), (torch.randn(4), [2]))


def test_zip_across_a_break_in_its_loop():
    def fn(t, items):
        total = t
        for a, b in zip(items, items[1:]):  # noqa: RUF007 (zip is what is traced)
            print("break")
            items.append(a)
            total = total + a * b
        return total

    agree(fn, (torch.randn(3), [1, 2, 3]), (torch.randn(3), [1, 2, 3]), (torch.randn(4), [2, 2]))


def test_id_of_an_input_is_its_own():
    def fn(t, o, items):
        return t, id(o), id(items), id(o) == id(o)

    compiled = compile_eager(fn)
    for o, items in ((Plain(), [1]), (Plain(), [1]), (Plain(), [2, 3])):
        t = torch.randn(3)
        assert_same(compiled(t, o, items), fn(t, o, items))


class _Slotted:
    __slots__ = ("scale",)

    def __init__(self, scale):
        self.scale = scale


def _two_parameters(a, b):
    return a


def test_attributes_a_class_computes_are_read_from_objects_passed_in():
    """A slot and a C-computed field (`inspect.Signature.parameters` reads its `_parameters`
    slot; HF's apply_chunking_to_forward does this) of a real object are read from the object,
    guarded, not refused."""
    import inspect

    def fn(x, obj):
        return x * obj.scale + len(inspect.signature(_two_parameters).parameters)

    compiled = compile_eager(fn, fullgraph=True)
    for scale in (2.0, 2.0, 3.0):
        x = torch.randn(4)
        run_and_compare(compiled, fn, (x, _Slotted(scale)))
