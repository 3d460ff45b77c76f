"""A module's attributes are the globals of its functions: a STORE_GLOBAL in one of them is
what `module.name` reads afterwards in the same call, `module.name = v` is what they read with
LOAD_GLOBAL, and the store lands on the module the call was given."""

from __future__ import annotations

import types

import torch

from helpers import compile_eager

SOURCE = """
counter = 1


def bump():
    global counter
    counter += 1


def read():
    return counter


def create():
    global created
    created = 3
"""


def fresh_module():
    module = types.ModuleType("conformance_module_globals")
    exec(SOURCE, module.__dict__)  # noqa: S102
    return module


def test_attribute_read_sees_a_global_stored_by_the_modules_function():
    def fn(x, m):
        m.bump()
        return x + m.counter

    m = fresh_module()
    torch.testing.assert_close(compile_eager(fn)(torch.zeros(1), m), torch.full((1,), 2.0))
    assert m.counter == 2


def test_hasattr_sees_a_global_created_by_the_modules_function():
    def fn(x, m):
        before = hasattr(m, "created")
        m.create()
        return x + m.created, before, hasattr(m, "created")

    m = fresh_module()
    y, before, after = compile_eager(fn)(torch.zeros(1), m)
    assert (before, after) == (False, True) and m.created == 3
    torch.testing.assert_close(y, torch.full((1,), 3.0))


def test_modules_function_reads_an_attribute_set_on_the_module():
    def fn(x, m):
        m.counter = 10
        return x + m.read()

    m = fresh_module()
    torch.testing.assert_close(compile_eager(fn)(torch.zeros(1), m), torch.full((1,), 10.0))
    assert m.counter == 10


def test_attribute_set_lands_on_the_module_of_each_call():
    def fn(x, m):
        m.counter = m.counter + 5
        return x + m.counter

    compiled = compile_eager(fn)
    first, second = fresh_module(), fresh_module()
    compiled(torch.zeros(1), first)
    compiled(torch.zeros(1), second)
    assert (first.counter, second.counter) == (6, 6)


def test_namespace_read_after_a_store_sees_it():
    def fn(x, m):
        m.bump()
        m.create()
        return x + 1, vars(m)["counter"], "created" in vars(m), m.__dict__.get("counter")

    m = fresh_module()
    _, *answers = compile_eager(fn)(torch.zeros(1), m)
    assert answers == [2, True, 2]


def test_builtin_replaced_inside_is_what_later_lookups_find():
    import builtins

    def fn(x):
        original = builtins.isinstance
        try:
            builtins.isinstance = lambda obj, cls: False
            answer = isinstance(x, torch.Tensor)
        finally:
            builtins.isinstance = original
        return x + 1, answer

    _, answer = compile_eager(fn)(torch.zeros(1))
    assert answer is False and builtins.isinstance(1, int)


def test_namespace_changed_through_its_dict_is_what_attributes_and_globals_read():
    def fn(x, m):
        vars(m)["counter"] = 7
        return x + m.read(), m.counter

    m = fresh_module()
    y, counter = compile_eager(fn)(torch.zeros(1), m)
    assert counter == 7 and m.counter == 7
    torch.testing.assert_close(y, torch.full((1,), 7.0))
