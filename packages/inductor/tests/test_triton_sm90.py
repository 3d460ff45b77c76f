"""Generated Triton kernels compile for sm_90 (H100/H200) with Triton's real compiler.

No GPU is needed: Triton compiles a kernel down to a cubin on the host. The interpreter
tests check what kernels compute; this checks that the same source is valid for the JIT
(constexprs, shapes, dtypes, loop-carried types), which the interpreter does not enforce.
The compiling runs in a subprocess, since this session runs Triton in its interpreter.

    python packages/inductor/tests/test_triton_sm90.py            compile the cases below
    python packages/inductor/tests/test_triton_sm90.py DIR        compile every kernel under DIR
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest
import torch

aten = torch.ops.aten

# Block sizes to compile each kind of kernel with: several rows per program, the general case
# of the [XBLOCK, RBLOCK] shapes (XBLOCK=1 specializes them).
CONFIGS = {
    "pointwise": [dict(XBLOCK=1024, num_warps=4)],
    "combo": [dict(XBLOCK=1024, num_warps=4)],
    "tiled": [dict(XBLOCK=64, RBLOCK=64, num_warps=4)],
    "persistent": [dict(XBLOCK=8, RBLOCK=64, num_warps=2)],
    "looped": [dict(XBLOCK=4, RBLOCK=256, num_warps=4)],
}


def _cases():
    """(name, fn, inputs): graphs whose kernels cover the printer's paths."""
    f32 = torch.randn(8, 33)
    long_rows = torch.randn(4, 1500)
    unary = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
             "sinh", "cosh", "asin", "acos", "atan", "erf", "erfc", "sigmoid", "reciprocal", "floor", "ceil", "round",
             "trunc", "sign", "abs", "neg", "isnan", "isinf", "isfinite", "lgamma", "signbit"]

    def all_unary(x):
        return tuple(getattr(aten, name).default(x) for name in unary)

    def binary(a, b):
        return (aten.remainder.Tensor(a, b), aten.floor_divide.default(a, b), aten.fmod.Tensor(a, b),
                aten.pow.Tensor_Tensor(a, b), aten.atan2.default(a, b), aten.maximum.default(a, b),
                aten.copysign.Tensor(a, b), aten.hypot.default(a, b), aten.logical_xor.default(a, b))

    def integers(a, b):
        return (aten.remainder.Tensor(a, b), aten.floor_divide.default(a, b), aten.pow.Tensor_Scalar(a, 3),
                aten.bitwise_xor.Tensor(a, b), aten.div.Tensor_mode(a, b, rounding_mode="trunc"),
                aten.bitwise_not.default(a), aten.abs.default(a), aten.sign.default(a))

    def reductions(x):
        return (aten.sum.dim_IntList(x, [1]), aten.amax.default(x, [1]), aten.amin.default(x, [1]),
                aten.argmax.default(x, 1), aten.argmin.default(x, 1), aten.prod.dim_int(x, 1),
                aten.any.dim(aten.gt.Scalar(x, 0), 1), aten.all.dim(aten.gt.Scalar(x, 0), 1),
                aten.var_mean.correction(x, [1])[0])

    def softmax_bf16(x):
        return (aten._softmax.default(aten._to_copy.default(x, dtype=torch.bfloat16), -1, False),)

    def layer_norm(x, w, b):
        return aten.native_layer_norm.default(x, [33], w, b, 1e-5)

    def gather_and_pad(w, i, x):
        return (aten.embedding.default(w, i), aten.constant_pad_nd.default(x, [1, 2, 0, 1], 0.5),
                aten.cat.default([x, x], 1), aten.index_select.default(x, 1, aten.select.int(i, 0, 0)))

    def input_casts(x, w, b, v):  # one combo kernel, whose four casts share a member function
        return tuple(aten._to_copy.default(t, dtype=torch.bfloat16) for t in (x, w, b, v))

    def casts(x):
        return tuple(aten._to_copy.default(x, dtype=d) for d in
                     (torch.bool, torch.int8, torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16,
                      torch.float64))

    return [
        ("unary", all_unary, [f32]),
        ("unary_fp64", all_unary, [f32.double()]),
        ("scalar_operands_fp64", lambda x: (aten.pow.Tensor_Scalar(x, 3.5), aten.maximum.default(x, aten.full_like.default(x, 0.5)),
                                            aten.remainder.Scalar(x, 1.5), aten.atan2.default(x, aten.full_like.default(x, 2.0)),
                                            aten.clamp.default(x, -0.5, 0.5)), [f32.double().abs() + 0.1]),
        ("binary", binary, [f32, torch.rand(8, 33) + 0.5]),
        ("integers", integers, [torch.randint(-9, 9, (8, 33)), torch.randint(1, 5, (8, 33))]),
        ("reductions_persistent", reductions, [f32]),
        ("reductions_looped", reductions, [long_rows]),
        ("outer_reduction", lambda x: (aten.sum.dim_IntList(x, [0]), aten.argmax.default(x, 0)), [long_rows.t().contiguous()]),
        ("full_reduction", lambda x: (aten.sum.default(x), aten.amax.default(x, [0, 1])), [long_rows]),
        ("softmax_bf16", softmax_bf16, [long_rows]),
        ("softmax_looped", lambda x: (aten._log_softmax.default(x, -1, False),), [long_rows]),
        ("layer_norm", layer_norm, [f32, torch.randn(33), torch.randn(33)]),
        ("gather_and_pad", gather_and_pad, [torch.randn(10, 33), torch.randint(0, 10, (4, 5)), f32]),
        ("casts", casts, [f32 * 100]),
        ("combo", input_casts, [f32, torch.randn(40, 12), torch.randn(7), torch.randn(3, 5)]),
        ("transpose", lambda x: (aten.clone.default(aten.permute.default(x, [2, 0, 1])),), [torch.randn(3, 5, 7)]),
        ("transpose_tiled", lambda x, y: (aten.add.Tensor(aten.permute.default(x, [0, 2, 1]), y),),
         [torch.randn(3, 40, 72), torch.randn(3, 72, 40)]),
    ]


def _kernel_paths(wrapper_source: str) -> list[str]:
    from inductor.runtime.triton_launch import kernel_module_path

    calls = re.findall(r"load_triton_kernel\('([^']+)', '([^']+)'", wrapper_source)
    return [str(kernel_module_path(key, name)) for key, name in calls]


def compile_kernel_file(path: str) -> list[str]:
    """Compile one generated kernel module for sm_90 with every config of its kind; returns problems."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from inductor.runtime.triton_launch import load_module

    module = load_module(path)
    name = pathlib.Path(path).stem
    fn = getattr(module, name)
    signature = dict(module.POINTER_TYPES)
    if getattr(module, "RAISES", False):
        signature["error_ptr"] = "*i32"  # the error flag of kernels that check (runtime/kernel_errors.py)
    for param in fn.arg_names:
        if param not in signature and param not in ("XBLOCK", "RBLOCK"):
            signature[param] = "i32"
    problems = []
    for config in CONFIGS[module.KIND]:
        constants = {k: v for k, v in config.items() if k.endswith("BLOCK")}
        full = {**signature, **{k: "constexpr" for k in constants}}
        try:
            triton.compile(ASTSource(fn, full, constexprs=constants), target=GPUTarget("cuda", 90, 32),
                           options={"num_warps": config["num_warps"]})
        except Exception as error:  # noqa: BLE001  (reported with the kernel's path)
            problems.append(f"{path} {config}: {type(error).__name__}: {error}")
    return problems


def _compile_cases() -> list[str]:
    import inductor

    problems = []
    for name, fn, inputs in _cases():
        compiled = inductor.compile_aten_graph(torch.fx.symbolic_trace(fn), inputs, options={"cpu_backend": "triton"})
        for path in _kernel_paths(compiled.source):
            problems += [f"[{name}] {p}" for p in compile_kernel_file(path)]
    return problems


@pytest.mark.slow
def test_generated_kernels_compile_for_sm90(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PTC_INDUCTOR_CACHE_DIR"] = str(tmp_path)
    result = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-6000:]


if __name__ == "__main__":
    if len(sys.argv) > 1:
        kernels = sorted(pathlib.Path(sys.argv[1]).rglob("*.py"))
        found = [problem for kernel in kernels for problem in compile_kernel_file(str(kernel))]
        print(f"{len(kernels)} kernel files")
    else:
        found = _compile_cases()
    print("\n".join(found) or "all kernels compiled for sm_90")
    sys.exit(1 if found else 0)
