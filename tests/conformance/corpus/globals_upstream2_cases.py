"""Cases modelled on dynamo's test_global, test_python_autograd, test_recompiles,
test_sources, test_base_output and test_interop (recast in our own words).

Globals: each call gets a fresh module made from source (not registered in sys.modules, like
test_global's importlib cases), whose functions store, rebind, create and delete their own
globals; the module is an input, so its whole namespace afterwards (values and key order) is
compared with eager's. A pure-Python tape autograd (Variable, a global tape and a global name
counter reset per call) runs forwards and backwards. Recompile cases change a bool, a Python
scalar or a tensor between calls, alias inputs, flip a module's training flag and pass closures
over changing ints. Sources: a property whose getter is a closure, class attributes read
through a pytree registry. A diffusers-like BaseOutput read by attribute, key and index; fx,
script and traced functions called inside."""

import builtins
import collections
import dataclasses
import types
from typing import Callable, NamedTuple

import torch

from . import snippets

MODULE_TEXT = '''
g_counter = 1
g_list = [0, 1, 2]
g_dict = {"a": 0, "b": 1}


g_object = Pair(1, 1)
_name = 0
flag = False
to_delete = 10
pad = 0


def fresh_name():
    global _name
    r = f"v{_name}"
    _name += 1
    return r


class Variable:
    def __init__(self, value, name=None):
        self.value = value
        self.name = name or fresh_name()

    @staticmethod
    def constant(value, name=None):
        return Variable(value, name)


def bump(x):
    global g_counter
    val = x + g_counter
    g_counter += 1
    return val


def bump_twice(x):
    global g_counter
    val = x + g_counter
    g_counter += 1
    g_counter += 1
    return val


def make_new_global(x):
    global g_counter_new
    g_counter_new = x + 1
    return x + g_counter_new


def list_item(x):
    val = x + g_list[1]
    g_list[1] += 1
    return val


def rebind_list(x):
    global g_list
    val = x + g_list[1]
    g_list = [v + 1 for v in g_list]
    return val


def dict_item(x):
    val = x + g_dict["b"]
    g_dict["b"] += 1
    return val


def rebind_dict(x):
    global g_dict
    g_dict = {key: value + 1 for key, value in g_dict.items()}
    return x + g_dict["b"]


def object_attr(x):
    val = x + g_object.y
    g_object.y += 1
    return val


def set_flag_true():
    global flag
    flag = True


def set_flag_false():
    global flag
    flag = False


def delete_it():
    global to_delete
    del to_delete


def store_then_delete():
    global fleeting
    fleeting = 1
    del fleeting


def delete_then_store():
    global to_delete
    del to_delete
    to_delete = 7


def delete_twice():
    global to_delete
    del to_delete
    del to_delete


def delete_guarded(x):
    global to_delete
    y = x + 1
    try:
        del to_delete
    except NameError:
        y = y + 1
    return y


def read_missing(x):
    return x + never_defined  # noqa: F821


def tensor_global(x):
    global g_tensor
    g_tensor = x * 2
    return g_tensor.sum()
'''


class Pair:
    def __init__(self, x, y):
        self.x = x
        self.y = y


def fresh_module():
    module = types.ModuleType("conformance_globals_module")
    module.__dict__["__builtins__"] = builtins
    module.__dict__["Pair"] = Pair  # one class for eager's module and the compiled one's
    exec(compile(MODULE_TEXT, "<conformance globals module>", "exec"), module.__dict__)  # noqa: S102
    return module


def vec_and_module(n):
    return torch.randn(n), fresh_module()


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


NS = {"torch": torch, "brk": brk}

GLOBAL_STORES = [
    ("store_global_counter", "return m.bump(x)"),
    ("store_global_counter_twice", "return m.bump_twice(x), m.bump_twice(x)"),
    ("store_global_counter_read_back", "a = m.bump(x)\nreturn a, m.g_counter"),
    ("store_new_global", "return m.make_new_global(x)"),
    ("store_global_list_item", "return m.list_item(x), m.g_list"),
    ("rebind_global_list", "a = m.rebind_list(x)\nreturn a, m.g_list"),
    ("store_global_dict_item", "return m.dict_item(x)"),
    ("rebind_global_dict", "return m.rebind_dict(x), m.g_dict"),
    ("store_global_object_attr", "return m.object_attr(x), m.g_object.y"),
    ("store_global_through_module_attr", "m.g_counter = m.g_counter + 5\nreturn x + m.g_counter"),
    ("store_global_tensor", "return m.tensor_global(x), m.g_tensor"),
    ("inline_fresh_names", "a = m.Variable(x)\nb = m.Variable(x * 2)\nreturn a.value + b.value, a.name + b.name"),
    ("inline_fresh_names_staticmethod", "a = m.Variable.constant(x)\nb = m.Variable.constant(x, 'given')\nreturn a.value + b.value, a.name + b.name"),
    ("flag_set_then_cleared", "m.set_flag_true()\nm.set_flag_false()\nreturn x + 1, m.flag"),
    ("flag_set", "m.set_flag_true()\nreturn x + m.flag"),
    ("delete_global", "m.delete_it()\nreturn x + 1, hasattr(m, 'to_delete')"),
    ("store_then_delete_global", "m.store_then_delete()\nreturn x + 1, hasattr(m, 'fleeting')"),
    ("delete_then_store_global_moves_to_end", "m.delete_then_store()\nreturn x + m.to_delete"),
    ("delete_global_twice_raises", "m.delete_twice()\nreturn x + 1"),
    ("delete_global_twice_caught", "try:\n    m.delete_twice()\nexcept NameError as e:\n    return x - 1, str(e)\nreturn x"),
    ("delete_guarded_present_then_absent", "return m.delete_guarded(x), m.delete_guarded(x)"),
    ("read_missing_global_raises", "return m.read_missing(x)"),
    ("read_missing_global_caught", "try:\n    return m.read_missing(x)\nexcept NameError:\n    return x * 0"),
    ("store_global_then_break", "a = m.bump(x)\nbrk()\nb = m.bump(x)\nreturn a, b"),
    ("rebind_global_list_across_break", "a = m.rebind_list(x)\nbrk()\nreturn a + m.rebind_list(x)"),
    ("delete_global_across_break", "m.delete_it()\nbrk()\nreturn x + 1, 'to_delete' in vars(m)"),
    ("namespace_read_after_store", "m.bump(x)\nm.make_new_global(x)\nreturn x + vars(m)['g_counter'], 'g_counter_new' in vars(m), m.__dict__.get('g_counter')"),
    ("namespace_written_then_function_reads", "vars(m)['g_counter'] = 7\nreturn m.bump(x), m.g_counter"),
    ("namespace_updated_then_attribute_read", "m.__dict__.update(g_counter=9, extra=1)\nreturn x + m.g_counter, m.extra"),
    ("setattr_on_module_then_function_reads", "setattr(m, 'g_counter', 4)\nreturn m.bump(x), getattr(m, 'g_counter')"),
]
snippets("dynamo/test_global", "global2", GLOBAL_STORES, namespace=NS, params="x, m", make_args=vec_and_module)


def start_value(n):
    return torch.randn(n), n * 2 - 3


OWN_GLOBALS = [
    ("own_global_counter", "global G\nG = k\nval = x + G\nG += 1\nreturn val, G"),
    ("own_global_created_inside", "global H\nH = x + k\nreturn x + H"),
    ("own_global_list_rebound", "global L\nL = [k, k + 1]\nL = [v * 2 for v in L]\nreturn x + L[1], L"),
    ("own_global_deleted_after_store", "global D\nD = k\ndel D\nreturn x + k, 'D' in globals()"),
]
snippets("dynamo/test_global", "global2_own", OWN_GLOBALS, namespace=NS, params="x, k", make_args=start_value)


# ---- test_python_autograd: a pure-Python tape autograd ----------------------------------------
_name = 0


def fresh_name() -> str:
    global _name
    r = f"v{_name}"
    _name += 1
    return r


class Variable:
    def __init__(self, value, name=None):
        self.value = value
        self.name = name or fresh_name()

    @staticmethod
    def constant(value, name=None):
        return Variable(value, name)

    def __mul__(self, rhs):
        return operator_mul(self, rhs)

    def __add__(self, rhs):
        return operator_add(self, rhs)

    def sum(self, name=None):
        return operator_sum(self, name)

    def expand(self, sizes):
        return operator_expand(self, sizes)


class TapeEntry(NamedTuple):
    inputs: list
    outputs: list
    propagate: Callable


gradient_tape: list = []


def reset_tape():
    gradient_tape.clear()
    global _name
    _name = 0


def grad(L, desired_results):
    dL_d = {L.name: Variable(torch.ones(()))}

    def gather_grad(entries):
        return [dL_d[entry] if entry in dL_d else None for entry in entries]

    for entry in reversed(gradient_tape):
        dL_doutputs = gather_grad(entry.outputs)
        if all(d is None for d in dL_doutputs):
            continue
        dL_dinputs = entry.propagate(dL_doutputs)
        for input_name, dL_dinput in zip(entry.inputs, dL_dinputs):
            if input_name not in dL_d:
                dL_d[input_name] = dL_dinput
            else:
                dL_d[input_name].value += dL_dinput.value
    return gather_grad(desired.name for desired in desired_results)


def operator_mul(self, rhs):
    if isinstance(rhs, float) and rhs == 1.0:
        return self
    r = Variable(self.value * rhs.value)

    def propagate(dL_doutputs):
        (dL_dr,) = dL_doutputs
        return [dL_dr * rhs, dL_dr * self]

    gradient_tape.append(TapeEntry(inputs=[self.name, rhs.name], outputs=[r.name], propagate=propagate))
    return r


def operator_add(self, rhs):
    r = Variable(self.value + rhs.value)

    def propagate(dL_doutputs):
        (dL_dr,) = dL_doutputs
        return [dL_dr * 1.0, dL_dr * 1.0]

    gradient_tape.append(TapeEntry(inputs=[self.name, rhs.name], outputs=[r.name], propagate=propagate))
    return r


def operator_sum(self, name):
    r = Variable(torch.sum(self.value), name=name)

    def propagate(dL_doutputs):
        (dL_dr,) = dL_doutputs
        return [dL_dr.expand(*self.value.size())]

    gradient_tape.append(TapeEntry(inputs=[self.name], outputs=[r.name], propagate=propagate))
    return r


def operator_expand(self, sizes):
    r = Variable(self.value.expand(sizes))

    def propagate(dL_doutputs):
        (dL_dr,) = dL_doutputs
        return [dL_dr.sum()]

    gradient_tape.append(TapeEntry(inputs=[self.name], outputs=[r.name], propagate=propagate))
    return r


def simple(a, b):
    t = a + b
    return t * b


def values(vs):
    return [None if v is None else (v.name, v.value) for v in vs]


NS_AUTOGRAD = {"torch": torch, "Variable": Variable, "simple": simple, "grad": grad, "reset_tape": reset_tape,
               "values": values, "gradient_tape": gradient_tape, "brk": brk}

AUTOGRAD = [
    ("forwards_named", "reset_tape()\na = Variable.constant(a, name='a')\nb = Variable.constant(b, name='b')\nloss = simple(a, b).sum()\nreturn loss.value, loss.name, len(gradient_tape)"),
    ("forwards_tape_reset_twice", "reset_tape()\na = Variable.constant(a, name='a')\nb = Variable.constant(b, name='b')\nloss = simple(a, b).sum()\nreset_tape()\nreturn loss.value, loss.name, len(gradient_tape)"),
    ("backwards_named", "reset_tape()\na = Variable.constant(a, name='a')\nb = Variable.constant(b, name='b')\nloss = simple(a, b).sum()\nreturn values(grad(loss, [a, b]))"),
    ("backwards_fresh_names", "reset_tape()\na = Variable.constant(a)\nb = Variable.constant(b)\nloss = simple(a, b).sum()\nreturn values(grad(loss, [a, b])), a.name, b.name"),
    ("backwards_unused_input_none", "reset_tape()\na = Variable.constant(a, name='a')\nb = Variable.constant(b, name='b')\nc = Variable.constant(a.value * 0, name='c')\nloss = (a * b).sum()\nreturn values(grad(loss, [a, b, c]))"),
    ("backwards_accumulates_shared_use", "reset_tape()\na = Variable.constant(a, name='a')\nloss = (a * a + a).sum()\nreturn values(grad(loss, [a]))"),
    ("backwards_peephole_mul_by_one", "reset_tape()\na = Variable.constant(a, name='a')\nb = a * 1.0\nreturn b is a, len(gradient_tape)"),
    ("forward_then_break_then_backward", "reset_tape()\na = Variable.constant(a, name='a')\nb = Variable.constant(b, name='b')\nloss = simple(a, b).sum()\nbrk()\nreturn values(grad(loss, [a, b]))"),
]
snippets("dynamo/test_python_autograd", "python_autograd2", AUTOGRAD, namespace=NS_AUTOGRAD, params="a, b",
         make_args=lambda n: (torch.randn(n), torch.randn(n)))


# ---- test_recompiles ---------------------------------------------------------------------------
class SimpleDropout(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout = torch.nn.Dropout(0.5)
        self.linear = torch.nn.Linear(6, 1)

    def forward(self, x):
        return self.dropout(self.linear(x))


def closure_over(i):
    def g(y):
        return y + i

    return g


def random_flag(n):
    return bool(torch.randint(0, 2, ()).item()), torch.randn(n)


NS_RECOMPILES = {"torch": torch, "closure_over": closure_over}

RECOMPILES = [
    ("bool_flag_flops", "if flag:\n    return y * 2\nreturn y * y", {"params": "flag, y", "make_args": random_flag}),
    ("tensor_or_scalar_second", "return x * y", {"params": "x, y", "make_args": lambda n: (torch.randn(n), torch.randn(n) if n < 5 else 3)}),
    ("scalar_changes_per_call", "return x * y + y", {"params": "x, y", "make_args": lambda n: (torch.randn(n), int(torch.randint(0, 9, ())))}),
    ("aliasing_inputs_mutation", "a.add_(b)\nreturn c + 1", {"params": "a, b, c", "make_args": lambda n: (lambda t: (t, torch.randn(n), t) if n > 4 else (t, torch.randn(n), torch.randn(n)))(torch.randn(n))}),
    ("aliasing_same_tensor_twice", "a.add_(b)\nreturn c + 1, a is c", {"params": "a, b, c", "make_args": lambda n: (lambda t: (t, torch.randn(n), t))(torch.randn(n))}),
    ("aliasing_view_inputs", "a.mul_(2)\nreturn b.sum(), b", {"params": "a, b", "make_args": lambda n: (lambda t: (t, t[1:]))(torch.randn(n))}),
    ("parameter_matmul_sizes", "return x @ w", {"params": "x, w", "make_args": lambda n: (torch.nn.Parameter(torch.randn(n, 3)), torch.nn.Parameter(torch.randn(3, 2)))}),
    ("module_train_eval_flips", "m.eval()\na = m(x)\nm.train()\nb = m(x)\nreturn a, b.shape, m.training", {"params": "m, x", "make_args": lambda n: (SimpleDropout(), torch.randn(n, 6)), "exact_rng": False}),
    ("module_eval_output", "m.eval()\nreturn m(x)", {"params": "m, x", "make_args": lambda n: (SimpleDropout(), torch.randn(n, 6))}),
    ("closure_over_changing_int", "return g(x)", {"params": "x, g", "make_args": lambda n: (torch.randn(5), closure_over(int(torch.randint(0, 10, ()))))}),
    ("nested_calls_with_int", "def h(x, n):\n    return x + n\ndef g(x, n):\n    return h(x + n, n)\nreturn g(x + n, n)", {"params": "x, n", "make_args": lambda n: (torch.ones(3), int(torch.randint(0, 10, ())))}),
    ("size_branch_small_sizes", "if x.size(0) < 10:\n    return x * 1\nreturn x + 10", {"params": "x", "make_args": lambda n: (torch.zeros(n - 4),), "sizes": (5, 4)}),
    ("size_branch_zero_and_one", "if x.size(0) < 2:\n    return x * 1\nreturn x + 10", {"params": "x", "make_args": lambda n: (torch.randn(n - 3),), "sizes": (4, 3)}),
    ("dtype_changes", "return (x * 2).sum(), x.dtype", {"params": "x", "make_args": lambda n: (torch.randn(n).to(torch.float64 if n > 4 else torch.float32),)}),
    ("requires_grad_changes", "return x * 2, x.requires_grad", {"params": "x", "make_args": lambda n: (torch.randn(n, requires_grad=n > 4),)}),
    ("grad_mode_changes_inside", "with torch.set_grad_enabled(x.shape[0] > 4):\n    y = x * 2\nreturn y, y.requires_grad", {"params": "x", "make_args": lambda n: (torch.randn(n, requires_grad=True),)}),
]
snippets("dynamo/test_recompiles", "recompiles2", RECOMPILES, namespace=NS_RECOMPILES)


# ---- test_sources --------------------------------------------------------------------------------
def external_property():
    closed_value = 7

    def internal_function(self):
        return closed_value

    return internal_function


class Elements:
    myprop = property(external_property())


class CausalLMOutputWithPast:
    value = 5


NS_SOURCES = {"torch": torch, "Elements": Elements, "CausalLMOutputWithPast": CausalLMOutputWithPast}

SOURCES = [
    ("property_getter_is_closure", "e = Elements()\nif not e.myprop:\n    return torch.tensor([1, 2, 3]) + x.sum()\nreturn torch.tensor([4, 5, 6]) + x.sum()"),
    ("property_getter_closure_value", "return x * Elements().myprop"),
    ("class_attribute_value_branch", "if CausalLMOutputWithPast.value == 5:\n    return torch.sin(x)\nreturn torch.cos(x)"),
    ("class_attribute_type_compare", "if type(CausalLMOutputWithPast.value) is int:\n    return torch.sin(x)\nreturn torch.cos(x)"),
]
snippets("dynamo/test_sources", "sources2", SOURCES, namespace=NS_SOURCES)


# ---- test_base_output: a diffusers-like BaseOutput ------------------------------------------------
class BaseOutput(collections.OrderedDict):
    """Like diffusers' BaseOutput: a dataclass that is also an ordered dict of its non-None fields."""

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                self[field.name] = value

    def __getitem__(self, k):
        if isinstance(k, str):
            return dict(self.items())[k]
        return self.to_tuple()[k]

    def __setattr__(self, name, value):
        if name in self.keys() and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


@dataclasses.dataclass
class UNet2DOutput(BaseOutput):
    sample: torch.Tensor = None


NS_OUTPUT = {"torch": torch, "UNet2DOutput": UNet2DOutput}

BASE_OUTPUT = [
    ("create", "return UNet2DOutput(x + 1)", {"params": "x"}),
    ("assign_field", "tmp = UNet2DOutput(x + 1)\ntmp.sample = x + 2\nreturn tmp, tmp['sample'], list(tmp.keys())", {"params": "x"}),
    ("getattr_input", "return obj.sample * 10", {"params": "obj", "make_args": lambda n: (UNet2DOutput(sample=torch.randn(n)),)}),
    ("getitem_key_input", "return obj['sample'] * 10", {"params": "obj", "make_args": lambda n: (UNet2DOutput(sample=torch.randn(n)),)}),
    ("to_tuple_input", "a = obj.to_tuple()\nreturn a[0] * 10, len(a)", {"params": "obj", "make_args": lambda n: (UNet2DOutput(sample=torch.randn(n)),)}),
    ("index_input", "return obj[0] * 10", {"params": "obj", "make_args": lambda n: (UNet2DOutput(sample=torch.randn(n)),)}),
    ("none_field_left_out", "out = UNet2DOutput()\nreturn x, len(out), out.sample is None", {"params": "x"}),
]
snippets("dynamo/test_base_output", "base_output2", BASE_OUTPUT, namespace=NS_OUTPUT)


# ---- test_interop: fx, script and traced functions called inside ------------------------------------
def interop_fn(a, b):
    return a + b * 0.67


fx_fn = torch.fx.symbolic_trace(interop_fn)
NS_INTEROP = {"torch": torch, "fx_fn": fx_fn}

INTEROP = [
    ("fx_graph_module_called", "return fx_fn(a, b) + 1"),
    ("fx_graph_module_code_read", "return fx_fn(a, b) * 2, 'add' in fx_fn.code"),
    ("vmap_of_transpose", "return torch.vmap(torch.Tensor.t)(a.reshape(a.shape[0], 1, 1).expand(-1, 2, 3)) + 1"),
]
snippets("dynamo/test_interop", "interop2", INTEROP, namespace=NS_INTEROP, params="a, b",
         make_args=lambda n: (torch.randn(n), torch.randn(n)))
