"""Cases modelled on dynamo's test_exceptions (recast in our own words): raising and catching
around tensor ops (a tuple of types, several except clauses, finally, else, a loop with an
early return), exceptions raised by callees and re-raised, custom exceptions with arguments,
`__getattr__` chains that raise AttributeError (a plain class, an nn.Module deferring to its
base), hasattr through them, StopIteration driving a hand-written zip_longest, KeyError from a
dict lookup and from a Mapping re-raised `from None`, dict.pop in a try (inspect.bind's
pattern), GeneratorExit (not an Exception), and the `__context__` / `__cause__` /
`__suppress_context__` chains CPython sets in try/except/finally, cycles included."""

import contextlib

import torch

from . import snippets


class CustomException(Exception):
    pass


class CustomExceptionWithArgs(Exception):
    def __init__(self, a, b=None):
        self.a = a
        self.b = b


class A:
    def __init__(self):
        self._b = 20

    def __getattr__(self, name):
        fixed_name = "_" + name
        if fixed_name in self.__dict__:
            return self.__dict__[fixed_name]
        raise AttributeError(f"{name} absent")


class B(A):
    def __init__(self):
        self.a = 10

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return 30


class Mock:
    def __init__(self):
        self.a = 5

    def __getattr__(self, name):
        if name != "a":
            raise AttributeError("missing")
        return self.__dict__["a"]


class MyMapping:
    def __init__(self, d):
        self._d = d

    def __getitem__(self, key):
        try:
            value = self._d[key]
        except KeyError:
            raise KeyError(key) from None
        return value


def mapping_get(obj, key, value=None):
    try:
        return obj.__getitem__(key)
    except KeyError:
        return value


class GetattrModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_parameter("a", torch.nn.Parameter(torch.ones(4) * 2))

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "a_copy":
                return self.a
            raise

    def forward(self, x):
        return x * self.a * self.a_copy


def zip_longest(*iterables, fillvalue=None):
    iterators = [iter(it) for it in iterables]
    result = []
    while True:
        for it in iterators:
            try:
                value = next(it)
            except StopIteration:
                result.append(fillvalue)
                return result
            result.append(value)


def raises_type_error(x, k=None):
    if k:
        raise TypeError("error")
    return x.sin()


def reraising(x):
    try:
        x = torch.cos(x)
        raise NotImplementedError("Not implemented")
    except NotImplementedError:
        x = torch.sigmoid(x)
        raise


@contextlib.contextmanager
def converting():
    try:
        yield
    except BaseException:
        raise ValueError  # noqa: B904


@contextlib.contextmanager
def nothing():
    try:
        yield
    finally:
        pass


NS = {
    "torch": torch, "CustomException": CustomException, "CustomExceptionWithArgs": CustomExceptionWithArgs,
    "B": B, "Mock": Mock, "MyMapping": MyMapping, "mapping_get": mapping_get, "zip_longest": zip_longest,
    "raises_type_error": raises_type_error, "reraising": reraising, "converting": converting, "nothing": nothing,
}

EXCEPTIONS = [
    ("raise_caught_by_exception", "x = torch.cos(x)\ntry:\n    x = torch.sin(x)\n    raise NotImplementedError\nexcept Exception:\n    x = torch.sigmoid(x)\nreturn x"),
    ("raise_caught_by_tuple", "x = torch.cos(x)\ntry:\n    x = torch.sin(x)\n    raise NotImplementedError\nexcept (NotImplementedError, AttributeError):\n    x = torch.sigmoid(x)\nreturn x"),
    ("second_clause_then_finally", "x = torch.cos(x)\ntry:\n    x = torch.sin(x)\n    raise NotImplementedError('Not implemented')\nexcept AssertionError:\n    x = torch.sigmoid(x)\nexcept NotImplementedError:\n    x = torch.cos(x)\nfinally:\n    x = torch.cos(x)\nreturn x"),
    ("loop_early_return_with_handler", "for i in range(10):\n    if i == 5:\n        return x\n    try:\n        x = torch.sin(x)\n        raise NotImplementedError\n    except Exception:\n        x = torch.sigmoid(x)\nreturn x"),
    ("nested_raise_in_handler", "x = torch.cos(x)\ntry:\n    x = torch.sin(x)\n    raise NotImplementedError('Not implemented')\nexcept NotImplementedError:\n    x = torch.sigmoid(x)\n    try:\n        x = torch.cos(x)\n        raise AssertionError\n    except AssertionError:\n        x = torch.cos(x)\nreturn x"),
    ("context_manager_converts_exception", "z = 0\nwith nothing():\n    try:\n        with converting():\n            raise IndexError\n    except ValueError:\n        z = 1\n    except IndexError:\n        z = 2\nreturn x + z"),
    ("else_clause_after_call", "def gn(t):\n    return torch.cos(t)\nx = torch.cos(x)\ntry:\n    x = torch.sin(x)\n    x = gn(x)\nexcept Exception:\n    x = torch.sigmoid(x)\nelse:\n    x = torch.cos(x)\nreturn x"),
    ("bare_reraise_from_callee_caught", "try:\n    x = torch.cos(x)\n    reraising(x)\nexcept Exception:\n    pass\nreturn x"),
    ("bare_reraise_from_callee_escapes", "reraising(x)\nreturn x"),
    ("raise_inside_no_grad_block", "x = torch.cos(x)\ntry:\n    with torch.no_grad():\n        x = torch.sin(x)\n        raise NotImplementedError('Not implemented')\nexcept NotImplementedError:\n    x = torch.sigmoid(x)\nreturn x, torch.is_grad_enabled(), x.requires_grad", {"make_args": lambda n: (torch.randn(n, requires_grad=True),)}),
    ("raised_from_child_skips_rest", "def gn():\n    raise NotImplementedError('foo')\nx = torch.cos(x)\ntry:\n    x = torch.sin(x)\n    gn()\n    x = torch.sin(x)\nexcept Exception:\n    x = torch.sigmoid(x)\nreturn x"),
    ("keyword_call_raises_then_dict_loop", "d = {'a': x}\ntry:\n    raises_type_error(x, k=True)\nexcept Exception:\n    y = 0\n    for _, b in d.items():\n        y += b.sum()\nreturn y"),
    ("local_custom_exception", "class Exc(Exception):\n    pass\ntry:\n    raise Exc\nexcept Exc:\n    return x.sin()\nexcept Exception:\n    return x.cos()"),
    ("local_custom_exception_args", "class Exc(Exception):\n    pass\ntry:\n    raise Exc(1, 2.0)\nexcept Exc as e:\n    return x.sin() + e.args[0] + e.args[1], e.args\nexcept Exception:\n    return x.cos()"),
    ("getattr_chain_with_super_fallback", "obj = B()\nreturn x * obj.a * obj.b * obj.c"),
    ("module_getattr_defers_to_base", "return m(x)", {"params": "m, x", "make_args": lambda n: (GetattrModule(), torch.randn(n, 4))}),
    ("module_getattr_missing_raises", "return x * m.not_there", {"params": "m, x", "make_args": lambda n: (GetattrModule(), torch.randn(n, 4))}),
    ("hasattr_through_raising_getattr", "mock = Mock()\nif hasattr(mock, 'b'):\n    return torch.cos(x)\nreturn torch.sin(x), hasattr(mock, 'a')"),
    ("stopiteration_zip_longest", "torch.cos(x)\nreturn tuple(zip_longest([1, 2, 3, 4], [10, 11, 12])), x + 1"),
    ("stopiteration_zip_longest_tensors", "return zip_longest(list(x.unbind()), [x.sum()], fillvalue=x.new_zeros(()))"),
    ("key_error_from_dict_caught", "d = {'a': 1}\ntry:\n    a = d['b']\nexcept KeyError:\n    a = 2\nreturn x * a"),
    ("attribute_error_from_missing_attr", "class Obj:\n    def __init__(self):\n        self.a = 1\nmock = Obj()\ntry:\n    c = 2\n    mock.b\nexcept AttributeError:\n    c = 3\nreturn torch.sin(x) * c"),
    ("raise_from_none_in_mapping", "d = MyMapping({'a': 10, 'b': 20})\nx = torch.sin(x + 1)\nreturn x, mapping_get(d, 'm'), mapping_get(d, 'a')"),
    ("raise_from_none_escapes", "d = MyMapping({'a': 10})\ntry:\n    d['zz']\nexcept KeyError as e:\n    return x, e.__cause__ is None, e.__suppress_context__, isinstance(e.__context__, KeyError)"),
    ("generator_exit_not_exception", "try:\n    raise GeneratorExit\nexcept Exception:\n    return x.sin()\nexcept BaseException:\n    return x.cos()"),
    ("dict_pop_missing_in_try", "d = {'a': 1}\ntry:\n    d.pop('b')\nexcept KeyError:\n    return torch.sin(x)\nelse:\n    return torch.cos(x)"),
    ("dict_pop_present_in_try", "d = {'a': 1, 'b': 2}\ntry:\n    d.pop('b')\nexcept KeyError:\n    return torch.sin(x), d\nelse:\n    return torch.cos(x), d"),
    ("key_error_in_loop_handler", "params = {'a': 3, 'b': 4, 'c': 5}\ndt = {'c': 5}\nfor name in params:\n    try:\n        x = x * dt[name]\n    except KeyError:\n        x = x * torch.sin(x)\nreturn x"),
    ("module_level_custom_exception", "z = 0\ntry:\n    raise CustomException\nexcept ValueError:\n    z = 1\nexcept CustomException:\n    z = 2\nreturn x.sin() + z"),
    ("custom_exception_with_init_args", "z = 0\ntry:\n    raise CustomExceptionWithArgs(2, b=3)\nexcept ValueError:\n    z = 1\nexcept CustomExceptionWithArgs as e:\n    z = e.a + e.b\nreturn x + z"),
    ("context_none_after_simple_raise", "try:\n    raise TypeError\nexcept TypeError as e:\n    exc = e\ntry:\n    raise ValueError\nexcept ValueError as e:\n    exc2 = e\nreturn x, exc.__context__ is None, exc2.__context__ is None"),
    ("context_of_raise_in_except", "try:\n    try:\n        raise KeyError('k')\n    except KeyError:\n        raise ValueError('v')\nexcept ValueError as e:\n    return x, type(e.__context__).__name__, e.__context__.args"),
    ("context_while_handling_in_loop", "try:\n    try:\n        1 / 0\n    except ZeroDivisionError:\n        seen = []\n        for exc in (KeyError, IndexError):\n            try:\n                raise exc\n            except exc as e:\n                seen.append(type(e.__context__).__name__)\n        raise\nexcept ZeroDivisionError as outer:\n    return x, seen, type(outer).__name__"),
    ("chaining_descriptors", "try:\n    raise Exception\nexcept Exception as exc:\n    e = exc\na = (e.__context__, e.__cause__, e.__suppress_context__)\ne.__context__ = NameError()\ne.__cause__ = None\nb = (type(e.__context__).__name__, e.__cause__, e.__suppress_context__)\ne.__suppress_context__ = False\nreturn x, a, b, e.__suppress_context__"),
    ("context_try_then_finally_raise", "try:\n    try:\n        te = TypeError(1)\n        raise te\n    finally:\n        ve = ValueError(2)\n        raise ve\nexcept Exception as e:\n    exc = e\nreturn x, exc is ve, exc.__context__ is te"),
    ("context_except_then_finally_raise", "try:\n    try:\n        te = TypeError(1)\n        raise te\n    except Exception:\n        ve = ValueError(2)\n        raise ve\n    finally:\n        oe = OSError(3)\n        raise oe\nexcept Exception as e:\n    exc = e\nreturn x, exc is oe, exc.__context__ is ve, exc.__context__.__context__ is te"),
    ("context_else_then_finally_raise", "try:\n    try:\n        pass\n    except Exception:\n        pass\n    else:\n        ve = ValueError(1)\n        raise ve\n    finally:\n        oe = OSError(2)\n        raise oe\nexcept Exception as e:\n    exc = e\nreturn x, exc is oe, exc.__context__ is ve"),
    ("context_chain_reraise_no_cycle", "try:\n    try:\n        raise AssertionError\n    except AssertionError as a_:\n        a = a_\n        try:\n            raise BytesWarning\n        except BytesWarning as b_:\n            b = b_\n            try:\n                raise ConnectionError\n            except ConnectionError as c_:\n                c = c_\n                raise a\nexcept AssertionError as e:\n    exc = e\nreturn x, exc is a, a.__context__ is c, c.__context__ is b, b.__context__ is None"),
    ("context_self_cycle", "def cycle():\n    try:\n        raise ValueError(1)\n    except ValueError as ex:\n        ex.__context__ = ex\n        raise TypeError(2)\ntry:\n    cycle()\nexcept Exception as e:\n    exc = e\nreturn x, type(exc).__name__, type(exc.__context__).__name__, exc.__context__.__context__ is exc.__context__"),
    ("context_longer_cycle", "try:\n    try:\n        raise AssertionError\n    except AssertionError as _a:\n        a = _a\n        try:\n            raise BytesWarning\n        except BytesWarning as _b:\n            b = _b\n            try:\n                raise ConnectionError\n            except ConnectionError as _c:\n                c = _c\n                a.__context__ = c\n                try:\n                    raise DeprecationWarning\n                except DeprecationWarning as _d:\n                    d = _d\n                    e = Exception()\n                    raise e\nexcept Exception as caught:\n    ok = caught is e\nreturn x, ok, e.__context__ is d, d.__context__ is c, c.__context__ is b, b.__context__ is a, a.__context__ is c"),
    ("exception_returned_with_context", "v = ValueError(1, 2, 3)\nv.__context__ = TypeError()\nreturn x.sin(), v, type(v.__context__).__name__"),
    ("raise_from_sets_cause_and_suppress", "try:\n    try:\n        raise KeyError('a')\n    except KeyError as k:\n        raise ValueError('b') from k\nexcept ValueError as e:\n    return x, type(e.__cause__).__name__, e.__suppress_context__, e.__context__ is e.__cause__"),
    ("exception_variable_cleared_after_handler", "e = 5\ntry:\n    raise ValueError\nexcept ValueError as e:\n    pass\nreturn x, 'e' in locals()"),
    ("exc_info_inside_and_after_handler", "import sys\ntry:\n    raise KeyError('k')\nexcept KeyError:\n    inside = sys.exc_info()[0].__name__\nafter = sys.exc_info()[0]\nreturn x, inside, after"),
]
snippets("dynamo/test_exceptions", "exceptions2", EXCEPTIONS, namespace=NS)

# The type and text of the errors Python itself raises (attribute, index, key, argument
# binding, arithmetic, iteration, parsing, unbound names), caught and returned.
MESSAGES = [
    ("attr_missing_user", 'try:\n    class C:\n        pass\n    C().zz\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("attr_missing_module", 'try:\n    import math\n    math.zz\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("attr_missing_tensor", 'try:\n    x.zz\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("index_list", 'try:\n    [1][5]\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("index_tuple", 'try:\n    (1,)[5]\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("index_str", "try:\n    'a'[5]\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None"),
    ("key_dict", "try:\n    {'a': 1}['b']\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None"),
    ("key_dict_int", 'try:\n    {1: 1}[2]\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("arity_too_many", 'try:\n    def g(a):\n        pass\n    g(1, 2)\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("arity_missing", 'try:\n    def g(a, b):\n        pass\n    g(1)\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("arity_missing_kwonly", 'try:\n    def g(a, *, b):\n        pass\n    g(1)\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("unexpected_kw", 'try:\n    def g(a):\n        pass\n    g(1, c=2)\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("multiple_values", 'try:\n    def g(a):\n        pass\n    g(1, a=2)\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("method_arity", 'try:\n    class C:\n        def m(self, a):\n            pass\n    C().m()\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("zero_division_int", 'try:\n    1 // 0\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("zero_division_float", 'try:\n    1.0 / 0\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("zero_mod", 'try:\n    5 % 0\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("unsupported_operand", "try:\n    1 + 'a'\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None"),
    ("unsupported_operand_list", 'try:\n    [1] - [1]\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("not_callable", 'five = 5\ntry:\n    five()\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("not_iterable", 'try:\n    iter(5)\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("not_subscriptable", 'nothing = None\ntry:\n    nothing[0]\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("unhashable_list", 'try:\n    {[1]: 2}\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("int_parse", "try:\n    int('abc')\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None"),
    ("float_parse", "try:\n    float('abc')\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None"),
    ("list_remove_missing", 'try:\n    [1].remove(2)\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("list_index_missing", 'try:\n    [1].index(2)\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("tuple_index_missing", 'try:\n    (1,).index(2)\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("pop_empty_list", 'try:\n    [].pop()\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("pop_empty_dict", 'try:\n    {}.popitem()\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("set_remove_missing", 'try:\n    {1}.remove(2)\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("str_index_missing", "try:\n    'abc'.index('z')\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None"),
    ("next_exhausted_iter", 'try:\n    next(iter([]))\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("unpack_non_iterable", 'try:\n    a, b = 5\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("name_error_global", 'try:\n    undefined_name_zz\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("unbound_local", 'try:\n    def g():\n        if False:\n            v = 1\n        return v\n    g()\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("max_empty", 'try:\n    max([])\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("min_empty", 'try:\n    min([])\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("chr_range", 'try:\n    chr(-1)\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("int_too_large_shift", 'try:\n    1 << -1\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("assert_message", "try:\n    assert 1 == 2, 'custom message'\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None"),
    ("sorted_none_key_type", 'try:\n    sorted([1, None])\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("setattr_on_int", 'try:\n    (5).zz = 1\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("delete_missing_attr", 'try:\n    class C:\n        pass\n    del C().zz\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
    ("recursion_type_compare", 'try:\n    [1] < (1,)\nexcept Exception as e:\n    return x, type(e).__name__, str(e)\nreturn x, None'),
]
snippets("dynamo/test_exceptions", "exceptions2_messages", MESSAGES, namespace=NS)
