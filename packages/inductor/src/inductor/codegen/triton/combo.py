"""One Triton kernel running the pointwise kernels of a ComboKernel (combo_planning.py chooses them).

Each member becomes a `@triton.jit` function of its own program id; the combo kernel gives
each member the range of program ids its element count needs, in member order. Identical
members (the same cast in every layer, whatever the printer numbered their index variables)
share one function and one call site, whose arguments are those of the member the program id
falls in: Triton inlines every call, so a call per member would compile the same body once
per member (32 casts: ~3 s for sm_90 on a 2-core CPU, ~1 s shared).

    pid = tl.program_id(0)
    end0 = tl.cdiv(k0_xnumel, XBLOCK)
    end1 = end0 + tl.cdiv(k1_xnumel, XBLOCK)
    end2 = end1 + tl.cdiv(k2_xnumel, XBLOCK)
    if (pid < end0) | ((pid >= end1) & (pid < end2)):    # members 0 and 2 run member_a
        arg0, arg1, arg2, start = k0_in_ptr0, k0_out_ptr0, k0_xnumel, 0
        later = pid >= end1
        arg0 = tl.where(later, k2_in_ptr0, arg0)
        ...
        member_a(arg0, arg1, arg2, pid - start, XBLOCK)
    if (pid >= end0) & (pid < end1):                     # member 1 runs member_b
        member_b(k1_in_ptr0, k1_out_ptr0, k1_xnumel, pid - end0, XBLOCK)

The launcher (runtime/triton_launch.py) launches sum(cdiv(xnumel, XBLOCK)) programs.
"""

from __future__ import annotations

import re

from ...cache import digest
from ...runtime.triton_configs import KIND_COMBO
from .module_text import indent, kernel_function, module_head, pointer_types, triton_jit


def combo_module(members: list) -> tuple[str, str]:
    """(module source, kernel function name) for printed pointwise TritonKernels."""
    functions: dict[str, str] = {}
    pointers: dict[str, str] = {}
    offsets: list[str] = []  # members' element offsets (kernel.py), after every pointer as in a kernel
    runs: dict[str, list[tuple[int, list[str]]]] = {}  # function -> (member, its arguments) per member running it
    numels, body = [], ["pid = tl.program_id(0)"]
    for k, member in enumerate(members):
        params, text = kernel_function(member, member.body_lines, program_id="pid")
        flag = ["error_ptr"] if member.raises else []  # the combo's own, passed on
        # [..pointers, ..offsets, "xnumel", "XBLOCK: tl.constexpr"]
        *pointer_params, numel, block = [p for p in params if p != "error_ptr"]
        signature = ", ".join([*pointer_params, numel, *flag, "pid", block])
        function = f"@triton.jit\ndef MEMBER({signature}):\n{_renumbered(text)}\n"
        offsets += [f"k{k}_{p}" for p in member.element_offsets.values()]
        name = f"member_{digest(function)[:12]}"
        functions[name] = function.replace("MEMBER", name)
        pointers.update({f"k{k}_{p}": t for p, t in pointer_types(member).items()})
        numels.append(f"k{k}_xnumel")
        body.append(f"end{k} = {f'end{k - 1} + ' if k else ''}tl.cdiv(k{k}_xnumel, XBLOCK)")
        runs.setdefault(name, []).append((k, [*(f"k{k}_{p}" for p in pointer_params), f"k{k}_xnumel", *flag]))
    for name, run in runs.items():
        body += _call_for_members(name, run)
    raises = any(member.raises for member in members)
    flag = ["error_ptr"] if raises else []
    source = "\n".join([
        f"# A combo kernel: {len(members)} pointwise kernels in one launch",
        *module_head(KIND_COMBO, pointers, raises=raises, device_asserts=any(m.device_asserts for m in members)),
        f"NUMELS = {len(members)}",
        "",
        "",
        *(text for text in functions.values()),
        "",
        triton_jit(offsets),
        f"def KERNEL_NAME({', '.join([*pointers, *offsets, *numels, *flag, 'XBLOCK: tl.constexpr'])}):",
        *indent(body),
        "",
    ])
    function_name = f"combo_{digest(source)[:12]}"
    return source.replace("KERNEL_NAME", function_name), function_name


def _renumbered(text: str) -> str:
    """`text` with its index variables (x0, x3, ...) numbered in order of appearance, so that
    members differing only in the printer's numbering share one function."""
    numbers: dict[str, str] = {}
    return re.sub(r"\bx\d+\b", lambda m: numbers.setdefault(m.group(), f"x{len(numbers)}"), text)


def _start(k: int) -> str:
    """The first program id of member k."""
    return f"end{k - 1}" if k else "0"


def _in_range(k: int) -> str:
    return f"pid < end{k}" if not k else f"(pid >= end{k - 1}) & (pid < end{k})"


def _call_for_members(name: str, run: list[tuple[int, list[str]]]) -> list[str]:
    """The call of `name` for the programs of every member in `run` (in member order): the
    member a program belongs to is the last one of `run` starting at or before its id."""
    (first, arguments), *later = run
    if not later:
        local_pid = f"pid - {_start(first)}" if first else "pid"
        return [f"if {_in_range(first)}:", f"    {name}({', '.join([*arguments, local_pid, 'XBLOCK'])})"]
    names = [f"arg{i}" for i in range(len(arguments))]
    lines = [
        "if " + " | ".join(f"({_in_range(k)})" for k, _ in run) + ":",
        f"    {', '.join([*names, 'start'])} = {', '.join([*arguments, _start(first)])}",
    ]
    for k, member_arguments in later:
        lines.append(f"    later = pid >= {_start(k)}")
        lines += [f"    {n} = tl.where(later, {a}, {n})" for n, a in zip(names, member_arguments)]
        lines.append(f"    start = tl.where(later, {_start(k)}, start)")
    lines.append(f"    {name}({', '.join([*names, 'pid - start', 'XBLOCK'])})")
    return lines
