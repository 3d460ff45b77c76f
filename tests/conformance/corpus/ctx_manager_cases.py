"""Cases modelled on dynamo's test_ctx_manager: grad mode (no_grad, enable_grad,
set_grad_enabled as a manager and as a function, torch._C._set_grad_enabled), inference_mode,
autocast, default dtype, user context managers (classes and @contextmanager generators) that
save and restore global state, nesting, exceptions raised and caught inside them, graph breaks
inside them, and managers whose arguments change between calls. Results report the state
they saw (is_grad_enabled, requires_grad, dtypes), so a manager left entered, restored too early
or folded to the first call's argument shows as a wrong value."""

import contextlib
import random

import torch

from . import snippets

SOURCE = "dynamo/test_ctx_manager"


class GradModeSetter:
    """A class manager that flips grad mode through torch._C and restores what it saw."""

    def __init__(self, mode):
        self.prev = torch.is_grad_enabled()
        self.mode = mode

    def __enter__(self):
        torch._C._set_grad_enabled(self.mode)

    def __exit__(self, exc_type, exc_value, traceback):
        torch._C._set_grad_enabled(self.prev)


@contextlib.contextmanager
def grad_mode_generator(mode):
    prev = torch.is_grad_enabled()
    try:
        yield torch._C._set_grad_enabled(mode)
    finally:
        torch._C._set_grad_enabled(prev)


@contextlib.contextmanager
def default_dtype(dtype):
    old = torch.get_default_dtype()
    try:
        torch.set_default_dtype(dtype)
        yield
    finally:
        torch.set_default_dtype(old)


@contextlib.contextmanager
def compute_sin(x):
    try:
        yield x.sin()
    finally:
        pass


class Counting:
    """A manager with state of its own, passed in as an input and compared afterwards."""

    def __init__(self, scale):
        self.scale = scale
        self.entered = 0
        self.exited = 0
        self.last_exc = None

    def __enter__(self):
        self.entered += 1
        return self.scale

    def __exit__(self, exc_type, exc, tb):
        self.exited += 1
        self.last_exc = exc_type.__name__ if exc_type else None
        return False


class Suppressing(Counting):
    def __exit__(self, exc_type, exc, tb):
        super().__exit__(exc_type, exc, tb)
        return exc_type is not None and issubclass(exc_type, ArithmeticError)


STATE = {"depth": 0}


@contextlib.contextmanager
def depth_tracker():
    STATE["depth"] += 1
    try:
        yield STATE["depth"]
    finally:
        STATE["depth"] -= 1


NS = {
    "torch": torch, "contextlib": contextlib, "GradModeSetter": GradModeSetter, "grad_mode_generator": grad_mode_generator,
    "default_dtype": default_dtype, "compute_sin": compute_sin, "Counting": Counting, "Suppressing": Suppressing,
    "depth_tracker": depth_tracker, "STATE": STATE,
}


def grad_vec(n):
    return (torch.randn(n, requires_grad=True),)


def grad_vec_flag(n):
    return torch.randn(n, requires_grad=True), random.choice((True, False))


def grad_vec_flag2(n):
    return torch.randn(n, requires_grad=True), random.choice((True, False)), random.choice((True, False))


def grad_vec_counting(n):
    return torch.randn(n, requires_grad=True), Counting(random.choice((2.0, 3.0)))


def grad_vec_suppressing(n):
    return torch.randn(n, requires_grad=True), Suppressing(random.choice((2.0, 3.0)))


def matrices(n):
    return torch.randn(n, 4), torch.randn(4, n)


def matrices_flag(n):
    return torch.randn(n, 4), torch.randn(4, n), random.choice((True, False))


GRAD = [
    ("no_grad_middle", "y = x + 1\nwith torch.no_grad():\n    y = y + 2\ny = y * 3\nreturn y, y.requires_grad"),
    ("set_grad_enabled_false_block", "y = x + 1\nwith torch.set_grad_enabled(False):\n    z = y * 2\nreturn y + z, z.requires_grad"),
    ("enable_grad_block", "with torch.enable_grad():\n    y = x * 2\nreturn y, y.requires_grad"),
    ("set_grad_enabled_true_reads_mode", "y = x\nwith torch.set_grad_enabled(True):\n    if torch.is_grad_enabled():\n        y = x + 1\nreturn y * 2"),
    ("set_grad_enabled_by_argument", "with torch.set_grad_enabled(flag):\n    y = x * 2\nreturn y, y.requires_grad, torch.is_grad_enabled()", {"params": "x, flag", "make_args": grad_vec_flag}),
    ("set_grad_enabled_by_two_arguments_nested", "with torch.set_grad_enabled(a):\n    y = x * 2\n    with torch.set_grad_enabled(b):\n        z = y * 3\n        inner = torch.is_grad_enabled()\n    w = z + y\nreturn w, w.requires_grad, z.requires_grad, inner", {"params": "x, a, b", "make_args": grad_vec_flag2}),
    ("set_grad_enabled_function_restored", "prev = torch.is_grad_enabled()\ntorch.set_grad_enabled(False)\ny = x * 2\ntorch.set_grad_enabled(prev)\nz = x * 3\nreturn y, z, y.requires_grad, z.requires_grad"),
    ("set_grad_enabled_function_by_argument", "prev = torch.is_grad_enabled()\ntorch.set_grad_enabled(flag)\ny = x.sin()\nmode = torch.is_grad_enabled()\ntorch.set_grad_enabled(prev)\nreturn y, y.requires_grad, mode", {"params": "x, flag", "make_args": grad_vec_flag}),
    ("set_grad_enabled_function_across_break", "prev = torch.is_grad_enabled()\ntorch.set_grad_enabled(False)\na = x + 1\nprint('break')\nret = a * 2\ntorch.set_grad_enabled(prev)\nreturn ret, ret.requires_grad, torch.is_grad_enabled()"),
    ("torch_c_set_grad_enabled", "torch._C._set_grad_enabled(False)\ny = x * 2\ntorch._C._set_grad_enabled(True)\nreturn y + x, y.requires_grad"),
    ("nested_no_grad_enable_grad_no_grad", "with torch.no_grad():\n    a = x * 2\n    with torch.enable_grad():\n        b = x * 3\n        with torch.no_grad():\n            c = x * 4\n        d = b + c\n    e = d * 2\nreturn a + e, [t.requires_grad for t in (a, b, c, d, e)]"),
    ("nested_grad_mode_graph_breaks", "before = torch.is_grad_enabled()\nwith torch.set_grad_enabled(False):\n    print('break 1')\n    with torch.set_grad_enabled(True):\n        y = torch.mul(x, 5)\n        print('break 2')\n        y = torch.sqrt(y.abs())\n        inner = torch.is_grad_enabled()\n    outer = torch.is_grad_enabled()\nreturn y, y.requires_grad, inner, outer, torch.is_grad_enabled() == before"),
    ("break_inside_no_grad", "with torch.no_grad():\n    y = x * 2\n    print('break')\n    z = y + x\nreturn z, z.requires_grad, torch.is_grad_enabled()"),
    ("break_inside_enable_grad_inside_no_grad", "with torch.no_grad():\n    with torch.enable_grad():\n        y = x * 2\n        print('break')\n        z = y * x\n    w = z + 1\nreturn z, w, z.requires_grad, w.requires_grad"),
    ("exception_caught_outside_no_grad", "try:\n    with torch.no_grad():\n        y = x * 2\n        raise ValueError('inside')\nexcept ValueError:\n    y = x * 3\nreturn y, y.requires_grad, torch.is_grad_enabled()"),
    ("exception_caught_outside_enable_grad_in_no_grad", "with torch.no_grad():\n    try:\n        with torch.enable_grad():\n            raise KeyError('k')\n    except KeyError:\n        mode = torch.is_grad_enabled()\n    y = x * 2\nreturn y, y.requires_grad, mode"),
    ("exception_propagates_from_no_grad", "with torch.no_grad():\n    y = x * 2\n    raise RuntimeError('escapes')\nreturn y"),
    ("exception_in_set_grad_enabled_function_region", "prev = torch.is_grad_enabled()\ntry:\n    torch.set_grad_enabled(False)\n    y = x * 2\n    raise ValueError\nexcept ValueError:\n    pass\nfinally:\n    torch.set_grad_enabled(prev)\nreturn y, y.requires_grad, torch.is_grad_enabled()"),
    ("return_inside_no_grad", "def g(t):\n    with torch.no_grad():\n        return t * 2\nr = g(x)\nreturn r, r.requires_grad, torch.is_grad_enabled()"),
    ("loop_break_inside_no_grad", "out = x\nfor i in range(4):\n    with torch.no_grad():\n        out = out + i\n        if i == 2:\n            break\nreturn out, out.requires_grad, torch.is_grad_enabled()"),
    ("loop_continue_inside_enable_grad", "out = []\nwith torch.no_grad():\n    for i in range(3):\n        with torch.enable_grad():\n            if i == 1:\n                continue\n            out.append(x * i)\nreturn out, [t.requires_grad for t in out]"),
    ("no_grad_decorator_on_helper", "@torch.no_grad()\ndef g(t):\n    return t * 2, torch.is_grad_enabled()\ny, mode = g(x)\nreturn y + x, mode, y.requires_grad"),
    ("enable_grad_decorator_inside_no_grad", "@torch.enable_grad()\ndef g(t):\n    return t * 2\nwith torch.no_grad():\n    y = g(x)\nreturn y, y.requires_grad"),
    ("no_grad_instance_reused", "ng = torch.no_grad()\nwith ng:\n    a = x * 2\nwith ng:\n    b = x * 3\nreturn a + b, (a + b).requires_grad"),
    ("grad_mode_object_as_variable", "ctx = torch.no_grad() if x.shape[0] > 5 else contextlib.nullcontext()\nwith ctx:\n    y = x * 2\nreturn y, y.requires_grad"),
    ("grad_mode_chosen_by_flag", "ctx = torch.no_grad() if flag else torch.enable_grad()\nwith ctx:\n    y = x * 2\nreturn y, y.requires_grad", {"params": "x, flag", "make_args": grad_vec_flag}),
    ("requires_grad_inside_no_grad", "with torch.no_grad():\n    w = torch.ones(x.shape[0])\n    w.requires_grad_()\n    y = w * x\nreturn w, y, y.requires_grad, w.requires_grad"),
    ("detach_inside_enable_grad", "with torch.enable_grad():\n    y = x.detach() * 2\nreturn y, y.requires_grad"),
    ("inplace_on_leaf_under_no_grad", "y = x.clone()\nwith torch.no_grad():\n    x.mul_(2)\nreturn x * y, x.requires_grad"),
    ("backward_then_no_grad_update", "loss = (x * x).sum()\n(g,) = torch.autograd.grad(loss, x)\nwith torch.no_grad():\n    new = x - 0.1 * g\nreturn new, new.requires_grad"),
    ("class_manager_torch_c_grad_mode", "with GradModeSetter(False):\n    y = x * 2\n    inner = torch.is_grad_enabled()\nreturn y, y.requires_grad, inner, torch.is_grad_enabled()"),
    ("class_manager_grad_mode_by_flag", "with GradModeSetter(flag):\n    y = x * 2\nreturn y, y.requires_grad", {"params": "x, flag", "make_args": grad_vec_flag}),
    ("generator_manager_torch_c_grad_mode", "with grad_mode_generator(False):\n    y = x * 2\nreturn y, y.requires_grad, torch.is_grad_enabled()"),
    ("generator_manager_grad_mode_exception", "try:\n    with grad_mode_generator(False):\n        y = x * 2\n        raise IndexError\nexcept IndexError:\n    pass\nreturn y, y.requires_grad, torch.is_grad_enabled()"),
    ("generator_manager_break_inside", "with grad_mode_generator(False):\n    y = x * 2\n    print('break')\n    z = y * 2\nreturn z, z.requires_grad, torch.is_grad_enabled()"),
    ("no_grad_callee_with_break", "@torch.no_grad()\ndef g(t):\n    y = t * 2\n    print('break')\n    return y * 3, torch.is_grad_enabled()\nr, mode = g(x)\nreturn r, r.requires_grad, mode, torch.is_grad_enabled()"),
    ("set_grad_enabled_false_across_break_then_restored", "torch.set_grad_enabled(False)\ny = x * 2\nprint('break')\nz = y + x\ntorch.set_grad_enabled(True)\nw = z * x\nreturn z, w, z.requires_grad, w.requires_grad"),
    ("exception_from_no_grad_callee_with_break", "def g(t):\n    with torch.no_grad():\n        print('break')\n        raise ValueError('v')\ntry:\n    g(x)\nexcept ValueError:\n    pass\ny = x * 2\nreturn y, y.requires_grad, torch.is_grad_enabled()"),
    ("enable_grad_callee_inside_no_grad_with_break", "def g(t):\n    with torch.enable_grad():\n        print('break')\n        return t * 2\nwith torch.no_grad():\n    y = g(x)\n    z = y * 2\nreturn y, z, y.requires_grad, z.requires_grad"),
    ("grad_mode_read_by_callee_across_break", "def g(t):\n    print('break')\n    return t * 2 if torch.is_grad_enabled() else t * 3\nwith torch.no_grad():\n    a = g(x)\nb = g(x)\nreturn a, b, a.requires_grad, b.requires_grad"),
    ("inference_mode_across_break", "with torch.inference_mode():\n    y = x * 2\n    print('break')\n    z = y + 1\nreturn z.clone(), z.is_inference(), torch.is_inference_mode_enabled()"),
    ("set_grad_enabled_data_dependent", "with torch.set_grad_enabled(bool(x.sum() > 0)):\n    y = x * 2\nreturn y, y.requires_grad"),
]
snippets(SOURCE, "ctx", GRAD, namespace=NS, make_args=grad_vec, params="x")

GRAD_TRAIN = [
    ("train_no_grad_part", "y = x * 2\nwith torch.no_grad():\n    s = y.sum()\nreturn y * s"),
    ("train_enable_grad_inside_no_grad", "with torch.no_grad():\n    a = x * 2\n    with torch.enable_grad():\n        b = x.sin()\nreturn a + b"),
    ("train_set_grad_enabled_flag", "with torch.set_grad_enabled(flag):\n    y = x * 3\nreturn y + x", {"params": "x, flag", "make_args": grad_vec_flag}),
    ("train_break_inside_no_grad", "with torch.no_grad():\n    s = x.sum()\n    print('break')\n    t = s * 2\nreturn x * t"),
]
snippets(SOURCE, "ctx_train", GRAD_TRAIN, namespace=NS, make_args=grad_vec, params="x", train=True)

OTHER = [
    ("inference_mode_block", "with torch.inference_mode():\n    y = x * 2\nreturn y.clone(), y.is_inference(), torch.is_inference_mode_enabled()"),
    ("inference_mode_false_nested", "with torch.inference_mode():\n    with torch.inference_mode(False):\n        y = x * 2\n        mode = torch.is_inference_mode_enabled()\nreturn y, y.is_inference(), mode"),
    ("inference_mode_by_flag", "with torch.inference_mode(flag):\n    y = x * 2\nreturn y.clone(), y.is_inference()", {"params": "x, flag", "make_args": grad_vec_flag}),
    ("inference_mode_decorator", "@torch.inference_mode()\ndef g(t):\n    return t * 2\ny = g(x)\nreturn y.clone(), y.is_inference()"),
    ("autocast_cpu_bf16_matmul", "with torch.autocast('cpu', dtype=torch.bfloat16):\n    y = a @ b\n    inner = torch.is_autocast_enabled('cpu')\nreturn y.float(), y.dtype, inner, torch.is_autocast_enabled('cpu')", {"params": "a, b", "make_args": matrices, "atol": 0.05, "rtol": 0.05}),
    ("autocast_enabled_by_flag", "with torch.autocast('cpu', dtype=torch.bfloat16, enabled=flag):\n    y = a @ b\nreturn y.float(), y.dtype", {"params": "a, b, flag", "make_args": matrices_flag, "atol": 0.05, "rtol": 0.05}),
    ("autocast_nested_disabled", "with torch.autocast('cpu', dtype=torch.bfloat16):\n    y = a @ b\n    with torch.autocast('cpu', enabled=False):\n        z = a @ b\nreturn y.float(), y.dtype, z.dtype", {"params": "a, b", "make_args": matrices, "atol": 0.05, "rtol": 0.05}),
    ("autocast_exception_restores", "try:\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        y = a @ b\n        raise ValueError\nexcept ValueError:\n    pass\nz = a @ b\nreturn z, z.dtype, torch.is_autocast_enabled('cpu')", {"params": "a, b", "make_args": matrices}),
    ("autocast_break_inside", "with torch.autocast('cpu', dtype=torch.bfloat16):\n    y = a @ b\n    print('break')\n    z = a @ b\nreturn y.float(), z.float(), z.dtype", {"params": "a, b", "make_args": matrices, "atol": 0.05, "rtol": 0.05}),
    ("autocast_decorated_function", "@torch.autocast('cpu', dtype=torch.bfloat16)\ndef g(p, q):\n    return p @ q\ny = g(a, b)\nreturn y.float(), y.dtype", {"params": "a, b", "make_args": matrices, "atol": 0.05, "rtol": 0.05}),
    ("autocast_dtype_queried", "with torch.autocast('cpu', dtype=torch.bfloat16):\n    d = torch.get_autocast_dtype('cpu')\nreturn a.sum(), d", {"params": "a, b", "make_args": matrices}),
    ("default_dtype_generator_manager", "with default_dtype(torch.float64):\n    t = torch.tensor([3.0, 3.0])\n    z = torch.zeros(2)\nreturn t, z, torch.get_default_dtype(), x"),
    ("default_dtype_set_and_restored", "old = torch.get_default_dtype()\ntorch.set_default_dtype(torch.float64)\ny = torch.ones(x.shape[0]) + x\ntorch.set_default_dtype(old)\nreturn y, torch.ones(1).dtype"),
    ("contextmanager_yields_tensor", "with compute_sin(x) as y:\n    return y.cos()"),
    ("contextmanager_nonlocal_changes", "z = 0\nk = 0\ndef create():\n    @contextlib.contextmanager\n    def ctx(t):\n        nonlocal z, k\n        try:\n            k = 100\n            yield t.sin()\n        finally:\n            z = k + 1\n    return ctx\nwith create()(x) as y:\n    r = y.cos() + k\nreturn r, z, k"),
    ("contextmanager_created_in_helper", "def create(t):\n    @contextlib.contextmanager\n    def ctx():\n        try:\n            yield t.sin()\n        finally:\n            pass\n    return ctx\ndef run(ctx):\n    with ctx() as y:\n        return y.cos()\nreturn run(create(x))"),
    ("contextmanager_break_inside_generator", "log = []\n@contextlib.contextmanager\ndef whoo(t):\n    y = t.tan()\n    try:\n        log.append('enter')\n        print('break')\n        yield y\n    finally:\n        log.append('exit')\nout = x.sin()\nwith whoo(x) as z:\n    out = out + z.neg()\nout = out + x.cos()\nreturn out, log"),
    ("contextmanager_break_in_body", "log = []\n@contextlib.contextmanager\ndef whoo(t):\n    try:\n        log.append('enter')\n        yield t + 1\n    finally:\n        log.append('exit')\nwith whoo(x) as z:\n    print('break')\n    out = z * 2\nreturn out, log"),
    ("global_state_manager_depth", "with depth_tracker() as a:\n    with depth_tracker() as b:\n        y = x * (a + b)\nreturn y, STATE['depth']"),
    ("global_state_manager_depth_exception", "try:\n    with depth_tracker() as a:\n        raise ValueError\nexcept ValueError:\n    pass\nreturn x + STATE['depth']"),
    ("stateful_manager_input", "with c as s:\n    y = x * s\nreturn y", {"params": "x, c", "make_args": grad_vec_counting}),
    ("stateful_manager_input_exception", "try:\n    with c:\n        raise KeyError('k')\nexcept KeyError:\n    pass\nreturn x * c.scale", {"params": "x, c", "make_args": grad_vec_counting}),
    ("stateful_manager_suppresses_arithmetic", "with c as s:\n    y = x * s\n    1 / 0\nreturn y", {"params": "x, c", "make_args": grad_vec_suppressing}),
    ("stateful_manager_reentered", "for _ in range(3):\n    with c as s:\n        x = x * s\nreturn x", {"params": "x, c", "make_args": grad_vec_counting}),
    ("stateful_manager_with_no_grad", "with c as s, torch.no_grad():\n    y = x * s\nreturn y, y.requires_grad", {"params": "x, c", "make_args": grad_vec_counting}),
    ("exitstack_no_grad_and_manager", "with contextlib.ExitStack() as stack:\n    s = stack.enter_context(c)\n    stack.enter_context(torch.no_grad())\n    y = x * s\nreturn y, y.requires_grad, torch.is_grad_enabled()", {"params": "x, c", "make_args": grad_vec_counting}),
    ("nullcontext_or_no_grad_by_flag", "ctx = torch.no_grad() if flag else contextlib.nullcontext()\nwith ctx:\n    y = x * 2\nreturn y, y.requires_grad", {"params": "x, flag", "make_args": grad_vec_flag}),
    ("manager_enter_exit_called_by_hand", "m = torch.no_grad()\nm.__enter__()\ny = x * 2\nm.__exit__(None, None, None)\nreturn y, y.requires_grad, torch.is_grad_enabled()"),
    ("profiler_record_function", "with torch.autograd.profiler.record_function('region'):\n    y = x ** 2\nreturn y + 1"),
    ("sdpa_kernel_math", "from torch.nn.attention import sdpa_kernel, SDPBackend\nq = x.reshape(1, 1, -1, 1).expand(1, 1, -1, 2)\nwith sdpa_kernel([SDPBackend.MATH]):\n    out = torch.nn.functional.scaled_dot_product_attention(q, q, q)\nreturn out"),
    ("generator_under_no_grad", "def gen(t):\n    with torch.no_grad():\n        yield t * 2\n    yield t * 3\nouts = list(gen(x))\nreturn outs, [o.requires_grad for o in outs], torch.is_grad_enabled()"),
    ("saved_tensors_hooks_pack_unpack", "def pack(t):\n    return t * 1\ndef unpack(t):\n    return t\nwith torch.autograd.graph.saved_tensors_hooks(pack, unpack):\n    y = x.sin()\nreturn y"),
    ("no_grad_around_module_call", "lin = torch.nn.Linear(x.shape[0], 2)\nwith torch.no_grad():\n    y = lin(x)\nreturn y.shape, y.requires_grad"),
]
snippets(SOURCE, "ctx", OTHER, namespace=NS, make_args=grad_vec, params="x")

MORE = [
    ("autocast_dtype_by_flag", "dtype = torch.bfloat16 if flag else torch.float16\nwith torch.autocast('cpu', dtype=dtype):\n    y = a @ b\nreturn y.float(), y.dtype", {"params": "a, b, flag", "make_args": matrices_flag, "atol": 0.05, "rtol": 0.05}),
    ("autocast_inside_no_grad_with_break", "with torch.no_grad():\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        y = a @ b\n        print('break')\n        z = a @ b\nreturn y.float(), z.dtype, z.requires_grad, torch.is_autocast_enabled('cpu')", {"params": "a, b", "make_args": matrices, "atol": 0.05, "rtol": 0.05}),
    ("set_autocast_enabled_function", "prev = torch.is_autocast_enabled('cpu')\ntorch.set_autocast_enabled('cpu', True)\ny = a @ b\ntorch.set_autocast_enabled('cpu', prev)\nreturn y, y.dtype", {"params": "a, b", "make_args": matrices, "atol": 0.05, "rtol": 0.05}),
    ("no_grad_and_enable_grad_in_one_with", "with torch.no_grad(), torch.enable_grad():\n    y = x * 2\nreturn y, y.requires_grad"),
    ("grad_mode_as_bool_argument_to_callee", "def g(t, mode):\n    with torch.set_grad_enabled(mode):\n        return t * 2\na = g(x, flag)\nb = g(x, not flag)\nreturn a, b, a.requires_grad, b.requires_grad", {"params": "x, flag", "make_args": grad_vec_flag}),
]
snippets(SOURCE, "ctx", MORE, namespace=NS, make_args=grad_vec, params="x")

MORE_BREAKS = [
    ("set_autocast_enabled_function_across_break", "prev = torch.is_autocast_enabled('cpu')\ntorch.set_autocast_enabled('cpu', True)\ny = a @ b\nprint('break')\nz = a @ b\ntorch.set_autocast_enabled('cpu', prev)\nw = a @ b\nreturn y.float(), z.float(), y.dtype, z.dtype, w.dtype", {"params": "a, b", "make_args": matrices, "atol": 0.05, "rtol": 0.05}),
    ("autocast_entered_by_hand", "m = torch.autocast('cpu', dtype=torch.bfloat16)\nm.__enter__()\ny = a @ b\nm.__exit__(None, None, None)\nz = a @ b\nreturn y.float(), y.dtype, z.dtype", {"params": "a, b", "make_args": matrices, "atol": 0.05, "rtol": 0.05}),
    ("inference_mode_entered_by_hand", "m = torch.inference_mode()\nm.__enter__()\ny = x * 2\nm.__exit__(None, None, None)\nreturn y.clone(), y.is_inference(), torch.is_inference_mode_enabled()"),
]
snippets(SOURCE, "ctx", MORE_BREAKS, namespace=NS, make_args=grad_vec, params="x")
