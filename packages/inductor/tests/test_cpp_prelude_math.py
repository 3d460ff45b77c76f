"""The C++ prelude's float math (runtime/cpp_prelude.h) gives eager's results in vectorized loops
and in scalar code alike, on special values (NaN, +-inf, +-0, huge, tiny, subnormal, the edges
of each function's clamps), at every vector width this CPU can run: AVX-512 machines run
512-bit loops under -march=native, where a width assumption would show up."""

from __future__ import annotations

import ctypes
import pathlib
import subprocess

import pytest
import torch

from inductor.runtime import cpp_build
from inductor.runtime.cpp_build import PRELUDE

# prelude function -> the eager op it stands for
FUNCTIONS = {
    "ptc_exp": torch.exp, "ptc_expm1": torch.expm1, "ptc_log": torch.log, "ptc_log1p": torch.log1p,
    "ptc_tanh": torch.tanh, "ptc_sigmoid": torch.sigmoid, "ptc_erf": torch.erf,
}

SPECIALS = [
    float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1.0, -1.0, 3e38, -3e38, 1e-38, -1e-38, 1e-40, -1e-40,
    1e-45, -1e-45, 88.72283935546875, 88.8, -87.0, -87.5, -103.97, -104.0, 89.0, -88.0, 7.99881172180175781,
    -7.99881172180175781, 9.0, -9.0, 4.0, -4.0, 0.0004, -0.0004, 0.5, -0.5, -0.9999999, 1e-7, -1e-7,
]


def _cpu_flags() -> set[str]:
    text = pathlib.Path("/proc/cpuinfo").read_text() if pathlib.Path("/proc/cpuinfo").exists() else ""
    return {flag for line in text.splitlines() if line.startswith("flags") for flag in line.split(":")[1].split()}


# Vector ISAs to build for: the kernels' own flags, and 512-bit vectors where the CPU has them.
TARGETS = {"native": []}
if "avx512f" in _cpu_flags():
    TARGETS["avx512"] = ["-mavx512f", "-mprefer-vector-width=512"]


def _harness() -> str:
    lines = [f'#include "{PRELUDE}"', "#include <cfenv>"]
    for name in FUNCTIONS:
        lines += [
            f'extern "C" int underflows_{name}(const float* x, float* y, int64_t n) {{',
            "  std::feclearexcept(FE_ALL_EXCEPT);",
            "  #pragma omp simd",
            f"  for (int64_t i = 0; i < n; ++i) y[i] = {name}(x[i]);",
            "  return std::fetestexcept(FE_UNDERFLOW) != 0;",
            "}",
            f'extern "C" void vector_{name}(const float* x, float* y, int64_t n) {{',
            "  #pragma omp simd",
            f"  for (int64_t i = 0; i < n; ++i) y[i] = {name}(x[i]);",
            "}",
            f'extern "C" __attribute__((optimize("no-tree-vectorize"))) void scalar_{name}(const float* x, float* y, int64_t n) {{',
            f"  for (int64_t i = 0; i < n; ++i) y[i] = {name}(x[i]);",
            "}",
        ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module", params=sorted(TARGETS))
def library(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"prelude_{request.param}")
    source, library = folder / "harness.cpp", folder / "harness.so"
    source.write_text(_harness())
    command = [cpp_build.compiler(), *cpp_build.FLAGS, *TARGETS[request.param], str(source), "-o", str(library)]
    subprocess.run(command, check=True, capture_output=True)
    return ctypes.CDLL(str(library))


def _inputs() -> torch.Tensor:
    # An odd length, and the specials at several offsets, so both the vector body and its
    # scalar remainder see each of them.
    specials = torch.tensor(SPECIALS, dtype=torch.float32)
    spread = torch.cat([torch.linspace(-110, 110, 2001), torch.randn(500) * 3])
    return torch.cat([specials, spread, specials, specials[:7], specials]).contiguous()


def _run(library, symbol: str, x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    getattr(library, symbol)(ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(y.data_ptr()), ctypes.c_int64(x.numel()))
    return y


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("loop", ["vector", "scalar"])
def test_prelude_math_matches_eager_on_special_values(library, name, loop):
    x = _inputs()
    actual = _run(library, f"{loop}_{name}", x)
    expected = FUNCTIONS[name](x)
    torch.testing.assert_close(actual, expected, equal_nan=True, rtol=4e-6, atol=1e-6)
    # Exact where eager's result is NaN or infinite (eager flushes some subnormal results to 0,
    # which the tolerance above allows).
    special = ~torch.isfinite(expected)
    assert torch.equal(actual[special].isnan(), expected[special].isnan()), x[special & (actual.isnan() != expected.isnan())]
    infinite = expected.isinf()
    assert torch.equal(actual[infinite], expected[infinite]), x[infinite & (actual != expected)]


# Inputs of large magnitude, whose results are 0, +-1, +-inf or NaN: what a masked softmax feeds
# exp (-FLT_MAX, -inf).
LARGE = [float("-inf"), -3.4e38, -1e30, -1e4, -200.0, -104.5, 200.0, 1e4, 1e30, 3.4e38, float("inf")]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_large_inputs_make_no_subnormal_intermediates(library, name):
    # A subnormal (or underflowing) intermediate costs a microcode assist of ~100 cycles on x86
    # per instruction: exp(-FLT_MAX) once made a causal-masked softmax 5-10x slower than eager.
    # The underflow flag is raised by exactly those operations.
    x = torch.tensor(LARGE * 3, dtype=torch.float32)
    y = torch.empty_like(x)
    underflowed = library[f"underflows_{name}"](ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(y.data_ptr()),
                                                ctypes.c_int64(x.numel()))
    assert not underflowed
    torch.testing.assert_close(y, FUNCTIONS[name](x), equal_nan=True)
