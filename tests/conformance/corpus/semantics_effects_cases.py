"""Side effects a compiled function must leave exactly as eager does, read back after the call:
attribute and item writes on objects, lists, dicts and nested containers in orders that read
their own writes; arguments that alias (one list or object passed twice, a list that holds
itself, objects in a cycle, a child shared by two parents); Python's evaluation order of
assignment targets, call arguments and augmented subscripts; closure cells rebound, deleted and
shared with generators; mutable defaults; globals rebound, deleted and written by callees;
attributes and items deleted (dict and __dict__ order afterwards); and the same writes on both
sides of a graph break, inside callees and around exceptions. Modelled on CPython's test_scope,
test_grammar and test_dict and on PyTorch's dynamo test_misc/test_functions side-effect tests,
recast in our own words."""

import torch

from . import snippets


class Obj:
    """A bag of attributes."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


class Counter:
    n = 0


def list_and_vec(n):
    return [torch.randn(n), torch.randn(n)], torch.randn(n)


def long_list_and_vec(n):
    return [torch.randn(n) for _ in range(4)], torch.randn(n)


def dict_and_vec(n):
    return {"a": torch.randn(n), "b": torch.randn(n)}, torch.randn(n)


def same_list_twice(n):
    items = [torch.randn(n)]
    return items, items


def same_dict_twice(n):
    d = {"t": torch.randn(n)}
    return d, d


def same_obj_twice(n):
    o = Obj(t=torch.randn(n), log=[])
    return o, o


def self_list(n):
    items = [torch.randn(n)]
    items.append(items)
    return (items,)


def obj_cycle(n):
    a = Obj(t=torch.randn(n))
    b = Obj(t=torch.randn(n), other=a)
    a.other = b
    return a, b


def shared_child(n):
    child = Obj(t=torch.randn(n))
    return Obj(c=child), Obj(c=child)


def nested(n):
    return ({"a": [torch.randn(n), {"b": torch.randn(n)}], "c": (torch.randn(n), [1, 2])},)


def obj_and_vec(n):
    return Obj(a=torch.randn(n), b=torch.randn(n)), torch.randn(n)


def list_in_obj_and_vec(n):
    items = [torch.randn(n)]
    return Obj(items=items, t=torch.randn(n)), items, torch.randn(n)


LOG = []
NS = {"torch": torch, "Obj": Obj, "Counter": Counter, "LOG": LOG}

SOURCE = "dynamo/test_misc"

WRITES = [
    # read-after-write on inputs, in orders where a replay in the wrong order shows
    ("list_item_rewritten_from_its_own_append", "l[0] = l[0] + x\nl.append(l[0] * 2)\nl[0] = l[-1] - 1\nreturn l[0] + l[1]", {"params": "l, x", "make_args": list_and_vec}),
    ("dict_key_deleted_and_readded_goes_last", "del d['a']\nd['a'] = x\nd['c'] = d.pop('b') * 2\nreturn list(d)", {"params": "d, x", "make_args": dict_and_vec}),
    ("dict_value_swapped_then_key_moved", "d['a'], d['b'] = d['b'], d['a'] + x\nv = d.pop('a')\nd['a'] = v * 2\nreturn d['a'] - d['b']", {"params": "d, x", "make_args": dict_and_vec}),
    ("list_del_slice_insert_front_del_last", "del l[1:3]\nl.insert(0, x)\ndel l[-1]\nl[1:1] = [x * 2, x * 3]\nreturn len(l)", {"params": "l, x", "make_args": long_list_and_vec}),
    ("list_sort_reverse_setitem_interleaved", "l.append(x)\nl.reverse()\nl[0] = l[0] * 2\nl.insert(1, l.pop())\nreturn len(l)", {"params": "l, x", "make_args": long_list_and_vec}),
    ("object_attribute_deleted_and_reset_changes_order", "o.extra = x\ndel o.a\no.a = o.b * 2\ndel o.b\nreturn list(vars(o)), o.a + o.extra", {"params": "o, x", "make_args": obj_and_vec}),
    ("setattr_getattr_computed_names", "for name in ('a', 'b', 'a'):\n    setattr(o, name, getattr(o, name) * 2 + x)\nreturn o.a - o.b", {"params": "o, x", "make_args": obj_and_vec}),
    ("object_attribute_and_list_item_swapped", "o.a, l[0] = l[0], o.a\nreturn o.a + l[0]", {"params": "o, l, x", "make_args": lambda n: (Obj(a=torch.randn(n)), [torch.randn(n)], torch.randn(n))}),
    ("nested_container_writes", "d['a'][1]['b'] = d['a'][0] + d['a'][1]['b']\nd['a'].append(d['c'][0])\nd['c'][1].append(3)\nd['new'] = {'k': d['a'][-1] * 2}\nreturn len(d['a']), d['c'][1]", {"params": "d", "make_args": nested}),
    ("nested_list_in_tuple_mutated_returned", "t = d['c']\nt[1].extend([t[0].shape[0], 5])\nt[1].remove(1)\nreturn t", {"params": "d", "make_args": nested}),
    ("input_list_list_attribute_alias", "o.items.append(x)\nitems.append(o.t)\no.items[0] = o.items[-1] * 2\nreturn len(items), o.items is items", {"params": "o, items, x", "make_args": list_in_obj_and_vec}),
    ("list_made_inside_aliased_by_object", "l = [x]\no = Obj(items=l)\no.items.append(x + 1)\nl.append(x + 2)\nreturn o, len(l)"),
    ("dict_made_inside_aliased_by_dict", "d = {}\ne = {'inner': d}\nd['k'] = x\ne['inner']['j'] = x * 2\ndel d['k']\nreturn d, e"),
    ("setdefault_returns_the_stored_list", "d = {}\nl = d.setdefault('k', [])\nl.append(x)\nd.setdefault('k', []).append(x * 2)\nreturn d, len(l)"),
    ("dict_update_reads_before_writing", "d = {'a': x}\nd.update(b=d['a'] + 1, a=d['a'] * 2)\nreturn d"),
    ("list_iadd_through_alias_tuple_does_not", "a = [x]\nb = a\nb += [x * 2]\nt = (x,)\nu = t\nu += (1,)\nreturn a, len(t), len(u)"),
    ("list_repeated_rows_share_one_list", "grid = [[0, 0]] * 2\ngrid[0][0] = x\nreturn grid[1][0] is x, grid[1][0] + 1"),
    ("list_imul_keeps_identity", "l = [x, 1]\nm = l\nl *= 2\nl[0] = l[0] + 1\nreturn m is l, len(m), m[2] - m[0]"),
    ("set_ior_through_alias", "s = {1}\nt = s\nt |= {2, 3}\ns.discard(1)\nreturn x + len(t), sorted(s)"),
    ("closure_over_object_writes_attribute", "o = Obj(t=x)\ndef bump():\n    o.t = o.t + 1\nbump()\nbump()\nreturn o.t, o"),
    ("comprehension_calls_with_side_effects", "log = []\ndef f(t, i):\n    log.append(i)\n    return t * i\nr = [f(x, i) for i in range(4) if i != 1]\nreturn r, log"),
    ("map_is_lazy_side_effects_on_consume", "log = []\ndef f(i):\n    log.append(i)\n    return x * i\nm = map(f, range(3))\nn0 = len(log)\nfirst = next(m)\nrest = list(m)\nreturn n0, first, rest, log"),
    ("delete_missing_item_caught", "d = {'a': x}\ntry:\n    del d['b']\nexcept KeyError as e:\n    d['err'] = e.args[0]\nreturn d"),
    ("delattr_missing_caught", "o = Obj(t=x)\ntry:\n    del o.missing\nexcept AttributeError:\n    o.caught = True\nreturn o"),
    ("class_attribute_reset_then_incremented", "Counter.n = x.shape[0]\nc = Counter()\nCounter.n += 1\nc.n += 10\nreturn x * Counter.n, c.n, vars(c)"),
]
snippets(SOURCE, "sem_effects_writes", WRITES, namespace=NS)

ALIASES = [
    ("same_list_twice_append_read_other", "a.append(a[0] + 1)\nb.append(b[-1] * 2)\na[0] = b[-1]\nreturn len(a), len(b), a[0] + b[1]", {"params": "a, b", "make_args": same_list_twice}),
    ("same_list_twice_clear_then_append", "t = a[0]\na.clear()\nb.append(t * 2)\nreturn a, t + 1", {"params": "a, b", "make_args": same_list_twice}),
    ("same_dict_twice_write_delete", "d['u'] = d['t'] * 2\ne['t'] = e['u'] + 1\ndel d['u']\nreturn sorted(e), e['t']", {"params": "d, e", "make_args": same_dict_twice}),
    ("same_object_twice_interleaved", "o.t = o.t + 1\np.log.append('w')\np.t = p.t * 2\no.log.append(len(p.log))\nreturn o.t, o.log is p.log", {"params": "o, p", "make_args": same_obj_twice}),
    ("list_containing_itself_appended", "l[0] = l[0] * 2\nl[1].append(l[0] + 1)\nreturn len(l), l[1] is l, l[-1] - 1", {"params": "l", "make_args": self_list}),
    ("list_containing_itself_popped", "inner = l.pop()\ninner.append(l[0] * 3)\nreturn len(l), inner is l, l[-1]", {"params": "l", "make_args": self_list}),
    ("object_cycle_write_through_other", "a.t = a.t + b.t\nb.other.t = b.other.t * 2\nreturn a.other.other is a, a.t", {"params": "a, b", "make_args": obj_cycle}),
    ("object_cycle_rewired", "a.other, b.other = b, b\nb.t = a.t - b.t\nreturn b.other is b, a.other.t", {"params": "a, b", "make_args": obj_cycle}),
    ("shared_child_written_through_both_parents", "a.c.t = a.c.t * 2\nb.c.u = b.c.t + 1\nreturn a.c is b.c, list(vars(a.c)), a.c.u", {"params": "a, b", "make_args": shared_child}),
    ("shared_child_replaced_on_one_parent", "a.c = Obj(t=a.c.t + 1)\nb.c.t = b.c.t * 3\nreturn a.c is b.c, a.c.t - b.c.t", {"params": "a, b", "make_args": shared_child}),
    ("tensor_in_two_lists_mutated_in_place", "a = [x]\nb = [x, x]\na[0].mul_(2)\nb[1].add_(1)\nreturn x, a[0] is b[0]"),
]
snippets(SOURCE, "sem_effects_alias", ALIASES, namespace=NS)

ORDER = [
    # CPython evaluates the right side before the targets, targets left to right, call
    # arguments left to right, and an augmented subscript's container and index once.
    ("subscript_target_evaluated_after_value", "log = []\ndef a():\n    log.append('a')\n    return x.shape[0]\ndef b():\n    log.append('b')\n    return x * 2\nd = {}\nd[a()] = b()\nreturn d, log"),
    ("targets_assigned_left_to_right", "l = [0, 0, 0]\ni = 0\ni, l[i] = 1, x\nreturn l[1] + 1, l[0], i"),
    ("chained_assignment_shares_object", "a = b = [x]\na.append(x * 2)\nreturn b, a is b"),
    ("chained_assignment_targets_order", "l = [0, 0]\ni = l[i] = 1 if False else 1\nreturn x + i, l"),
    ("call_arguments_evaluated_left_to_right", "log = []\ndef p(v, tag):\n    log.append(tag)\n    return v\nr = torch.add(p(x, 'first'), p(x * 2, 'second'), alpha=p(3, 'kw'))\nreturn r, log"),
    ("augmented_subscript_evaluates_index_once", "calls = []\ndef idx():\n    calls.append(1)\n    return 0\nl = [x]\nl[idx()] += 1\nreturn l, len(calls)"),
    ("augmented_attribute_reads_once", "reads = []\nclass R:\n    def __init__(self):\n        self._v = x\n    @property\n    def v(self):\n        reads.append('get')\n        return self._v\n    @v.setter\n    def v(self, value):\n        reads.append('set')\n        self._v = value\nr = R()\nr.v += 1\nreturn r.v, reads"),
    ("dict_literal_values_in_order", "log = []\ndef k(v):\n    log.append(v)\n    return v\nd = {k('a'): k(x), k('b'): k(x * 2), k('a'): k(3)}\nreturn d, len(log)"),
    ("boolean_operators_short_circuit_side_effects", "log = []\ndef t(v):\n    log.append(v)\n    return v\nr = t(0) or t(x.shape[0]) or t(99)\ns = t(1) and t(0) and t(5)\nreturn x * r, s, log"),
    ("comparison_chain_operands_once", "log = []\ndef v(k):\n    log.append(k)\n    return k\nok = v(1) < v(x.shape[0]) < v(100)\nreturn x + ok, log"),
]
snippets("cpython/test_grammar", "sem_effects_order", ORDER, namespace=NS)

SCOPES = [
    ("cell_rebound_seen_by_closure", "box = [x]\ndef get():\n    return box[0]\nbox = [x * 3]\nreturn get()"),
    ("closure_pair_sharing_state", "def make():\n    n = [0]\n    t = x\n    def step():\n        nonlocal t\n        n[0] += 1\n        t = t * 2\n        return t\n    return step, lambda: (n[0], t)\ns, peek = make()\ns()\ns()\nreturn peek()"),
    ("nonlocal_rebound_to_other_type", "v = x\ndef f():\n    nonlocal v\n    v = [v, v * 2]\nf()\nreturn v"),
    ("deleted_cell_raises_name_error", "t = x\ndef g():\n    return t\ndel t\ntry:\n    g()\nexcept NameError as e:\n    return x + 1, type(e).__name__\nreturn x"),
    ("cell_shared_with_generator", "n = 0\ndef gen():\n    nonlocal n\n    for i in range(3):\n        n += 1\n        yield x * i\nit = gen()\nnext(it)\na = n\nnext(it)\nreturn a, n"),
    ("loop_variable_cell_last_value", "fs = []\nfor i in range(3):\n    def f():\n        return x * i\n    fs.append(f)\nreturn [f() for f in fs]"),
    ("class_body_reads_enclosing_function", "k = x.shape[0]\nclass C:\n    size = k + 1\n    def m(self):\n        return x * k\nreturn C().m(), C.size"),
    ("mutable_default_of_inner_function", "def f(t, acc=[]):\n    acc.append(t)\n    return acc\na = f(x)\nb = f(x + 1)\nreturn a is b, len(a), f.__defaults__[0] is a"),
    ("kwdefault_dict_mutated", "def f(t, *, memo={}):\n    memo[len(memo)] = t\n    return len(memo)\nf(x)\nf(x * 2)\nreturn x + f(x), sorted(f.__kwdefaults__['memo'])"),
    ("default_evaluated_at_definition", "k = 2\ndef f(t, s=k):\n    return t * s\nk = 5\nreturn f(x), f(x, k)"),
    ("global_rebound_seen_by_helper", "global N\nN = x.shape[0]\ndef g():\n    return N * 2\nr = g()\nN = N + 1\nreturn x * r + N, N"),
    ("global_written_by_callee", "global S\nS = 1\ndef set_s(v):\n    global S\n    S = v\nset_s(x * 2)\nreturn S + 1"),
    ("global_deleted_raises_name_error", "global T\nT = x\ndel T\ntry:\n    T\nexcept NameError:\n    return x + 1\nreturn x"),
    ("global_list_reset_and_appended", "LOG.clear()\nLOG.append(x.shape[0])\nLOG.append(len(LOG))\nreturn x + LOG[-1], list(LOG)"),
    ("local_shadows_global_unbound_error", "global U\nU = 1\ndef f():\n    y = U\n    U = 2\n    return y\ntry:\n    f()\nexcept UnboundLocalError:\n    return x - 1\nreturn x"),
]
snippets("cpython/test_scope", "sem_effects_scope", SCOPES, namespace=NS)

BREAKS = [
    ("object_writes_on_both_sides_then_delete", "o.a = o.a * 2\nprint('break')\no.b = o.a + o.b\ndel o.a\nreturn o.b", {"params": "o, x", "make_args": obj_and_vec}),
    ("attribute_deleted_before_break", "del o.a\nprint('break')\nreturn hasattr(o, 'a'), o.b + 1", {"params": "o, x", "make_args": obj_and_vec}),
    ("object_made_before_break_finished_after", "p = Obj(t=x)\np.t = p.t + 1\nprint('break')\np.u = p.t * 2\ndel p.t\nreturn p"),
    ("dict_filled_in_loop_with_break", "d = {}\nfor i in range(3):\n    d[i] = x * i\n    if i == 1:\n        print('break')\nreturn d"),
    ("input_item_deleted_before_break", "del l[0]\nprint('break')\nl.append(x)\nreturn len(l)", {"params": "l, x", "make_args": list_and_vec}),
    ("callee_breaks_while_mutating_list", "def f(l):\n    l.append(1)\n    print('break')\n    l.append(2)\nf(lst)\nreturn lst", {"params": "lst, x", "make_args": list_and_vec}),
    ("callee_breaks_while_writing_attributes", "def f(o):\n    o.a = o.a + 1\n    print('break')\n    o.b = o.a * 2\nf(o)\nreturn o.a - o.b", {"params": "o, x", "make_args": obj_and_vec}),
    ("global_rebound_across_break", "global T\nT = x + 1\nprint('break')\nT = T * 2\nreturn T"),
    ("same_list_twice_across_break", "a.append(a[0] * 2)\nprint('break')\nb.append(len(a))\nreturn a is b, len(b)", {"params": "a, b", "make_args": same_list_twice}),
    ("cycle_written_across_break", "a.t = a.t + 1\nprint('break')\nb.other.t = b.other.t * 2\nreturn a.t", {"params": "a, b", "make_args": obj_cycle}),
    ("cell_written_before_break_read_by_closure_after", "t = x\ndef get():\n    return t * 2\nt = t + 1\nprint('break')\nr = get()\nt = t + 1\nreturn r, get()"),
    ("dict_order_after_delete_across_break", "d['c'] = x\ndel d['a']\nprint('break')\nd['a'] = x * 2\nreturn list(d)", {"params": "d, x", "make_args": dict_and_vec}),
]
snippets(SOURCE, "sem_effects_breaks", BREAKS, namespace=NS)

ERRORS = [
    ("exception_escapes_after_list_append", "l.append(x)\nl[0] = l[0] * 2\nraise ValueError('after writes')", {"params": "l, x", "make_args": list_and_vec}),
    ("finally_appends_after_raise", "try:\n    l.append(1)\n    raise KeyError('k')\nfinally:\n    l.append(x)", {"params": "l, x", "make_args": list_and_vec}),
    ("callee_writes_then_raises_caught", "def f(l):\n    l.append(x)\n    raise ValueError\ntry:\n    f(lst)\nexcept ValueError:\n    lst.append('caught')\nreturn len(lst)", {"params": "lst, x", "make_args": list_and_vec}),
    ("object_written_then_raise_after_break", "o.a = x * 3\nprint('break')\no.b = o.a\nraise RuntimeError('late')", {"params": "o, x", "make_args": obj_and_vec}),
    ("dict_written_in_except_and_finally", "d['log'] = []\ntry:\n    d['a'] = d['a'] / 0 if False else d['a'] + x\n    {}['missing']\nexcept KeyError:\n    d['log'].append('except')\nfinally:\n    d['log'].append('finally')\nreturn d['a']", {"params": "d, x", "make_args": dict_and_vec}),
]
snippets(SOURCE, "sem_effects_errors", ERRORS, namespace=NS)
