"""int8, uint8, int16 and int32 arithmetic that overflows, compiled by inductor into C++ and
Triton kernels (on CPU tensors: Triton's interpreter), against eager bit for bit. Eager wraps
each op's result to its dtype; a fused kernel computing in a wider type must wrap where eager
does (`(x.to(int8) * 100) // 7` divides the wrapped product). First call, cache hit, new size.

`~t` of a uint8 tensor failed under Triton's interpreter (NumPy 2 refuses -1 as a uint8)."""

from __future__ import annotations

import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import compiler  # noqa: E402

i8, u8, i16, i32 = torch.int8, torch.uint8, torch.int16, torch.int32
CASES = {
    "i8_mul_then_floordiv": lambda x: (x.to(i8) * 100) // 7,
    "u8_add_then_sub": lambda x: ((x * 50).to(u8) + 200) - 100,
    "i16_mul_then_mod": lambda x: ((x * 1000).to(i16) * 300) % 1000,
    "i8_neg_of_min": lambda x: -(x * 0 - 128).to(i8),
    "i8_abs_of_min": lambda x: (x * 0 - 128).to(i8).abs(),
    "i32_mul_then_floordiv": lambda x: ((x * 1e5).to(i32) * 100000) // 3,
    "u8_shifts": lambda x: ((x * 50).to(u8) << 3) >> 1,
    "i8_sum_in_i8": lambda x: ((x * 50).to(i8) * 3).sum(dtype=i8),
    "i8_cumsum_in_i8": lambda x: ((x * 50).to(i8) * 3).cumsum(0, dtype=i8),
    "i8_max_after_wrap": lambda x: ((x * 50).to(i8) * 3).max(),
    "i8_cube": lambda x: (x * 3).to(i8) ** 3,
    "i16_floor_divide_negative": lambda x: torch.floor_divide((x * 1000).to(i16) * 40, -7),
    "u8_minus_larger": lambda x: (x * 10).abs().to(u8) - 250,
    "i8_clamp_after_wrap": lambda x: ((x * 50).to(i8) * 3).clamp(-50, 50),
    "i8_to_float_after_wrap": lambda x: ((x * 50).to(i8) * 3).to(torch.float32) * 0.5,
    "u8_bitwise_not": lambda x: ~(x * 10).abs().to(u8),
    "i8_remainder": lambda x: torch.remainder((x * 50).to(i8) * 3, 7),
    "i8_fmod": lambda x: torch.fmod((x * 50).to(i8) * 3, 7),
    "i8_add_scalar": lambda x: (x * 50).to(i8) + 127,
    "i8_times_i8": lambda x: (x * 50).to(i8) * (x * 40).to(i8),
}
BACKENDS = {"cpp": None, "triton": {"cpu_backend": "triton"}}


@pytest.mark.parametrize("kernels", BACKENDS)
@pytest.mark.parametrize("case", CASES)
def test_wraps_as_eager(case, kernels):
    fn = CASES[case]
    compiled = compiler.compile(fn, backend="inductor", options=BACKENDS[kernels])
    generator = torch.Generator().manual_seed(0)
    for size in (8, 8, 12):
        x = torch.randn(size, generator=generator) * 3
        torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0,
                                   msg=lambda m: f"{case} ({kernels}) at size {size}: {m}")
