"""State that outlives one statement, in the style of dynamo's test_misc (recast in our own
words): attributes set through setattr/vars/__dict__ and read back, dict views that stay live,
a functools.partial whose keywords change, shallow and deep copies of user objects, class
attributes changed under instances, with-statements that suppress or see exceptions (nested,
closing a generator), locals deleted then read or rebound, sys.modules, ids, and string, f-string
and bytearray methods."""

import torch

from . import snippets

CASES = [
    ("setattr_getattr_on_module", "import types\nm = types.ModuleType('pm')\nsetattr(m, 'v', 3)\nreturn x * getattr(m, 'v'), hasattr(m, 'v'), getattr(m, 'w', 7)"),
    ("vars_obj_write_then_attr", "class O:\n    pass\no = O()\nvars(o)['k'] = 5\nreturn x * o.k, o.__dict__"),
    ("obj_dict_write_then_getattr", "class O:\n    pass\no = O()\no.__dict__.update(a=1, b=2)\no.c = 3\nreturn x, o.a + o.b + o.c, list(vars(o))"),
    ("dict_keys_view_live", "d = {'a': 1}\nk = d.keys()\nd['b'] = 2\nv = d.values()\ndel d['a']\nreturn x, list(k), list(v), len(k)"),
    ("items_view_live_contains", "d = {'a': 1}\ni = d.items()\nd['a'] = 5\nreturn x, ('a', 5) in i, ('a', 1) in i"),
    ("partial_keywords_live", "import functools\np = functools.partial(lambda a, b=1: a * b, b=2)\nr1 = p(x)\np.keywords['b'] = 3\nreturn r1, p(x), p.keywords"),
    ("copy_user_object_shallow", "import copy\nclass O:\n    def __init__(self):\n        self.l = [1]\no = O()\nc = copy.copy(o)\nc.l.append(2)\nc.k = 1\nreturn x, o.l, hasattr(o, 'k'), c.l is o.l"),
    ("deepcopy_user_object", "import copy\nclass O:\n    def __init__(self, t):\n        self.t = t\n        self.l = [t]\no = O(x)\nc = copy.deepcopy(o)\nc.l.append(1)\nreturn len(o.l), c.t is o.t, torch.equal(c.t, o.t)"),
    ("class_attr_mutation_seen_by_instances", "class C:\n    n = 1\na = C()\nC.n = 5\nb = C()\nreturn x * a.n * b.n, a.n"),
    ("instance_attr_shadow_then_delete", "class C:\n    n = 1\na = C()\na.n = 3\nr1 = a.n\ndel a.n\nreturn x, r1, a.n"),
    ("with_exit_suppresses", "class S:\n    def __enter__(self):\n        return 3\n    def __exit__(self, *a):\n        return True\nwith S() as v:\n    raise KeyError('k')\nreturn x * v"),
    ("with_exit_receives_exception_type", "log = []\nclass S:\n    def __enter__(self):\n        return self\n    def __exit__(self, t, v, tb):\n        log.append((t.__name__ if t else None, str(v) if v else None))\n        return False\ntry:\n    with S():\n        raise ValueError('bad')\nexcept ValueError:\n    pass\nwith S():\n    pass\nreturn x, log"),
    ("del_local_then_read_raises", "y = x * 2\ndel y\nreturn y"),
    ("del_local_then_rebind", "y = x * 2\ndel y\ny = x * 3\nreturn y"),
    ("nested_with_exit_order", "log = []\nclass S:\n    def __init__(self, n):\n        self.n = n\n    def __enter__(self):\n        log.append(('in', self.n))\n    def __exit__(self, *a):\n        log.append(('out', self.n))\nwith S(1), S(2):\n    log.append('body')\nreturn x, log"),
    ("generator_in_with_closes_on_exit", "import contextlib\nlog = []\ndef g():\n    try:\n        yield 1\n        yield 2\n    finally:\n        log.append('closed')\nwith contextlib.closing(g()) as gen:\n    first = next(gen)\nreturn x, first, log"),
    ("exception_in_generator_propagates_to_for", "def g():\n    yield 1\n    raise KeyError('k')\nout = []\ntry:\n    for v in g():\n        out.append(v)\nexcept KeyError:\n    out.append('caught')\nreturn x, out"),
    ("sys_modules_lookup", "import sys\nreturn x, 'torch' in sys.modules, sys.modules['torch'] is torch"),
    ("id_stable_and_distinct", "a = [1]\nb = [1]\nreturn x, id(a) == id(a), id(a) == id(b), a is not b"),
    ("str_methods_chain", "s = ' Hello World '\nreturn x, s.strip().lower().split(), s.count('o'), '-'.join(['a', 'b']), s.replace('o', '0', 1), 'abc'.startswith(('x', 'a'))"),
    ("fstring_format_specs", "n = x.shape[0]\nv = 3.14159\nreturn x, f'{n:03d}|{v:.2f}|{v!r}|{\"s\":>4}|{n:#x}|{1234567:,}'"),
    ("bytes_and_bytearray", "b = bytearray(b'ab')\nb.append(99)\nb[0] = 65\nreturn x, bytes(b), b.decode(), len(b), b'x' * 2"),
]
snippets("dynamo/test_misc", "state2", CASES, namespace={"torch": torch})
