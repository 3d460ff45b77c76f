"""Cases modelled on dynamo's test_subgraphs, test_resume and test_reconstruct (recast in our own
words): graph breaks at the start, in the middle and inside callees (a function that cannot be
traced, called directly, through a helper, with keyword arguments), values live on the stack
across the break (`t1 / (t2 - unsupported(...))`), control flow on tensor values with `and`/`or`,
range and tuple iterators half consumed when the break comes, lists popped after it, no_grad
blocks around it (nested, with enable_grad inside), a long expression whose bytecode needs
EXTENDED_ARG, closures and cells that a resume function must carry, dicts mutated, popped,
cleared and rebuilt before returning, and functions wrapped in no_grad that break inside."""

import torch

from . import snippets

nn = torch.nn


@torch.compiler.disable
def unsupported(a, b):
    """Cannot be traced: the graph breaks at its call (dynamo's testing.unsupported)."""
    return a + b


def indirectly_unsupported(a, b):
    c = a + b
    return unsupported(a, c)


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


globalmod = nn.ReLU()

NS = {"torch": torch, "nn": nn, "unsupported": unsupported, "indirectly_unsupported": indirectly_unsupported,
      "brk": brk, "globalmod": globalmod}


def pair(n):
    return torch.randn(n), torch.randn(n)


SUBGRAPHS = [
    ("control_flow_returns_one_of_two", "c1 = a - b\nc2 = b - a\nif c1.sum() > c2.sum():\n    return c1\nreturn c2"),
    ("control_flow_returns_python_ints", "if a.sum() > b.sum():\n    return 1\nreturn 2"),
    ("control_flow_global_module_each_branch", "c1 = a - b\nc2 = b - a\nm = globalmod\nif c1.sum() > c2.sum():\n    return m(c1)\nreturn m(c2)"),
    ("control_flow_and_of_tensor_bools", "tmp1 = a.sum() > b.sum() and a.sum() > 0\nif tmp1:\n    return 1\nreturn 2"),
    ("control_flow_and_or_returned", "tmp1 = a.sum() > b.sum() and a.sum() > 0\ntmp2 = a.sum() < b.sum() or b.sum() > 0\nif tmp1 and tmp2:\n    return 1, tmp1, tmp2\nreturn 2, tmp1, tmp2"),
    ("unsupported_returned", "c1 = a - b\nc2 = b - a\nreturn unsupported(c1, c2)"),
    ("unsupported_inside_expression", "c1 = a - b\nc2 = b - a\nreturn a - (b - unsupported(c1, c2))"),
    ("indirect_unsupported", "c1 = a - b\nc2 = b - a\nreturn indirectly_unsupported(c1, c2)"),
    ("indirect_unsupported_python_constants_on_stack", "local_const1 = 7\nlocal_const2 = 22\nc1 = a - b\nc2 = b - a\nreturn local_const1 / (local_const2 - indirectly_unsupported(c1, c2))"),
    ("indirect_unsupported_star_args", "args = [a - b, b - a]\nreturn indirectly_unsupported(*args)"),
    ("stack_state_tensors_below_call", "t1 = 1.23 * a\nt2 = 4.56 * a\nc1 = a - b\nc2 = b - a\nreturn t1 / (t2 - unsupported(c1, c2))"),
    ("stack_state_tensors_below_nested_call", "t1 = 1.23 * a\nt2 = 4.56 * a\nc1 = a - b\nc2 = b - a\nreturn t1 / (t2 - indirectly_unsupported(c1, c2))"),
    ("multigraph_branch_on_sum", "x = a + b\nx = x / 2.0\nif x.sum() < 0:\n    return x * -1.0\nreturn x"),
    ("resume_after_direct_break", "x = a + b\nx = x / 2.0\nx = x + 2.0\nx = unsupported(x, a)\nx = x + 2.0\nx = x + 2.0\nreturn x + 2.0"),
    ("resume_after_nested_break", "x = a + b\nx = x / 2.0\nx = x + 2.0\nx = indirectly_unsupported(x, a)\nx = x + 2.0\nreturn x + 2.0"),
    ("resume_after_nested_break_kwarg", "x = (a + b) / 2.0 + 2.0\nx = indirectly_unsupported(x, b=a)\nreturn x + 2.0 + 2.0"),
    ("resume_after_nested_break_all_kwargs", "x = (a + b) / 2.0 + 2.0\nx = indirectly_unsupported(a=x, b=a)\nreturn x + 2.0 + 2.0"),
    ("resume_after_print", "x = a + b\nx = x / 2.0\nx = x + 2.0\nprint(x)\nx = x + 2.0\nreturn x + 2.0"),
    ("break_at_start_print", "print(a)\nx = a + b\nx = x + 2.0\nreturn x + 2.0"),
    ("break_at_start_nested", "x = indirectly_unsupported(a, b)\nx = x + 2.0\nreturn x + 2.0"),
    ("break_at_start_direct", "x = unsupported(a, b)\nx = x + 2.0\nreturn x + 2.0"),
    ("restore_builtin_alias_after_break", "len_ = len\nx = a + b\nx = torch.add(unsupported(x, x), 1)\nreturn a * x + len_(b)"),
    ("restore_range_after_break", "x = a + b\nrng = range(3, 8, 2)\nx = unsupported(x, x)\nfor i in rng:\n    x = x + i\nreturn x, rng"),
    ("restore_range_iterator_after_break", "x = a + b\nrng = iter(range(3, 8, 2))\nx = unsupported(x, x)\nx += next(rng)\nreturn x, list(rng)"),
    ("pop_list_after_break", "tmp = [a + 1, b + 2, a + b]\nx = a\nx = unsupported(x, x)\nfor i in range(3):\n    x += tmp.pop(-1)\nreturn x, tmp"),
    ("tuple_iterator_across_break", "x = a + b\nit = iter(tuple(range(10)))\nx = x + next(it)\nx = x + next(it)\nx = unsupported(x, x)\nx = x + next(it)\nx = x + next(it)\nreturn x, list(it)"),
    ("tuple_iterator_two_breaks", "it = iter(tuple(range(10)))\nx = a + next(it)\nx = x + next(it)\nx = unsupported(x, x)\nx = x + next(it)\nx = unsupported(x, b)\nx = x + next(it)\nreturn x, next(it), list(it)"),
    ("enumerate_shape_no_break", "for i, s in enumerate(a.shape):\n    b = b + s\nfor i, s in enumerate(b.shape, 8):\n    b = b + s * i\nreturn b"),
    ("item_then_divide", "x = a + b - 1.5\nx = x.sum()\nv = x.item()\nx = x / (a + b)\nreturn x, type(v)"),
    ("no_grad_block_break_inside", "x = a + b\nwith torch.no_grad():\n    x = x + 1\n    x.sum().tolist()\n    x = x + 2\nx = x + 3\nreturn x, x.requires_grad"),
    ("no_grad_block_two_breaks", "x = a + b\nwith torch.no_grad():\n    x = x + 1\n    x.sum().tolist()\n    x = x + 2\n    x.sum().tolist()\n    x = x + 3\nx = x + 4\nreturn x, torch.is_grad_enabled()"),
    ("nested_no_grad_enable_grad_break", "x = a + b\nwith torch.no_grad():\n    with torch.no_grad():\n        x = x + 1\n        with torch.enable_grad():\n            x.sum().tolist()\n            x = x[0] + 2\n            g = torch.is_grad_enabled()\n        x = x + 3\nx = x + 4\nreturn x, g, torch.is_grad_enabled()"),
    ("freevars_across_break", "c1 = a * 3\nc2 = b - 1\nx = a + b + (c1 - c2)\nx = unsupported(x, x)\nreturn x + (c1 - c2)"),
    ("closure_cell_read_after_break", "var1 = 1\ndef make():\n    def fn(x):\n        x = x + 1\n        var2 = 2\n        brk()\n        x = x + var1\n        def inner():\n            return var2\n        return x * inner()\n    return fn\nreturn make()(a) + b"),
    ("cell_written_after_break", "k = 1\ndef get():\n    return k\nx = a * get()\nbrk()\nk = 5\nreturn x + get(), k"),
    ("walrus_value_across_break", "if (s := a.sum()) > 0:\n    y = a * 2\nelse:\n    y = a - 1\nbrk()\nreturn y + s"),
]
snippets("dynamo/test_subgraphs", "subgraphs2", SUBGRAPHS, namespace=NS, params="a, b", make_args=pair)


def many_adds_lambda():
    # 512 terms: the bytecode of each branch needs EXTENDED_ARG for its jumps.
    too_many = "+".join(["a", "b"] * 256)
    return eval(f"lambda a, b: ({too_many}+a if a.sum() > 0 else {too_many} - b)")  # noqa: S307


def conditions(n):
    bits = torch.randint(0, 2, (3,))
    return (torch.randn(n),) + tuple(torch.tensor([float(bit)]) for bit in bits)


OTHERS = [
    ("extended_args_branches", "return many_adds_lambda()(a, b)", {"params": "a, b", "make_args": pair}),
    ("branch_on_int_tensor_flag", "if check:\n    return a + b + 10\nreturn a + b - 10", {"params": "a, b, check", "make_args": lambda n: (torch.randn(n), torch.randn(n), torch.tensor([n % 2], dtype=torch.int32))}),
    ("resume_paths_join", "x = x + 1\nif c1:\n    x = x + 2\nx = x + 3\nif c2:\n    x = x + 4\nx = x + 5\nif c3:\n    x = x + 6\nreturn x + 7", {"params": "x, c1, c2, c3", "make_args": conditions}),
    ("dynamic_getitem_by_size", "return a[b.size(0) - 1]", {"params": "a, b", "make_args": pair}),
    ("duck_sizes_equal_branch", "if a.size(0) == b.size(0):\n    return a + b\nreturn a.sum() + b.sum()", {"params": "a, b", "make_args": lambda n: (torch.randn(n), torch.randn(n if n < 5 else 3))}),
    ("duck_sizes_order_dependence", "return a.sum() + b.sum(), a.shape[0] == b.shape[0]", {"params": "a, b", "make_args": lambda n: (torch.randn(2), torch.randn(2 if n < 5 else 3))}),
    ("zero_size_branch", "if a.size(0) != 0:\n    return a * 2\nreturn a + 1", {"params": "a", "make_args": lambda n: (torch.randn(0 if n < 5 else 2),)}),
]
NS["many_adds_lambda"] = many_adds_lambda
snippets("dynamo/test_subgraphs", "subgraphs2_inputs", OTHERS, namespace=NS)


def dict_and_tensor(n):
    t = torch.randn(n, 3)
    return {1: t, 2: t + 1}, t


RECONSTRUCT = [
    ("dict_input_new_key", "d[40] = t + 1\nreturn None"),
    ("dict_input_pop_then_set", "d.pop(2)\nd[40] = t + 1"),
    ("dict_input_popitem", "d.popitem()"),
    ("dict_input_popitem_returned", "k, v = d.popitem()\nreturn k, v * 2"),
    ("dict_input_del_then_set", "del d[2]\nd[40] = t + 1"),
    ("dict_input_get_then_set", "d[2] = d.get(2) + t\nreturn d.get(123, 'absent')"),
    ("dict_input_clear_then_set", "d.clear()\nd[3] = t + 3"),
    ("dict_input_set_existing_keeps_order", "d[1] = t * 5\nd[0] = t\nreturn list(d)"),
    ("dict_created_and_returned", "return {1: t, 2: t + 1}"),
    ("dict_input_mutated_across_break", "d[3] = t * 2\nbrk()\ndel d[1]\nd[1] = t\nreturn list(d.items())[0][0]"),
    ("dict_input_update_from_new", "d.update({5: t, 1: t - 1})\nreturn len(d)"),
    ("dict_input_setdefault", "a = d.setdefault(1, t * 100)\nb = d.setdefault(9, t * 3)\nreturn a, b"),
]
snippets("dynamo/test_reconstruct", "reconstruct2", RECONSTRUCT, namespace=NS, params="d, t", make_args=dict_and_tensor)


class Foo:
    def __init__(self):
        self.a = 1
        self.b = 2

    def fn(self, x):
        x = x + self.a
        brk()
        g = torch.is_grad_enabled()
        return x + self.b, g


def wrapped_target(x):
    x = x + 1
    brk()
    return x + 2, torch.is_grad_enabled()


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.ModuleDict({"b": nn.ModuleDict({"c": nn.Linear(3, 3, bias=False)})})

    def forward(self, x):
        return self.a.b.c(x)


NS.update({"Foo": Foo, "wrapped_target": wrapped_target})

WRAPPED = [
    ("no_grad_wrapped_function_breaks", "y, inner = torch.no_grad()(wrapped_target)(x)\nreturn y, inner, torch.is_grad_enabled()"),
    ("no_grad_wrapped_method_breaks", "obj = Foo()\nobj.fn = torch.no_grad()(obj.fn)\ny, inner = obj.fn(x)\nreturn y, inner, torch.is_grad_enabled()"),
    ("no_grad_decorated_nested_function_breaks", "a = 1\nb = 2\n@torch.no_grad()\ndef fn(x):\n    x = x + a\n    brk()\n    return x + b, torch.is_grad_enabled()\ny, inner = fn(x)\nreturn y, inner, torch.is_grad_enabled()"),
    ("enable_grad_inside_no_grad_caller", "@torch.enable_grad()\ndef fn(x):\n    brk()\n    return x * 2, torch.is_grad_enabled()\nwith torch.no_grad():\n    y, inner = fn(x)\nreturn y, inner, y.requires_grad"),
]
snippets("dynamo/test_reconstruct", "reconstruct2_wrapped", WRAPPED, namespace=NS,
         make_args=lambda n: (torch.randn(n, requires_grad=True),))

FUNCTIONAL_CALL = [
    ("functional_call_linear", "return torch.func.functional_call(m, {'weight': w, 'bias': bias}, x)",
     {"params": "m, w, bias, x", "make_args": lambda n: (nn.Linear(3, 3), torch.randn(3, 3), torch.randn(3), torch.randn(n, 3))}),
    ("functional_call_state_dict_nested", "states = {k: v * 2 for k, v in m.state_dict().items()}\nreturn torch.func.functional_call(m, states, x), m(x)",
     {"params": "m, x", "make_args": lambda n: (Nested(), torch.randn(n, 3))}),
]
snippets("dynamo/test_reconstruct", "reconstruct2_functional", FUNCTIONAL_CALL, namespace=NS)
