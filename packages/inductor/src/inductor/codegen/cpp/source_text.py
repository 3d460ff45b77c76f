"""The text of a C++ kernel's source around its loop bodies: OpenMP loop nests (threads over
the outer loops, SIMD on the innermost), indentation, and buffers renamed by their role so that a
kernel repeated through a model prints, hashes and compiles once."""

from __future__ import annotations

import re


def named_by_role(source: str, args: dict, scratch) -> str:
    """Rename buffers by their role (in_ptr0, out_ptr0, scratch0): a layer's kernel repeated
    through a model then prints the same source, hashes the same, and compiles once."""
    roles, counts = {}, {"in_ptr": 0, "out_ptr": 0}
    for name, written in args.items():
        kind = "out_ptr" if written else "in_ptr"
        roles[name] = f"{kind}{counts[kind]}"
        counts[kind] += 1
    roles.update({name: f"scratch{k}" for k, name in enumerate(sorted(scratch))})
    if not roles:
        return source
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(roles, key=len, reverse=True))) + r")\b")
    return pattern.sub(lambda m: roles[m.group(1)], source)


def nest_loops(loops, body, *, parallel, simd, clauses, work) -> list[str]:
    """`for` loops around `body`: threads over the outer ones (collapsed), SIMD on the innermost."""
    if not loops:
        return ["{", *indent(body), "}"]
    reduction = "".join(f" reduction({clause})" for clause in clauses)
    code = body
    for depth in reversed(range(len(loops))):
        var, size, *step = loops[depth]  # (var, size) or (var, size, step)
        increment = f"{var} += {step[0]}" if step else f"++{var}"
        head = [f"for (int64_t {var} = 0; {var} < {size}; {increment})"]
        pragma = None
        if depth == len(loops) - 1 and simd and not (parallel and len(loops) == 1):
            pragma = f"#pragma omp simd{reduction}"
        if depth == 0 and parallel and work:
            condition = "" if work == "always" else f" if({work})"
            if len(loops) == 1 and simd:
                pragma = f"#pragma omp parallel for simd{reduction}{condition}"
            else:
                collapse = f" collapse({len(loops) - 1})" if simd and len(loops) > 2 else (
                    f" collapse({len(loops)})" if not simd and len(loops) > 1 else "")
                pragma = f"#pragma omp parallel for{collapse}{reduction}{condition}"
        elif depth == 0 and parallel and not work and len(loops) == 1 and simd:
            pragma = f"#pragma omp simd{reduction}"
        code = ([pragma] if pragma else []) + head + ["{", *indent(code), "}"]
    return code


def indent(lines):
    return ["    " + line for line in lines]
