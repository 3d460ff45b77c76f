"""Python numbers beside tensors, compiled and in eager: int, float and bool arguments that
change between calls (symbolic after the first change), NaN, infinities and -0.0 among them,
Python arithmetic and math functions on them, branches on them, and tensor ops taking them as
scalars (type promotion, integer overflow, reduced precision, rounding modes). Every call's
result, or exception type, must be eager's.
"""

from __future__ import annotations

import math

import pytest
import torch

import compiler

x = torch.randn(5)
x6 = torch.randn(6)
xi = torch.randint(-5, 6, (6,))
nan, inf = float("nan"), float("inf")

CASES = {
    "float nan arg": (lambda x, a: x * a + (1 if a > 0 else 2), [(x, 1.0), (x, 2.0), (x, nan), (x, -3.0), (x, inf)]),
    "float nan branch": (lambda x, a: x * 2 if a == a else x * 3, [(x, 1.0), (x, 2.0), (x, nan)]),
    "float inf": (lambda x, a: x + a - a, [(x, 1.0), (x, 2.0), (x, inf), (x, -inf)]),
    "float -0.0": (lambda x, a: x * math.copysign(1.0, a), [(x, 1.0), (x, 2.0), (x, -0.0), (x, 0.0)]),
    "float to int": (lambda x, a: x * int(a), [(x, 1.5), (x, 2.7), (x, -2.7), (x, 1e10)]),
    "float floor div": (lambda x, a: x * (a // 0.5), [(x, 1.5), (x, 2.7), (x, -2.7)]),
    "float mod": (lambda x, a: x * (a % 1.5), [(x, 1.5), (x, 2.7), (x, -2.7), (x, -0.0)]),
    "round": (lambda x, a: x * round(a), [(x, 1.5), (x, 2.5), (x, -2.5), (x, 3.5)]),
    "round nd": (lambda x, a: x * round(a, 1), [(x, 1.25), (x, 2.35), (x, -2.45)]),
    "abs float": (lambda x, a: x * abs(a), [(x, 1.5), (x, -2.5), (x, -0.0)]),
    "pow float": (lambda x, a: x * (a**0.5), [(x, 1.5), (x, 2.5), (x, 9.0)]),
    "neg pow": (lambda x, a: x * (a**2), [(x, -1.5), (x, 2.5), (x, -3.0)]),
    "int pow neg": (lambda x, n: x * (2**n), [(x, 1), (x, 2), (x, -1), (x, 0), (x, 40)]),
    "int big": (lambda x, n: x * (n * n % 7), [(x, 1), (x, 2), (x, 10**12), (x, -(10**12))]),
    "int overflow 64": (lambda x, n: x + (n * 2**40 // 2**40), [(x, 3), (x, 4), (x, 2**30)]),
    "int truediv": (lambda x, n: x * (n / 3), [(x, 1), (x, 2), (x, 7), (x, -7)]),
    "int floordiv neg": (lambda x, n: x * (n // 3) + (n % 3), [(x, 1), (x, 2), (x, -7), (x, -1)]),
    "bool arg": (lambda x, b: x * (2 if b else 3) + b, [(x, True), (x, False), (x, True)]),
    "min max": (
        lambda x, a, b: x * max(a, b) + min(a, b),
        [(x, 1.0, 2.0), (x, 3.0, 2.0), (x, nan, 1.0), (x, 1.0, nan)],
    ),
    "math funcs": (lambda x, a: x * math.sqrt(a) + math.exp(a) + math.log(a), [(x, 1.0), (x, 2.0), (x, 0.5)]),
    "math floor ceil": (lambda x, a: x * math.floor(a) + math.ceil(a), [(x, 1.5), (x, 2.5), (x, -0.5)]),
    "sum of floats": (
        lambda x, a, b, c: x * sum([a, b, c]),
        [(x, 0.1, 0.2, 0.3), (x, 1e16, 1.0, -1e16), (x, 0.7, 0.1, 0.2)],
    ),
    "float equality": (lambda x, a, b: x * (1 if a == b else 2), [(x, 0.1, 0.1), (x, 0.1 + 0.2, 0.3), (x, 0.3, 0.3)]),
    "float compare chain": (lambda x, a: x * (1 if 0 < a < 1 else 2), [(x, 0.5), (x, 0.7), (x, 1.5), (x, 1.0)]),
    "int from shape float": (lambda x: x * (x.shape[0] / 3), [(torch.randn(5),), (torch.randn(7),), (torch.randn(9),)]),
    "shape float compare": (
        lambda x: x * 2 if x.shape[0] / 3 > 2 else x,
        [(torch.randn(5),), (torch.randn(7),), (torch.randn(9),), (torch.randn(6),)],
    ),
    "float hash keys": (lambda x, a: x * {0.5: 1, 1.5: 2}.get(a, 3), [(x, 0.5), (x, 1.5), (x, 2.5)]),
    "str format": (lambda x, a: x * len(f"{a:.3f}"), [(x, 0.5), (x, 10.5), (x, 100.25)]),
    "float in list": (lambda x, a: x * (a in [0.5, 1.5]), [(x, 0.5), (x, 1.5), (x, 2.5)]),
    "divmod": (lambda x, a: x * divmod(a, 0.7)[0] + divmod(a, 0.7)[1], [(x, 1.5), (x, 2.5), (x, -1.1)]),
    "float is_integer": (lambda x, a: x * a.is_integer(), [(x, 1.0), (x, 1.5), (x, 2.0)]),
    "int bit ops": (
        lambda x, n: x * (n & 3) + (n | 8) + (n ^ 5) + (n << 2) + (n >> 1),
        [(x, 1), (x, 6), (x, -3), (x, 13)],
    ),
    "float tensor scalar": (lambda x, a: torch.tensor(a) * x, [(x, 1.5), (x, 2.5), (x, -0.0)]),
    "full with float": (lambda x, a: torch.full((3,), a) + x[:3], [(x, 1.5), (x, 2.5), (x, nan)]),
    "arange float": (lambda x, a: torch.arange(0.0, a, 0.5), [(x, 1.5), (x, 2.5), (x, 3.7)]),
    "linspace": (lambda x, a: torch.linspace(0, a, 5) * x, [(x, 1.5), (x, 2.5), (x, 3.7)]),
    "clamp float": (lambda x, a: x.clamp(min=a), [(x, 0.5), (x, -0.5), (x, nan)]),
    "softmax temp": (lambda x, t: (x / t).softmax(0), [(x, 0.5), (x, 2.0), (x, 1e-3)]),
    "pow sym": (lambda x, a: x.abs().pow(a), [(x6, 2.0), (x6, 3.0), (x6, 0.5), (x6, -1.0)]),
    "int tensor pow float": (lambda x, a: x.pow(a), [(xi, 2.0), (xi, 3.0), (xi, 0.5)]),
    "int tensor * float": (lambda x, a: x * a, [(xi, 2.5), (xi, 3.5), (xi, -0.5)]),
    "int tensor // float": (lambda x, a: x // a, [(xi, 2.5), (xi, 3.5), (xi, -0.5)]),
    "int tensor % int": (lambda x, a: x % a, [(xi, 3), (xi, 4), (xi, -3)]),
    "float tensor % float": (lambda x, a: x % a, [(x6, 0.7), (x6, 1.3), (x6, -0.7)]),
    "fmod": (lambda x, a: torch.fmod(x, a), [(x6, 0.7), (x6, 1.3), (x6, -0.7)]),
    "div floor": (lambda x, a: torch.div(x, a, rounding_mode="floor"), [(x6, 0.7), (x6, 1.3), (x6, -0.7)]),
    "div trunc int": (lambda x, a: torch.div(x, a, rounding_mode="trunc"), [(xi, 2), (xi, 3), (xi, -3)]),
    "clamp a>b": (lambda x, a, b: x.clamp(a, b), [(x6, -0.5, 0.5), (x6, -1.0, 1.0), (x6, 1.0, -1.0)]),
    "where scalar": (lambda x, a: torch.where(x > 0, a, x), [(x6, 2.5), (x6, 3.5), (x6, -1.0)]),
    "bool tensor + int": (lambda x, n: (x > 0) + n, [(x6, 2), (x6, 3), (x6, -1)]),
    "bool tensor * float": (lambda x, a: (x > 0) * a, [(x6, 2.5), (x6, 3.5), (x6, -1.0)]),
    "int8 overflow": (lambda x, n: x.to(torch.int8) * n, [(xi, 30), (xi, 40), (xi, 100)]),
    "uint8 sub": (lambda x, n: x.to(torch.uint8) - n, [(xi.abs(), 3), (xi.abs(), 10), (xi.abs(), 1)]),
    "int shifts": (lambda x, n: (x << n) >> 1, [(xi, 2), (xi, 3), (xi, 62)]),
    "float to int cast": (lambda x, a: (x * a).to(torch.int32), [(x6, 100.0), (x6, 1e3), (x6, 1e10)]),
    "half scalar": (lambda x, a: x.half() * a, [(x6, 1.1), (x6, 2.3), (x6, 70000.0)]),
    "bf16 compared with a float": (
        lambda x, a: (x.bfloat16() <= a, x.bfloat16() == a, (x.bfloat16() % a)),
        [(torch.full((4,), 1.1015625), 1.1), (x6, 1.3), (x6, 0.7)],
    ),
    "bf16 and fp16 plus an int": (lambda x, n: (x.bfloat16() + n, x.half() - n), [(x6, 257), (x6, 1000001), (x6, 3)]),
    "bf16 cube and inverse square": (lambda x, n: (x.bfloat16() ** 3, (x.bfloat16() + n) ** -2), [(x6 * 4, 3.0), (x6, 5.0)]),
    "bf16 scalar": (lambda x, a: x.bfloat16() + a, [(x6, 1.1), (x6, 2.3), (x6, 1e-3)]),
    "double scalar precision": (lambda x, a: x.double() + a, [(x6, 0.1), (x6, 0.2), (x6, 1e-17)]),
    "float32 + big int": (lambda x, n: x + n, [(x6, 2**24 + 1), (x6, 2**25 + 1), (x6, 3)]),
    "int64 + big int": (lambda x, n: x + n, [(xi, 2**40), (xi, 2**62), (xi, 3)]),
    "int tensor true div": (lambda x, n: x / n, [(xi, 2), (xi, 3), (xi, -7)]),
    "arange int sym": (lambda x, n: torch.arange(n) * x[0], [(x6, 3), (x6, 5), (x6, 0)]),
    "arange float step": (lambda x, a: torch.arange(0, 1, a), [(x6, 0.1), (x6, 0.3), (x6, 0.25)]),
    "full int": (lambda x, n: torch.full((3,), n) + x[:3], [(x6, 2), (x6, 3), (x6, -1)]),
    "full bool": (lambda x, b: torch.full((3,), b), [(x6, True), (x6, False)]),
    "sum dtype int": (lambda x, n: (x * n).sum(), [(xi, 2), (xi, 3), (xi, 10**10)]),
    "cumsum": (lambda x, n: (x * n).cumsum(0), [(xi, 2), (xi, 3)]),
    "max with nan": (lambda x, a: torch.maximum(x, torch.tensor(a)), [(x6, 0.5), (x6, 0.6), (x6, nan)]),
    "mean int error": (lambda x: x.mean(), [(xi,)]),
    "scalar tensor arg": (
        lambda x, t: x * t,
        [(x6, torch.tensor(2.0)), (x6, torch.tensor(3.0)), (x6, torch.tensor(2))],
    ),
    "0d int tensor index": (lambda x, t: x[t], [(x6, torch.tensor(2)), (x6, torch.tensor(3)), (x6, torch.tensor(-1))]),
    "item arithmetic": (lambda x: x * x.max().item(), [(x6,), (x6 * 2,), (x6 - 5,)]),
    "tolist len": (lambda x: len(x.tolist()) * x, [(x6,), (torch.randn(3),)]),
    "float(tensor)": (lambda x: float(x.sum()) * x, [(x6,), (x6 * 2,)]),
    "int(tensor)": (lambda x: int(x.sum()) * x, [(x6,), (x6 * 2,)]),
    "bool(tensor)": (lambda x: x * 2 if bool(x.sum() > 0) else x * 3, [(x6,), (-x6,), (x6 - 100,)]),
    "python round tensor": (lambda x: round(x.sum().item(), 2) * x, [(x6,), (x6 * 2,)]),
}

def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        if not (isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype):
            return False
        return torch.equal(a, b) or (
            a.is_floating_point() and torch.allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True)
        )
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def _outcome(fn, args):
    try:
        return fn(*args), None
    except Exception as error:  # noqa: BLE001  (compared with eager's)
        return None, type(error)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("name", list(CASES))
def test_python_numbers_beside_tensors_match_eager(name, backend):
    fn, calls = CASES[name]
    compiled = compiler.compile(fn, backend=backend)
    for number, args in enumerate(calls):
        expected, eager_error = _outcome(fn, args)
        actual, our_error = _outcome(compiled, args)
        assert our_error == eager_error, f"call {number}: eager raised {eager_error}, compiled {our_error}"
        assert eager_error is not None or _same(actual, expected), f"call {number}: {actual} != {expected}"
