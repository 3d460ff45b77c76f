"""Block configs of the Triton matmul template (runtime/matmul_template.py) that max-autotune
times against the aten call (lowering/matmul_templates.py).

The list is torch.compile's mm configs (torch/_inductor/template_heuristics: BLOCK_M, BLOCK_N,
BLOCK_K, num_stages, num_warps, GROUP_M 8) cut to the ones that differ in kind, plus two
256-wide tiles for Hopper's larger shared memory. Like torch's, each is shrunk to the problem:
a block never exceeds the next power of two of its size (at least 16, tl.dot's smallest side),
so a small matmul times a few distinct configs, not the whole list.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .triton_configs import next_power_of_2

MIN_BLOCK = 16  # tl.dot needs every side >= 16


@dataclass(frozen=True)
class MatmulConfig:
    block_m: int
    block_n: int
    block_k: int
    num_stages: int
    num_warps: int
    group_m: int = 8  # rows of output tiles launched next to each other (L2 reuse of `b`'s columns)

    def as_kwargs(self) -> dict:
        return asdict(self)


# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps)
_TABLE = [
    (32, 32, 16, 1, 2),
    (32, 64, 32, 5, 8),
    (64, 32, 32, 5, 8),
    (64, 64, 32, 2, 4),
    (64, 64, 64, 3, 8),
    (64, 128, 32, 3, 4),
    (64, 128, 64, 3, 4),
    (128, 64, 32, 3, 4),
    (128, 128, 32, 3, 4),
    (128, 128, 64, 3, 4),
    (128, 128, 64, 5, 8),
    (128, 256, 64, 3, 8),
    (256, 128, 64, 3, 8),
]

# Triton's interpreter runs each program as numpy steps: few large blocks are fastest there.
_INTERPRETER_BLOCK = 64


def matmul_configs(m: int, n: int, k: int) -> list[MatmulConfig]:
    """The distinct configs worth timing for an [M, K] @ [K, N] matmul, best guess first."""
    configs = [MatmulConfig(_fit(bm, m), _fit(bn, n), _fit(bk, k), stages, warps) for bm, bn, bk, stages, warps in _TABLE]
    return list(dict.fromkeys(configs))


def interpreter_config(m: int, n: int, k: int) -> MatmulConfig:
    """The one config used where nothing is timed (Triton's interpreter on CPU tensors)."""
    block = _INTERPRETER_BLOCK
    return MatmulConfig(_fit(block, m), _fit(block, n), _fit(block, k), 1, 4)


def _fit(block: int, size: int) -> int:
    return max(MIN_BLOCK, min(block, next_power_of_2(size)))
