"""Raising, re-raising and the exception chain, as CPython's test_raise, test_exception_variations
and test_baseexception check them (recast in our own words, each around tensor code; dynamo's
cpython/3_13 port of these files guided the choice): bare `raise` inside except, finally, a
nested function and a with-block, `raise ... from` a class, an instance or None (and
__suppress_context__ set back by hand), `raise` of a class whose __init__ raises or whose __new__
returns a non-exception, the implicit __context__ (not necessarily the last exception, cycles
broken when an exception is re-raised), try/except/else/finally in every combination with
returns and loops, exceptions escaping generators that were re-raising, BaseException
subclasses that an `except Exception` lets through, args/str/repr/with_traceback/add_note,
and the exception's identity kept from raise to except."""

import torch

from . import snippets


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


class Context:
    """A context manager that does nothing, so that `with Context(): raise` tests can use it."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Suppressing:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, t, v, tb):
        self.log.append(t.__name__ if t else None)
        return True


NS = {"torch": torch, "brk": brk, "Context": Context, "Suppressing": Suppressing}

RAISE = [
    # Bare raise: what it re-raises.
    ("bare_raise_in_except", "try:\n    try:\n        raise KeyError('k')\n    except KeyError:\n        x = x * 2\n        raise\nexcept KeyError as e:\n    return x, e.args"),
    ("bare_raise_after_inner_handled", "try:\n    try:\n        raise TypeError('outer')\n    except TypeError:\n        try:\n            raise KeyError('inner')\n        except KeyError:\n            pass\n        raise\nexcept Exception as e:\n    return x + 1, type(e).__name__, str(e)"),
    ("bare_raise_in_finally_of_except", "try:\n    try:\n        raise TypeError('foo')\n    except TypeError:\n        try:\n            raise KeyError('caught')\n        finally:\n            pass\nexcept KeyError as e:\n    return x - 1, str(e), type(e.__context__).__name__"),
    ("nested_function_bare_raise", "def again():\n    raise\ntry:\n    try:\n        raise TypeError('foo')\n    except TypeError:\n        again()\nexcept TypeError as e:\n    return x * 3, str(e)"),
    ("bare_raise_after_with", "try:\n    try:\n        raise TypeError('foo')\n    except TypeError:\n        with Context():\n            y = x + 1\n        raise\nexcept TypeError as e:\n    return y, str(e)"),
    ("bare_raise_after_with_caught_inside", "try:\n    try:\n        raise TypeError('foo')\n    except TypeError:\n        try:\n            with Context():\n                raise KeyError('caught')\n        except KeyError:\n            pass\n        raise\nexcept TypeError as e:\n    return x, str(e)"),
    ("bare_raise_outside_handler", "try:\n    raise\nexcept RuntimeError as e:\n    return x, type(e).__name__, str(e)"),
    ("raise_class_makes_instance", "try:\n    raise IndexError\nexcept IndexError as e:\n    return x, type(e).__name__, e.args"),
    ("raise_from_none_keeps_context", "try:\n    try:\n        raise TypeError('a')\n    except TypeError:\n        raise ValueError() from None\nexcept ValueError as e:\n    return x, type(e.__context__).__name__, e.__cause__ is None, e.__suppress_context__"),
    ("suppress_context_set_back", "try:\n    try:\n        try:\n            raise TypeError\n        except Exception:\n            raise ValueError from None\n    except ValueError as exc:\n        flags = (exc.__cause__ is None, exc.__suppress_context__)\n        exc.__suppress_context__ = False\n        raise exc\nexcept ValueError as e:\n    return x, flags, e.__suppress_context__, type(e.__context__).__name__"),
    ("raise_from_int_is_typeerror", "try:\n    raise IndexError from 5\nexcept TypeError as e:\n    return x, 'exception cause' in str(e)\nexcept IndexError:\n    return x, 'index'"),
    ("raise_from_class_instantiates", "try:\n    raise IndexError from KeyError\nexcept IndexError as e:\n    return x, type(e.__cause__).__name__, e.__cause__.args"),
    ("raise_from_instance_identity", "cause = KeyError('c')\ntry:\n    raise IndexError('i') from cause\nexcept IndexError as e:\n    return x, e.__cause__ is cause, e.__suppress_context__"),
    ("raise_tuple_is_typeerror", "try:\n    raise (IndexError, KeyError)\nexcept TypeError as e:\n    return x, 'BaseException' in str(e)"),
    ("raise_string_is_typeerror", "try:\n    raise 'foo'\nexcept TypeError:\n    return x + 2"),
    ("raise_tensor_is_typeerror", "try:\n    raise x\nexcept TypeError:\n    return x * 2"),
    ("assert_with_tuple_message", "try:\n    assert x.shape[0] < 0, (3,)\nexcept AssertionError as e:\n    return x, str(e), e.args"),
    ("assert_message_from_tensor_size", "try:\n    assert x.sum() > 1e9, f'sum of {x.shape[0]} items'\nexcept AssertionError as e:\n    return x, str(e)"),
    # __context__
    ("context_is_instance_raised", "ctx = IndexError('c')\ntry:\n    try:\n        raise ctx\n    except IndexError:\n        raise OSError('o')\nexcept OSError as e:\n    return x, e.__context__ is ctx"),
    ("context_from_class_raise", "try:\n    try:\n        raise IndexError\n    except IndexError:\n        raise OSError\nexcept OSError as e:\n    return x, type(e.__context__).__name__, e.__context__ is IndexError"),
    ("context_from_zero_division", "n = x.shape[0] - x.shape[0]\ntry:\n    try:\n        1 / n\n    except ZeroDivisionError:\n        raise OSError\nexcept OSError as e:\n    return x, type(e.__context__).__name__, str(e.__context__)"),
    ("context_from_name_error", "try:\n    try:\n        1 / 0\n    except ZeroDivisionError:\n        undefined_name_here\nexcept NameError as e:\n    return x, type(e.__context__).__name__"),
    ("no_context_when_finally_raises_after_success", "try:\n    try:\n        y = x + 1\n    finally:\n        raise OSError\nexcept OSError as e:\n    return y, e.__context__ is None"),
    ("context_when_finally_raises_after_error", "try:\n    try:\n        1 / 0\n    finally:\n        raise OSError\nexcept OSError as e:\n    return x, type(e.__context__).__name__"),
    ("context_from_exit_raising", "class CM:\n    def __enter__(self):\n        return self\n    def __exit__(self, t, v, tb):\n        raise NameError('from exit')\ntry:\n    with CM():\n        1 / 0\nexcept NameError as e:\n    return x, type(e.__context__).__name__, str(e)"),
    ("reraise_same_has_no_self_context", "try:\n    try:\n        1 / 0\n    except ZeroDivisionError as e:\n        raise e\nexcept ZeroDivisionError as e:\n    return x, e.__context__ is None"),
    ("reraise_cycle_broken", "try:\n    try:\n        undefined_name_here\n    except NameError as a:\n        try:\n            1 / 0\n        except ZeroDivisionError:\n            raise a\nexcept NameError as e:\n    return x, type(e.__context__).__name__, e.__context__.__context__ is None"),
    ("context_not_the_last_one", "ctx = Exception('context')\ntry:\n    raise ctx\nexcept Exception:\n    try:\n        raise Exception('caught')\n    except Exception:\n        pass\n    try:\n        raise Exception('new')\n    except Exception as exc:\n        raised = exc\nreturn x, raised.__context__ is ctx, str(raised)"),
    ("context_kept_after_del_generator", "def gen():\n    try:\n        yield x\n    finally:\n        pass\ng = gen()\nnext(g)\ntry:\n    try:\n        raise ValueError\n    except ValueError:\n        del g\n        raise KeyError\nexcept Exception as e:\n    return x, type(e.__context__).__name__"),
    ("exception_var_deleted_after_except", "e = 5\ntry:\n    raise KeyError('k')\nexcept KeyError as e:\n    pass\ntry:\n    return x, e\nexcept NameError:\n    return x, 'unbound'"),
    # Erroneous exception classes.
    ("exception_init_raises", "class MyExc(Exception):\n    def __init__(self):\n        raise RuntimeError('from init')\ntry:\n    raise MyExc\nexcept RuntimeError as e:\n    return x, str(e)"),
    ("exception_new_returns_object", "class MyExc(Exception):\n    def __new__(cls, *args):\n        return object()\ntry:\n    raise MyExc\nexcept TypeError:\n    return x, 'type error'"),
    ("cause_class_init_raises", "class MyExc(Exception):\n    def __init__(self):\n        raise RuntimeError('cause init')\ntry:\n    raise IndexError from MyExc\nexcept RuntimeError as e:\n    return x, str(e)"),
    # Generators re-raising.
    ("generator_yield_then_reraise", "def g():\n    try:\n        raise TypeError('foo')\n    except TypeError:\n        yield x * 2\n        raise\ngen = g()\na = next(gen)\ntry:\n    next(gen)\nexcept TypeError as e:\n    b = str(e)\ntry:\n    next(gen)\nexcept StopIteration:\n    c = 'stopped'\nreturn a, b, c"),
    ("generator_raise_context_from_caller", "def g():\n    yield 1\n    raise KeyError('g')\ngen = g()\nnext(gen)\ntry:\n    try:\n        raise ValueError('caller')\n    except ValueError:\n        next(gen)\nexcept KeyError as e:\n    return x, type(e.__context__).__name__"),
    # BaseException subclasses.
    ("base_exception_passes_except_exception", "class Stop(BaseException):\n    pass\ntry:\n    try:\n        raise Stop('s')\n    except Exception:\n        return x, 'wrong handler'\nexcept BaseException as e:\n    return x + 1, type(e).__name__"),
    ("keyboard_interrupt_caught_explicitly", "try:\n    raise KeyboardInterrupt\nexcept Exception:\n    return x, 'exception'\nexcept KeyboardInterrupt:\n    return x * 2, 'keyboard'"),
    ("system_exit_code", "try:\n    raise SystemExit(3)\nexcept SystemExit as e:\n    return x, e.code, e.args"),
    ("generator_exit_is_base", "return x, issubclass(GeneratorExit, Exception), issubclass(GeneratorExit, BaseException)"),
    ("exception_hierarchy_checks", "return x, [issubclass(c, LookupError) for c in (KeyError, IndexError, ValueError)], issubclass(ZeroDivisionError, ArithmeticError), issubclass(ModuleNotFoundError, ImportError)"),
    # args / str / repr / notes.
    ("args_of_various_arities", "out = []\nfor args in [(), (1,), (1, 'a'), (x.shape[0],)]:\n    e = Exception(*args)\n    out.append((e.args, str(e), repr(e)))\nreturn x, out"),
    ("key_error_str_quotes", "return x, str(KeyError('k')), str(KeyError()), str(KeyError('a', 'b'))"),
    ("args_reassigned", "e = ValueError('a')\ne.args = ('b', 2)\nreturn x, str(e), e.args"),
    ("exception_attribute_set", "try:\n    e = ValueError('v')\n    e.extra = x.shape[0]\n    raise e\nexcept ValueError as caught:\n    return x * caught.extra, caught.extra"),
    ("add_note_and_notes", "try:\n    e = ValueError('v')\n    e.add_note('first')\n    e.add_note(f'size {x.shape[0]}')\n    raise e\nexcept ValueError as caught:\n    return x, caught.__notes__"),
    ("with_traceback_returns_self", "e = ValueError('v')\nreturn x, e.with_traceback(None) is e"),
    ("oserror_errno_args", "e = OSError(2, 'missing')\nreturn x, e.errno, e.strerror, e.args"),
    ("unicode_error_fields", "try:\n    b'\\xff'.decode('utf-8')\nexcept UnicodeDecodeError as e:\n    return x, e.start, e.end, e.encoding"),
    ("stop_iteration_value", "e = StopIteration(7)\nreturn x, e.value, StopIteration().value"),
    ("exception_identity_kept", "saved = []\ntry:\n    e = KeyError('k')\n    saved.append(e)\n    raise e\nexcept KeyError as caught:\n    return x, caught is saved[0]"),
    ("user_exception_with_str", "class E(Exception):\n    def __init__(self, n):\n        super().__init__(n)\n        self.n = n\n    def __str__(self):\n        return f'E<{self.n}>'\ntry:\n    raise E(x.shape[0])\nexcept E as e:\n    return x, str(e), e.n, e.args"),
    ("user_exception_hierarchy_order", "class A(Exception):\n    pass\nclass B(A):\n    pass\nout = []\nfor cls in (A, B):\n    try:\n        raise cls()\n    except B:\n        out.append('B')\n    except A:\n        out.append('A')\nreturn x, out"),
    ("except_tuple_of_classes", "out = []\nfor exc in (KeyError, IndexError, ValueError):\n    try:\n        raise exc('m')\n    except (KeyError, IndexError) as e:\n        out.append(('lookup', type(e).__name__))\n    except Exception as e:\n        out.append(('other', type(e).__name__))\nreturn x, out"),
    ("except_class_from_variable", "which = (KeyError,) if x.shape[0] > 5 else (IndexError,)\ntry:\n    {}['a']\nexcept which:\n    return x, 'matched'\nexcept LookupError:\n    return x, 'fallback'"),
]
snippets("cpython/test_raise", "raise3", RAISE, namespace=NS)

# try/except/else/finally in every combination, as test_exception_variations walks them.
VARIATIONS = [
    ("try_except_else_finally_no_error", "log = []\ntry:\n    y = x + 1\nexcept Exception:\n    log.append('except')\nelse:\n    log.append('else')\nfinally:\n    log.append('finally')\nreturn y, log"),
    ("try_except_else_finally_error", "log = []\ntry:\n    raise Exception('e')\nexcept Exception:\n    log.append('except')\n    y = x * 2\nelse:\n    log.append('else')\nfinally:\n    log.append('finally')\nreturn y, log"),
    ("try_except_finally_error_in_except", "log = []\ntry:\n    try:\n        raise KeyError\n    except KeyError:\n        log.append('except')\n        raise ValueError\n    finally:\n        log.append('finally')\nexcept ValueError:\n    log.append('outer')\nreturn x, log"),
    ("error_in_else_not_caught_by_same_try", "log = []\ntry:\n    try:\n        y = x\n    except ValueError:\n        log.append('inner except')\n    else:\n        raise ValueError('from else')\nexcept ValueError as e:\n    log.append(str(e))\nreturn x, log"),
    ("error_in_finally_replaces", "try:\n    try:\n        raise KeyError('k')\n    finally:\n        raise ValueError('f')\nexcept Exception as e:\n    return x, type(e).__name__, type(e.__context__).__name__"),
    ("return_in_finally_swallows", "def inner():\n    try:\n        raise KeyError('k')\n    finally:\n        return x * 2\nreturn inner()"),
    ("return_in_try_finally_runs", "log = []\ndef inner():\n    try:\n        return x + 1\n    finally:\n        log.append('finally')\nreturn inner(), log"),
    ("finally_return_overrides_try_return", "def inner():\n    try:\n        return 'try'\n    finally:\n        return 'finally'\nreturn x, inner()"),
    ("break_in_finally_swallows", "out = []\nfor i in range(3):\n    try:\n        raise KeyError(i)\n    finally:\n        out.append(i)\n        break\nreturn x, out"),
    ("continue_in_finally", "out = []\nfor i in range(3):\n    try:\n        if i == 1:\n            raise KeyError(i)\n        out.append(('ok', i))\n    finally:\n        out.append(('f', i))\n        continue\nreturn x, out"),
    ("except_in_loop_continue", "total = x\nfor i in range(4):\n    try:\n        if i % 2:\n            raise ValueError(i)\n        total = total + i\n    except ValueError:\n        continue\nreturn total"),
    ("nested_try_inner_finally_outer_except", "log = []\ntry:\n    try:\n        log.append('body')\n        raise KeyError\n    finally:\n        log.append('inner finally')\nexcept KeyError:\n    log.append('outer except')\nreturn x, log"),
    ("except_star_free_nested_handlers", "log = []\ntry:\n    raise TypeError('t')\nexcept TypeError:\n    try:\n        raise ValueError('v')\n    except ValueError as e:\n        log.append(type(e.__context__).__name__)\nreturn x, log"),
    ("else_runs_only_without_error", "out = []\nfor v in (0, 1):\n    try:\n        if v:\n            raise KeyError\n    except KeyError:\n        out.append('except')\n    else:\n        out.append('else')\nreturn x, out"),
    ("tensor_op_error_caught_shape", "try:\n    y = x.view(3, -1) if x.shape[0] % 3 else x.view(3, -1) * 2\nexcept RuntimeError:\n    y = x.clone()\nreturn y"),
    ("tensor_op_error_caught_dim", "try:\n    return x.sum(dim=5)\nexcept IndexError as e:\n    return x.sum(), type(e).__name__"),
    ("error_after_side_effect_kept", "log = []\ntry:\n    log.append(x.shape[0])\n    x.add_(1)\n    raise KeyError\nexcept KeyError:\n    log.append('caught')\nreturn x, log"),
    ("exception_escapes_after_mutation", "x.mul_(2)\nraise ValueError('after mutation')"),
    ("exception_escapes_with_tensor_arg", "raise ValueError(x.shape[0], 'size')"),
    ("finally_mutates_on_escape", "try:\n    raise KeyError('k')\nfinally:\n    x.add_(3)"),
    ("suppressing_manager_log", "log = []\nwith Suppressing(log):\n    y = x + 1\n    raise KeyError('k')\nreturn y, log"),
    ("suppressing_manager_no_error", "log = []\nwith Suppressing(log):\n    y = x + 1\nreturn y, log"),
    ("except_with_break_in_loop", "out = []\nfor i in range(5):\n    try:\n        if i == 3:\n            raise StopIteration\n        out.append(i)\n    except StopIteration:\n        break\nreturn x, out"),
    ("raise_in_except_then_finally_order", "log = []\ntry:\n    try:\n        raise KeyError('a')\n    except KeyError:\n        log.append('except')\n        raise IndexError('b')\n    else:\n        log.append('else')\n    finally:\n        log.append('finally')\nexcept IndexError as e:\n    log.append(('outer', str(e)))\nreturn x, log"),
    ("break_across_graph_break_in_except", "out = []\nfor i in range(3):\n    try:\n        raise KeyError(i)\n    except KeyError:\n        brk()\n        out.append(i)\n        if i == 1:\n            break\nreturn x * len(out), out"),
    ("context_across_graph_break", "try:\n    try:\n        raise KeyError('a')\n    except KeyError:\n        y = x + 1\n        brk()\n        raise IndexError('b')\nexcept IndexError as e:\n    return y, type(e.__context__).__name__, str(e.__context__)"),
    ("bare_raise_across_graph_break", "try:\n    try:\n        raise TypeError('keep')\n    except TypeError:\n        brk()\n        raise\nexcept TypeError as e:\n    return x, str(e)"),
]
snippets("cpython/test_exception_variations", "excvar3", VARIATIONS, namespace=NS)
