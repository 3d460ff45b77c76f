"""max-autotune's matmuls: the Triton template (runtime/matmul_template.py) where timing says it
beats the aten call, as torch.compile's `max_autotune` does with its mm templates.

A matmul takes the template only when all of these hold; otherwise it stays the aten extern
(lowering/matmul_padding.py, which may pad it):

- the graph's options ask for it: `max_autotune` on, and `max_autotune_gemm_backends`
  naming TRITON (the default "ATEN,TRITON" times both; "TRITON" forces the template);
- the operands' device prints Triton kernels (CUDA, or CPU with `cpu_backend="triton"`);
- every size and stride is static (a symbolic M keeps the aten call, which serves every
  size: the template is chosen for one), the dtype is fp16, bf16 or fp32 (all operands
  alike), alpha and beta are Python numbers, every operand and the result have between 1
  and 2**31 - 1 elements (the kernel indexes in int32) and a batch fits a grid dim;
- runtime/matmul_autotune.py chooses a template config: timed on CUDA, untimed under the
  interpreter only when TRITON is the one backend allowed.

The template is an extern call in the wrapper, `matmul(a, b, bias, alpha=.., beta=..,
epilogue=.., block_m=.., ...)`, writing a new row-major tensor in eager's dtype. An activation
that is a matmul's only reader (relu, gelu, silu, sigmoid, tanh) is marked on both nodes before
lowering (passes/matmul_epilogues.py); the template applies it before its store, and the
activation's node then lowers to its input as it is. With the aten call the activation lowers
as the separate pointwise op it is. Other consumers are separate kernels.
"""

from __future__ import annotations

import math

import sympy
import torch

from ..context import current_graph
from ..ir import Buffer, ExternKernel, IRNode, Layout, ReinterpretView, storage_of
from ..runtime.matmul_autotune import MatmulProblem, choose
from .extern import layout_of

# The runtime function the wrapper calls (codegen/wrapper.py binds `inductor.` names at load).
TEMPLATE_KERNEL = "inductor.runtime.matmul_template.matmul"

TEMPLATE_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
MAX_ELEMENTS = 2**31 - 1  # int32 offsets in the kernel
MAX_BATCH = 65535         # the grid's second dim

aten = torch.ops.aten
_OP_NAMES = {aten.mm.default: "mm", aten.addmm.default: "addmm", aten.bmm.default: "bmm",
             aten.baddbmm.default: "baddbmm"}


# FX node meta keys (passes/matmul_epilogues.py): on a matmul, the name of the activation that
# is its only reader; on that activation, the matmul node.
EPILOGUE_KEY = "matmul_epilogue"
FOLDED_INTO_KEY = "folded_into_matmul"

# Activations a template applies before its store: (aten op, its kwargs) by epilogue name
# (runtime/matmul_template.py EPILOGUES).
EPILOGUE_OPS = {
    "relu": (aten.relu.default, {}), "gelu": (aten.gelu.default, {}),
    "gelu_tanh": (aten.gelu.default, {"approximate": "tanh"}), "silu": (aten.silu.default, {}),
    "sigmoid": (aten.sigmoid.default, {}), "tanh": (aten.tanh.default, {}),
}


def epilogue_name(node) -> str | None:
    """The epilogue an FX node computes from its one tensor argument, if it is one of ours."""
    kwargs = {k: v for k, v in node.kwargs.items() if (k, v) != ("approximate", "none")}  # gelu's default
    if len(node.args) != 1:
        return None
    return next((name for name, (op, op_kwargs) in EPILOGUE_OPS.items() if node.target is op and kwargs == op_kwargs),
                None)


def may_take_template(options, targets, device: torch.device, val) -> bool:
    """Whether a matmul on `device` returning `val` (its traced value) may become a template:
    what the options, the device and static sizes decide before lowering (the rest is `_problem`'s)."""
    return (options.max_autotune and "TRITON" in options.gemm_backends.split(",")
            and device.type in targets.by_device and targets.backend(device).name == "triton"
            and isinstance(val, torch.Tensor) and val.dtype in TEMPLATE_DTYPES
            and all(type(s) is int for s in val.shape))


def template_matmul(op, bias, a: IRNode, b: IRNode, kwargs: dict, epilogue: str = "none") -> IRNode | None:
    """The template call for `op` on (bias,) a, b (then `epilogue`), or None where the aten call stays."""
    graph = current_graph()
    options = graph.options
    device = a.device
    if not options.max_autotune or not may_take_template(options, graph.targets, device, graph.current_val()):
        return None
    problem = _problem(op, bias, a, b, kwargs, device, epilogue)
    if problem is None:
        return None
    config = choose(problem, options.gemm_backends)
    if config is None:
        return None
    args = (graph.realize(a), graph.realize(b), None if bias is None else graph.realize(bias))
    call_kwargs = {"alpha": problem.alpha, "beta": problem.beta, "epilogue": epilogue, **config.as_kwargs()}
    kernel = ExternKernel(graph.new_name(), layout_of(graph.current_val(), graph, device), TEMPLATE_KERNEL, args,
                          call_kwargs, False, False)
    if epilogue != "none":
        graph.applied_epilogues.add(graph.current_node)
    return graph.register_extern(kernel)


def _problem(op, bias, a, b, kwargs, device, epilogue) -> MatmulProblem | None:
    """The matmul as the template would run it, or None when the template cannot take it."""
    operands = [a, b] if bias is None else [a, b, bias]
    layouts = [_static_layout(x) for x in operands]
    scale = [kwargs.get("alpha", 1), kwargs.get("beta", 1)]
    if None in layouts or a.dtype not in TEMPLATE_DTYPES or any(x.dtype != a.dtype for x in operands) \
            or not all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scale):
        return None
    sizes = [size for size, _ in layouts] + [_output_size()]
    if any(math.prod(size) > MAX_ELEMENTS or 0 in size for size in sizes):  # size 0: nothing worth a kernel
        return None
    if len(a.size) == 3 and int(a.size[0]) > MAX_BATCH:
        return None
    return MatmulProblem(_OP_NAMES[op], layouts[0], layouts[1], layouts[2] if bias is not None else None,
                         a.dtype, device, float(scale[0]), float(scale[1]), epilogue)


def _output_size() -> tuple[int, ...]:
    return tuple(int(s) for s in current_graph().current_val().shape)


def _static_layout(x: IRNode) -> tuple[tuple, tuple] | None:
    """(size, stride) as the operand will be passed (a computed value is realized dense), or
    None where any is symbolic."""
    layout = x.layout if isinstance(x, (Buffer, ReinterpretView)) and storage_of(x) is not None else \
        Layout.contiguous(x.device, x.dtype, x.size)
    values = (*layout.size, *layout.stride)
    if not all(isinstance(v, (int, sympy.Integer)) for v in values):
        return None
    return tuple(int(s) for s in layout.size), tuple(int(s) for s in layout.stride)
