"""Exceptions inside compiled code: CPython's test_exceptions / test_raise /
test_exception_variations / test_baseexception (raise and catch, else/finally ordering,
re-raise, chaining with __cause__ and __context__, exception attributes and args, user
exception classes, exceptions from builtins) and dynamo's test_exceptions (try/except around
tensor code, exceptions escaping the compiled function, raising from nested calls)."""

import torch

from . import snippets


class MyError(Exception):
    def __init__(self, code):
        super().__init__(f"code {code}")
        self.code = code


class SubError(MyError):
    pass


def raises_value_error(t):
    raise ValueError("bad value")


def nested_raise(t, depth):
    if depth == 0:
        raise KeyError("deep")
    return nested_raise(t * 2, depth - 1)


NS = {"torch": torch, "MyError": MyError, "SubError": SubError, "raises_value_error": raises_value_error,
      "nested_raise": nested_raise}

EXC = [
    ("raise_escapes", "y = x + 1\nraise ValueError('escape')"),
    ("raise_class_not_instance", "raise RuntimeError"),
    ("raise_non_exception_typeerror", "raise 5"),
    ("catch_own_raise", "try:\n    raise ValueError('v')\nexcept ValueError:\n    x = x + 1\nreturn x"),
    ("catch_by_base_class", "try:\n    raise KeyError('k')\nexcept LookupError:\n    return x - 1\nreturn x"),
    ("catch_tuple_of_types", "try:\n    [][1]\nexcept (KeyError, IndexError):\n    return x * 2\nreturn x"),
    ("except_order_first_match", "try:\n    raise SubError(3)\nexcept MyError as e:\n    return x + e.code\nexcept SubError:\n    return x\n"),
    ("uncaught_type_passes_through", "try:\n    raise TypeError('t')\nexcept ValueError:\n    return x\n"),
    ("else_runs_without_exception", "log = []\ntry:\n    y = x + 1\nexcept ValueError:\n    log.append('except')\nelse:\n    log.append('else')\nreturn y, log"),
    ("else_skipped_with_exception", "log = []\ntry:\n    raise ValueError\nexcept ValueError:\n    log.append('except')\nelse:\n    log.append('else')\nreturn x, log"),
    ("finally_runs_on_return", "log = []\ndef g():\n    try:\n        return x + 1\n    finally:\n        log.append('fin')\nreturn g(), log"),
    ("finally_runs_on_exception", "log = []\ntry:\n    try:\n        raise ValueError\n    finally:\n        log.append('fin')\nexcept ValueError:\n    log.append('caught')\nreturn x, log"),
    ("finally_return_overrides", "def g():\n    try:\n        return 1\n    finally:\n        return 2\nreturn x + g()"),
    ("finally_return_swallows_exception", "def g():\n    try:\n        raise ValueError\n    finally:\n        return 3\nreturn x + g()"),
    ("bare_reraise", "try:\n    try:\n        raise KeyError('a')\n    except KeyError:\n        raise\nexcept KeyError as e:\n    return x + len(e.args)\n"),
    ("reraise_escapes", "try:\n    raise IndexError('i')\nexcept IndexError:\n    x = x + 1\n    raise"),
    ("raise_from_sets_cause", "try:\n    try:\n        raise KeyError('a')\n    except KeyError as e:\n        raise ValueError('b') from e\nexcept ValueError as e:\n    return x, type(e.__cause__).__name__, e.__suppress_context__\n"),
    ("implicit_context", "try:\n    try:\n        raise KeyError('a')\n    except KeyError:\n        raise ValueError('b')\nexcept ValueError as e:\n    return x, type(e.__context__).__name__, e.__cause__ is None\n"),
    ("raise_from_none", "try:\n    try:\n        raise KeyError('a')\n    except KeyError:\n        raise ValueError('b') from None\nexcept ValueError as e:\n    return x, e.__suppress_context__, e.__cause__\n"),
    ("exception_args", "try:\n    raise ValueError(1, 'two')\nexcept ValueError as e:\n    return x + e.args[0], e.args\n"),
    ("exception_str", "try:\n    raise ValueError('msg')\nexcept ValueError as e:\n    return x, str(e), repr(e)\n"),
    ("exception_name_unbound_after_except", "try:\n    raise ValueError\nexcept ValueError as e:\n    pass\ntry:\n    e\nexcept NameError:\n    return x - 1\nreturn x"),
    ("user_exception_attributes", "try:\n    raise MyError(7)\nexcept MyError as e:\n    return x + e.code, str(e)\n"),
    ("user_exception_escapes", "raise SubError(2)"),
    ("exception_from_nested_call", "try:\n    raises_value_error(x)\nexcept ValueError as e:\n    return x * 3, str(e)\n"),
    ("exception_from_deep_recursion", "try:\n    nested_raise(x, 3)\nexcept KeyError:\n    return x + 5\n"),
    ("exception_escapes_from_nested_call", "y = x.sin()\nreturn raises_value_error(y)"),
    ("zero_division_caught", "try:\n    v = 1 / 0\nexcept ZeroDivisionError:\n    v = -1\nreturn x + v"),
    ("attribute_error_caught", "try:\n    v = x.not_an_attribute\nexcept AttributeError:\n    v = 2\nreturn x + v"),
    ("hasattr_uses_attribute_error", "return x + hasattr(x, 'shape') + hasattr(x, 'nope')"),
    ("getattr_default", "return x + getattr(x, 'nope', 3)"),
    ("type_error_from_call", "try:\n    len(5)\nexcept TypeError:\n    return x + 1\n"),
    ("isinstance_of_exception_instance", "e = ValueError('v')\nreturn x + isinstance(e, Exception) + isinstance(e, LookupError)"),
    ("issubclass_exceptions", "return x + issubclass(KeyError, LookupError) + issubclass(StopIteration, Exception)"),
    ("exception_object_created_not_raised", "e = RuntimeError('r')\nreturn x, e.args"),
    ("exception_in_loop_continue", "total = 0\nfor v in [1, 0, 2]:\n    try:\n        total += 10 // v\n    except ZeroDivisionError:\n        continue\nreturn x + total"),
    ("exception_in_loop_break", "for v in [1, 0, 2]:\n    try:\n        x = x / v\n    except ZeroDivisionError:\n        break\nreturn x"),
    ("nested_try_inner_handles", "log = []\ntry:\n    try:\n        raise KeyError\n    except KeyError:\n        log.append('inner')\nexcept KeyError:\n    log.append('outer')\nreturn x, log"),
    ("nested_try_outer_handles", "log = []\ntry:\n    try:\n        raise KeyError\n    except ValueError:\n        log.append('inner')\nexcept KeyError:\n    log.append('outer')\nreturn x, log"),
    ("exception_raised_in_except_clause", "try:\n    try:\n        raise KeyError\n    except KeyError:\n        raise ValueError\nexcept ValueError:\n    return x + 1\n"),
    ("exception_raised_in_finally_replaces", "try:\n    try:\n        raise KeyError\n    finally:\n        raise ValueError\nexcept ValueError as e:\n    return x, type(e.__context__).__name__\n"),
    ("assert_passes", "assert x.shape[0] > 0\nreturn x + 1"),
    ("assert_fails", "assert x.shape[0] < 0, 'negative size'\nreturn x"),
    ("assert_fails_caught", "try:\n    assert False, 'm'\nexcept AssertionError as e:\n    return x, str(e)\n"),
    ("tensor_op_error_caught", "try:\n    y = x @ torch.ones(3, 3)\nexcept RuntimeError:\n    y = x * 2\nreturn y"),
    ("tensor_op_error_escapes", "return x.view(3, 5)"),
    ("tensor_shape_check_raise", "if x.shape[0] > 5:\n    raise ValueError('too long')\nreturn x * 2"),
    ("try_except_around_tensor_ops", "try:\n    y = x.sin() * 2\nexcept Exception:\n    y = x\nreturn y"),
    ("exception_group_like_list_of_errors", "errors = []\nfor v in (1, 'a', 2):\n    try:\n        x = x + v\n    except TypeError as e:\n        errors.append(type(e).__name__)\nreturn x, errors"),
    ("stopiteration_as_exception", "try:\n    next(iter([]))\nexcept StopIteration:\n    return x + 1\n"),
    ("keyboardinterrupt_not_caught_by_exception", "try:\n    try:\n        raise KeyboardInterrupt\n    except Exception:\n        return x\nexcept BaseException as e:\n    return x + 1, type(e).__name__\n"),
    ("with_traceback_returns_self", "e = ValueError('v')\nreturn x + (e.with_traceback(None) is e)"),
    ("exception_equality_identity", "a = ValueError('v')\nb = ValueError('v')\nreturn x + (a == b) + (a == a)"),
    ("raise_in_lambda_via_generator_throw", "def gen():\n    yield 1\ng = gen()\nnext(g)\ntry:\n    g.throw(ValueError('v'))\nexcept ValueError:\n    return x + 1\n"),
    ("try_finally_tensor_mutation", "y = x.clone()\ntry:\n    y.add_(1)\nfinally:\n    y.mul_(2)\nreturn y"),
    ("add_note", "try:\n    e = ValueError('v')\n    e.add_note('note')\n    raise e\nexcept ValueError as err:\n    return x, err.__notes__\n"),
    ("oserror_errno_args", "e = OSError(2, 'missing')\nreturn x + e.errno, e.strerror"),
    ("unicode_error_type", "try:\n    b'\\xff'.decode('utf-8')\nexcept UnicodeDecodeError as e:\n    return x + 1, e.reason\n"),
    ("keyerror_str_repr", "try:\n    {}['k']\nexcept KeyError as e:\n    return x, str(e)\n"),
    ("nameerror_unbound_local", "def g():\n    if False:\n        v = 1\n    return v\ntry:\n    g()\nexcept UnboundLocalError:\n    return x + 1\n"),
]
snippets("cpython/test_exceptions", "exceptions", EXC, namespace=NS)

DYNAMO_EXC = [
    ("raise_after_graph_ops", "y = x.cos()\nif y.shape[0] > 0:\n    raise RuntimeError('after ops')\nreturn y"),
    ("catch_then_continue_graph", "y = x * 2\ntry:\n    raise ValueError\nexcept ValueError:\n    y = y + 1\nreturn y.sin()"),
    ("exception_in_inlined_method", "class M(torch.nn.Module):\n    def forward(self, t):\n        raise NotImplementedError('abstract')\ntry:\n    M()(x)\nexcept NotImplementedError:\n    return x + 1\n"),
    ("exception_variable_deleted", "try:\n    raise KeyError\nexcept KeyError as err:\n    pass\nreturn x + ('err' in dir())"),
    ("catch_and_return_exception_object", "try:\n    raise ValueError('v', 1)\nexcept ValueError as e:\n    return x, e\n"),
    ("raise_user_exception_with_tensor_arg", "raise MyError(x.shape[0])"),
    ("exception_swallowed_in_finally_with_tensor_return", "def g(t):\n    try:\n        raise ValueError\n    finally:\n        return t * 3\nreturn g(x)"),
    ("except_star_like_isinstance_dispatch", "err = KeyError('k')\nkind = 'lookup' if isinstance(err, LookupError) else 'other'\nreturn x, kind"),
    ("sys_exc_info_inside_handler", "import sys\ntry:\n    raise ValueError\nexcept ValueError:\n    t = sys.exc_info()[0]\nreturn x, t.__name__"),
    ("sys_exc_info_after_handler", "import sys\ntry:\n    raise ValueError\nexcept ValueError:\n    pass\nreturn x, sys.exc_info()[0]"),
    ("getattr_missing_raises", "return getattr(x, 'missing_attr')"),
    ("try_in_loop_with_tensor_accum", "acc = x * 0\nfor i in range(4):\n    try:\n        if i == 2:\n            raise ValueError\n        acc = acc + i\n    except ValueError:\n        acc = acc - 10\nreturn acc"),
    ("raise_valueerror_in_generator_consumer", "def gen():\n    yield 1\n    raise ValueError('g')\ntry:\n    list(gen())\nexcept ValueError:\n    return x + 1\n"),
    ("not_implemented_binop_fallback", "class A:\n    def __add__(self, o):\n        return NotImplemented\n    def __radd__(self, o):\n        return 5\nreturn x + (A() + A() if False else 1 + A())"),
    ("binop_both_not_implemented_raises", "class A:\n    def __add__(self, o):\n        return NotImplemented\nreturn x, A() + A()"),
]
snippets("dynamo/test_exceptions", "exceptions_dynamo", DYNAMO_EXC, namespace=NS)
