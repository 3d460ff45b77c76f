"""Rules for torch functions that are about global state rather than tensors: grad mode,
autocast and inference-mode context managers, state queries (answered now: the guards on
global state make the answer hold for every cache hit), and state setters and tensor methods
that leave the graph (`.item()`, `.tolist()`), which capture refuses rather than silently
dropping (a graph break runs them)."""

from __future__ import annotations

import contextlib

import torch

from ..errors import Unsupported
from ..values.base import NotConstant
from ..values.constant import ConstantValue
from ..values.context import AutocastContext, DecoratedByContext, GradModeContext, InferenceModeContext, NullContext
from ..values.symbolic import concrete
from ..values.tensor import REFUSED_METHODS, TensorValue
from .number_of_tensor import tolist
from .registry import construct_rule, rule, rule_named


def _constant_kwargs(args, kwargs, names, defaults):
    """The arguments of a state-switching constructor as Python constants: a symbolic size
    (`set_grad_enabled(x.shape[0] > 4)`) is specialized to its value, guarded."""
    values = dict(defaults)
    for name, arg in [*zip(names, args), *kwargs.items()]:
        try:
            values[name] = concrete(arg)
        except NotConstant:
            raise Unsupported(f"{name}={arg.describe()}: the mode a context manager switches to must be known when tracing",
                              hint="pass a Python bool (a tensor's value is known only when the graph runs)") from None
    return values


def _decorating_without_parentheses(args) -> bool:
    """`@torch.no_grad` (no call): the class receives the function and returns it decorated."""
    return len(args) == 1 and not args[0].is_python_constant()


@construct_rule(torch.no_grad, accepts="(orig_func=None, /)")
def _no_grad(frame, cls, args, kwargs):
    if _decorating_without_parentheses(args):
        return DecoratedByContext(GradModeContext(False, cls), args[0])
    return GradModeContext(False, cls)


@construct_rule(torch.enable_grad, accepts="(orig_func=None, /)")
def _enable_grad(frame, cls, args, kwargs):
    if _decorating_without_parentheses(args):
        return DecoratedByContext(GradModeContext(True, cls), args[0])
    return GradModeContext(True, cls)


@construct_rule(torch.set_grad_enabled)
def _set_grad_enabled(frame, cls, args, kwargs):
    # torch.set_grad_enabled(mode) switches the mode when constructed; used in a `with`, its
    # exit restores the mode from before the construction.
    enabled = bool(_constant_kwargs(args, kwargs, ["mode"], {})["mode"])
    previous = GradModeContext.apply(frame, enabled)
    return GradModeContext(enabled, cls, applied_now=True, previous=previous)


@construct_rule(torch.inference_mode)
def _inference_mode(frame, cls, args, kwargs):
    if _decorating_without_parentheses(args):
        return DecoratedByContext(InferenceModeContext(True), args[0])
    return InferenceModeContext(bool(_constant_kwargs(args, kwargs, ["mode"], {"mode": True})["mode"]))


@construct_rule(torch.autocast, subclasses=True)
def _autocast(frame, cls, args, kwargs):
    options = _constant_kwargs(
        args,
        kwargs,
        ["device_type", "dtype", "enabled", "cache_enabled"],
        {"dtype": None, "enabled": True, "cache_enabled": None},
    )
    device_type = options.get("device_type")
    if device_type is None:
        # torch.cuda.amp.autocast / torch.cpu.amp.autocast fix the device in their __init__.
        device_type = "cuda" if "cuda" in cls.__module__ else "cpu"
    dtype = options["dtype"]
    if dtype is None:
        dtype = torch.get_autocast_dtype(device_type)
    return AutocastContext(device_type, dtype, options["enabled"], options["cache_enabled"])


@construct_rule(contextlib.nullcontext, accepts="(enter_result=_, /)")
def _nullcontext(frame, cls, args, kwargs):
    return NullContext(args[0] if args else ConstantValue(None), cls)


# A profiler range (every `optimizer.step()` opens one) marks time, not values: torch.compile
# traces through it too. The compiled code's own time shows up under the graph's call instead.
@construct_rule(torch.autograd.profiler.record_function, accepts="(name, args=None)")
def _record_function(frame, cls, args, kwargs):
    return NullContext(ConstantValue(None), cls)


# --- state queries ------------------------------------------------------------------------------


def _query(fn):
    def handler(frame, args, kwargs):
        positional = [a.as_python_constant() for a in args]
        keywords = {k: v.as_python_constant() for k, v in kwargs.items()}
        return frame.session.wrap(fn(*positional, **keywords), None)

    return handler


for _fn in (
    torch.is_grad_enabled,
    torch.is_inference_mode_enabled,
    torch.is_autocast_enabled,
    torch.get_default_dtype,
    torch.are_deterministic_algorithms_enabled,
    torch.cuda.is_available,
    torch.cuda.device_count,
    torch.backends.mps.is_available,
):
    rule(_fn)(_query(_fn))


@rule(torch.get_autocast_dtype)
def _autocast_dtype(frame, args, kwargs):
    # The autocast guard checks the dtype only of devices where autocast is on: elsewhere the
    # setting may change unseen (torch.set_autocast_dtype), so it is read at run time.
    device = [a.as_python_constant() for a in args] + [v.as_python_constant() for v in kwargs.values()]
    if not torch.is_autocast_enabled(*device):
        _unguarded_setting(torch.get_autocast_dtype)(frame, args, kwargs)
    return frame.session.wrap(torch.get_autocast_dtype(*device), None)


@rule(torch.jit.is_scripting, torch.jit.is_tracing)
def _not_scripting(frame, args, kwargs):
    return ConstantValue(False)


@rule(torch._C._get_tracing_state)
def _no_tracing_state(frame, args, kwargs):
    return ConstantValue(None)


def _available(*names: str) -> list:
    """The torch functions among dotted `names` that this torch version has."""
    found = []
    for name in names:
        obj = torch
        for part in name.split(".")[1:]:
            obj = getattr(obj, part, None)
        if obj is not None:
            found.append(obj)
    return found


def _unguarded_setting(fn):
    def handler(frame, args, kwargs):
        raise Unsupported(
            f"torch.{fn.__name__}() reads a process setting no guard covers, which may change between calls",
            hint="the graph breaks at the call, which runs outside it; read it once outside the compiled function to keep one graph",
        )

    return handler


# Settings a graph would bake in with nothing to notice a later change (the thread count of
# `x + torch.get_num_threads()`): asked at run time instead.
for _fn in _available(
    "torch.get_num_threads", "torch.get_num_interop_threads", "torch.initial_seed", "torch.is_anomaly_enabled",
    "torch.is_anomaly_check_nan_enabled", "torch.get_float32_matmul_precision", "torch.is_warn_always_enabled",
    "torch.get_deterministic_debug_mode",
):  # fmt: skip
    rule(_fn)(_unguarded_setting(_fn))


@rule(*_available("torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling", "torch._utils.is_compiling"))
def _is_compiling(frame, args, kwargs):
    return ConstantValue(True)


@rule(*_available("torch.compiler.is_exporting"))
def _is_exporting(frame, args, kwargs):
    return ConstantValue(frame.session.exporting)


@rule_named("torch._dynamo.decorators.graph_break")
def _graph_break(frame, args, kwargs):
    # torch.optim's `_use_grad` breaks the graph around `step()` only so that torch's AOT
    # autograd sees the no_grad region as an inference graph (pytorch#104053); our graph
    # holds the grad-mode switch itself, so the step traces into one graph. Anywhere else
    # the call asks for a break, as it does of torch.compile.
    if frame.f_globals.get("__name__", "").startswith("torch.optim."):
        return ConstantValue(None)
    raise Unsupported("torch._dynamo.graph_break() called", hint="remove the call to keep one graph")


def _refuse(reason):
    def handler(frame, args, kwargs):
        raise Unsupported(reason, hint="call it before the compiled function instead of inside it")

    return handler


for _fn, _what in {
    torch.manual_seed: "torch.manual_seed() changes the global random state",
    torch.seed: "torch.seed() changes the global random state",
    torch.set_rng_state: "torch.set_rng_state() changes the global random state",
    # Read in a graph, the state would be the one at compile time on every call.
    torch.get_rng_state: "torch.get_rng_state() reads the global random state",
    torch.cuda.get_rng_state: "torch.cuda.get_rng_state() reads the global random state",
    torch.cuda.get_rng_state_all: "torch.cuda.get_rng_state_all() reads the global random state",
    torch.cuda.set_rng_state: "torch.cuda.set_rng_state() changes the global random state",
    torch.cuda.set_rng_state_all: "torch.cuda.set_rng_state_all() changes the global random state",
    torch.cuda.manual_seed: "torch.cuda.manual_seed() changes the global random state",
    torch.cuda.manual_seed_all: "torch.cuda.manual_seed_all() changes the global random state",
    torch.set_default_dtype: "torch.set_default_dtype() changes global state",
    torch.set_default_device: "torch.set_default_device() changes global state",
    torch.use_deterministic_algorithms: "torch.use_deterministic_algorithms() changes global state",
    torch.set_num_threads: "torch.set_num_threads() changes global state",
    torch.set_printoptions: "torch.set_printoptions() changes global state",
    # saved_tensors_hooks.__enter__/__exit__ (its construction breaks first, so these run
    # inlined from a native manager): the hooks are Python functions, which a graph cannot hold.
    torch._C._autograd._push_saved_tensors_default_hooks: "saved_tensors_hooks changes autograd's global hooks",
    torch._C._autograd._pop_saved_tensors_default_hooks: "saved_tensors_hooks changes autograd's global hooks",
}.items():
    rule(_fn)(_refuse(_what))


def _leaves_graph(name: str, what: str):
    def handler(frame, args, kwargs):
        raise Unsupported(
            f"Tensor.{name}() {what}, which cannot be part of a graph",
            hint="the graph breaks here and the call runs outside it; keep the value a tensor "
            "(torch.where instead of Python branching) to keep one graph",
        )

    return handler


for _name, _what in REFUSED_METHODS.items():
    if _name not in ("item", "tolist"):
        rule(getattr(torch.Tensor, _name))(_leaves_graph(_name, _what))


_refuse_item = _leaves_graph("item", REFUSED_METHODS["item"])
_refuse_tolist = _leaves_graph("tolist", REFUSED_METHODS["tolist"])


@rule(torch.Tensor.is_inference)
def _is_inference(frame, args, kwargs):
    """An input's answer is its own (its tensor guard checks it): its fake counterpart is no
    inference tensor. A tensor the graph computes answers for the mode it was computed in."""
    (tensor,) = args
    if not isinstance(tensor, TensorValue):
        raise Unsupported(f"Tensor.is_inference() of {tensor.describe()}")
    if tensor.node.op == "placeholder" and tensor.real is not None:
        return ConstantValue(tensor.real.is_inference())
    return ConstantValue(tensor.fake.is_inference())


@rule(torch.Tensor.item)
def _item(frame, args, kwargs):
    # With capture_scalar_outputs (or fullgraph) the number is an unbacked symbol (u0) computed
    # in the graph.
    if not frame.session.fake_mode.allow_scalar_outputs:
        _refuse_item(frame, args, kwargs)
    return frame.session.graph.call_method(frame, "item", args, kwargs)


@rule(torch.Tensor.tolist)
def _tolist(frame, args, kwargs):
    # With capture_scalar_outputs: nested lists of unbacked numbers, one item() per element.
    if len(args) == 1 and not kwargs and isinstance(args[0], TensorValue):
        numbers = tolist(frame, args[0])
        if numbers is not None:
            return numbers
    _refuse_tolist(frame, args, kwargs)


@construct_rule(torch.nn.Parameter)
def _parameter(frame, cls, args, kwargs):
    raise Unsupported(
        "creating an nn.Parameter inside a compiled function",
        hint="create parameters in __init__",
    )



@rule(torch.Tensor.requires_grad_)
def _requires_grad_(frame, args, kwargs):
    # Turning requires_grad on or off changes autograd state that the graph cannot hold:
    # requires_grad_(True) on a tensor that has none makes a new leaf mid-graph, and a backend
    # that traces autograd (aot_autograd) sees no input requiring grad and returns outputs
    # without grad_fn. The graph breaks at the call, which then runs on the real tensor, and
    # the rest is captured with that leaf as an input, as torch.compile does. A call that
    # leaves the flag as it is changes nothing.
    tensor, *rest = args
    requires = rest[0] if rest else kwargs.get("requires_grad", ConstantValue(True))
    fake = tensor.as_fake()
    if not requires.is_python_constant() or bool(requires.as_python_constant()) != fake.requires_grad:
        raise Unsupported(
            "Tensor.requires_grad_() changes which tensors are autograd leaves, which cannot be part of a graph",
            hint="the graph breaks here and the call runs outside it; set requires_grad before the compiled function to keep one graph",
        )
    return tensor
