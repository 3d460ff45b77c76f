"""One Triton kernel running the pointwise kernels of a ComboKernel (combo_kernels.py).

Each member becomes a `@triton.jit` function of its own program id (identical members, such
as the same cast in every layer, share one); the combo kernel gives each member the range of
program ids its element count needs, in member order:

    pid = tl.program_id(0)
    end0 = tl.cdiv(k0_xnumel, XBLOCK)
    if pid < end0:
        member_(k0_in_ptr0, k0_out_ptr0, k0_xnumel, pid, XBLOCK)
    end1 = end0 + tl.cdiv(k1_xnumel, XBLOCK)
    if (pid >= end0) & (pid < end1):
        member_(k1_in_ptr0, k1_out_ptr0, k1_xnumel, pid - end0, XBLOCK)

The launcher (runtime/triton_launch.py) launches sum(cdiv(xnumel, XBLOCK)) programs.
"""

from __future__ import annotations

from ...cache import digest
from ...runtime.triton_configs import KIND_COMBO
from .module_text import indent, kernel_function, module_head, pointer_types


def combo_module(members: list) -> tuple[str, str]:
    """(module source, kernel function name) for printed pointwise TritonKernels."""
    functions: dict[str, str] = {}
    pointers: dict[str, str] = {}
    numels, body = [], ["pid = tl.program_id(0)"]
    for k, member in enumerate(members):
        params, text = kernel_function(member, member.body_lines, program_id="pid")
        *pointer_params, numel, block = params  # [..pointers, "xnumel", "XBLOCK: tl.constexpr"]
        function = f"@triton.jit\ndef MEMBER({', '.join([*pointer_params, numel, 'pid', block])}):\n{text}\n"
        name = f"member_{digest(function)[:12]}"
        functions[name] = function.replace("MEMBER", name)
        pointers.update({f"k{k}_{p}": t for p, t in pointer_types(member).items()})
        numels.append(f"k{k}_xnumel")
        start = f"end{k - 1}" if k else "0"
        body.append(f"end{k} = {start + ' + ' if k else ''}tl.cdiv(k{k}_xnumel, XBLOCK)")
        body.append(f"if pid < end{k}:" if not k else f"if (pid >= {start}) & (pid < end{k}):")
        arguments = [*(f"k{k}_{p}" for p in pointer_params), f"k{k}_xnumel", f"pid - {start}" if k else "pid", "XBLOCK"]
        body.append(f"    {name}({', '.join(arguments)})")
    source = "\n".join([
        f"# A combo kernel: {len(members)} pointwise kernels in one launch",
        *module_head(KIND_COMBO, pointers),
        f"NUMELS = {len(members)}",
        "",
        "",
        *(text for text in functions.values()),
        "",
        "@triton.jit",
        f"def KERNEL_NAME({', '.join([*pointers, *numels, 'XBLOCK: tl.constexpr'])}):",
        *indent(body),
        "",
    ])
    function_name = f"combo_{digest(source)[:12]}"
    return source.replace("KERNEL_NAME", function_name), function_name
