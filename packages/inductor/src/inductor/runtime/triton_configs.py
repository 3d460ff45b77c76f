"""Block sizes for generated Triton kernels: the candidates a launch chooses among.

A candidate is a `Config` (XBLOCK, RBLOCK, num_warps, num_stages). The heuristics below give
a few per kernel shape, from the element counts seen at launch; `mode="max-autotune"` widens
each list, and the autotuner (triton_launch.py) times the candidates once per kernel and keeps
the fastest row of the table for every size. Under the interpreter there is one candidate,
with the largest blocks, since each program is a Python loop iteration there.

Sizing rules (Hopper-class GPUs, memory-bound kernels):
  pointwise    1024 elements per program with 4 warps: 8 per thread, two 16-byte accesses
  combo        the first pointwise row only, untimed, unless max-autotune (torch.compile's
               combo kernels are not tuned either): each config is another compile of every member
  tiled        64x64 or 32x128 tiles (a transpose): each side covers 128-byte segments
  persistent   the whole row (RBLOCK = next power of two >= rnumel) and enough rows per
               program to reach ~1-4K elements (outer reductions: 4-8K), ~8-16 elements per thread
  looped       inner reductions stream a row per program with wide RBLOCK; outer reductions
               (the reduced axis is strided, rows are contiguous) take many rows and few
               reduction lanes, so neighbouring lanes read neighbouring addresses
"""

from __future__ import annotations

from dataclasses import dataclass

# The shapes of kernel codegen/triton/ prints.
KIND_POINTWISE, KIND_TILED, KIND_PERSISTENT, KIND_LOOPED = "pointwise", "tiled", "persistent", "looped"
KIND_COMBO = "combo"  # pointwise kernels in one launch (codegen/triton/combo.py), sized as pointwise

INTERPRETER_BLOCK = 8192  # elements per interpreted program: fewer, larger numpy steps


@dataclass(frozen=True)
class Config:
    XBLOCK: int
    RBLOCK: int | None = None
    num_warps: int = 4
    num_stages: int = 1

    def launch_kwargs(self) -> dict:
        kwargs = {"XBLOCK": self.XBLOCK, "num_warps": self.num_warps, "num_stages": self.num_stages}
        if self.RBLOCK is not None:
            kwargs["RBLOCK"] = self.RBLOCK
        return kwargs

    def constexprs(self) -> tuple:
        """The block sizes as the kernel's trailing constexpr parameters take them."""
        return (self.XBLOCK,) if self.RBLOCK is None else (self.XBLOCK, self.RBLOCK)

    def as_dict(self) -> dict:
        return {"XBLOCK": self.XBLOCK, "RBLOCK": self.RBLOCK, "num_warps": self.num_warps,
                "num_stages": self.num_stages}


def next_power_of_2(n: int) -> int:
    return 1 << max(int(n) - 1, 0).bit_length()


def _warps(elements: int, per_thread: int, lo: int = 1, hi: int = 8) -> int:
    return max(lo, min(hi, next_power_of_2(max(1, elements // (32 * per_thread)))))


def candidates(kind: str, xnumel: int, rnumel: int | None, *, outer_reduction: bool, max_autotune: bool,
               interpreted: bool) -> list[Config]:
    """The configs to choose among for one launch size, best guess first: one per row of the
    heuristic's table, sized for these counts. A kind has the same rows at every size (two may
    size to the same config at small counts), so a row chosen at one size names a config at
    any other (triton_launch.py reuses it at new sizes)."""
    if kind == KIND_COMBO and not interpreted:
        # Sized by its largest member (xnumel), one config as torch.compile's combo kernels
        # have: each config timed is another compile of every member (one binary).
        configs = _pointwise(xnumel, None, False, max_autotune)
        return configs if max_autotune else configs[:1]
    if kind == KIND_COMBO:
        kind = KIND_POINTWISE
    if interpreted:
        return [_interpreter_config(kind, xnumel, rnumel)]
    return {
        KIND_POINTWISE: _pointwise,
        KIND_TILED: _tiled,
        KIND_PERSISTENT: _persistent,
        KIND_LOOPED: _looped,
    }[kind](xnumel, rnumel, outer_reduction, max_autotune)


def distinct(configs: list[Config]) -> list[Config]:
    """`configs` without repeats, in order: what is worth timing."""
    return list(dict.fromkeys(configs))


def _interpreter_config(kind, xnumel, rnumel) -> Config:
    if kind == KIND_POINTWISE:
        return Config(min(INTERPRETER_BLOCK, next_power_of_2(xnumel)))
    rblock = next_power_of_2(rnumel) if kind == KIND_PERSISTENT else min(256, next_power_of_2(rnumel))
    if kind == KIND_TILED:
        rblock = min(64, next_power_of_2(rnumel))
    return Config(min(next_power_of_2(xnumel), max(1, INTERPRETER_BLOCK // rblock)), rblock)


def _pointwise(xnumel, rnumel, outer_reduction, max_autotune) -> list[Config]:
    cap = next_power_of_2(xnumel)
    sizes = [(1024, 4), (2048, 8)] if not max_autotune else [(1024, 4), (2048, 8), (512, 4), (4096, 8), (256, 2)]
    configs = []
    for block, warps in sizes:
        block = min(block, cap)
        configs.append(Config(block, None, min(warps, _warps(block, 4)), 1))
    return configs


def _tiled(xnumel, rnumel, outer_reduction, max_autotune) -> list[Config]:
    # Square-ish tiles of 2-4K elements: each side long enough for 128-byte accesses.
    shapes = [(64, 64, 4), (32, 128, 4)] + ([(128, 32, 4), (64, 32, 4), (128, 64, 8), (32, 32, 2)] if max_autotune else [])
    return [Config(min(xblock, next_power_of_2(xnumel)), min(rblock, next_power_of_2(rnumel)), warps, 1)
            for xblock, rblock, warps in shapes]


def _persistent(xnumel, rnumel, outer_reduction, max_autotune) -> list[Config]:
    rblock = next_power_of_2(rnumel)
    cap = next_power_of_2(xnumel)
    # (tile elements, elements per thread). A bf16 softmax over 1024 columns on an H200 ran at
    # 3311 GB/s with 4 rows x 8 warps, 3826 with 1 row x 4 warps and 4216 with 2 rows x 4
    # warps (16 elements per thread): more independent loads in flight per thread.
    targets = [(1024, 8), (2048, 16), (4096, 8)]
    if max_autotune:
        targets = [(t, per_thread) for t in (256, 512, 1024, 2048, 4096, 8192) for per_thread in (8, 16)]
    elif outer_reduction:
        # Each row of the tile is a contiguous run of outputs: at least 16 of them (split
        # partials have 128-256 rows), so a row read fills whole 32-byte sectors.
        targets = [(4096, 8), (8192, 8)]
    configs = []
    for target, per_thread in targets:
        # At most `target` elements, unless one row alone is longer.
        xblock = max(1, min(cap, target // rblock))
        tile = xblock * rblock
        configs.append(Config(xblock, rblock, _warps(tile, per_thread, lo=2, hi=16 if tile >= 16384 else 8), 1))
    return configs


def _looped(xnumel, rnumel, outer_reduction, max_autotune) -> list[Config]:
    cap_x = next_power_of_2(xnumel)
    cap_r = next_power_of_2(rnumel)
    if outer_reduction:
        shapes = [(64, 8, 4), (32, 32, 8)] + ([(128, 8, 4), (64, 16, 4), (16, 64, 4), (256, 4, 8)] if max_autotune else [])
    else:
        shapes = [(1, 2048, 8), (1, 1024, 4)] + ([(1, 4096, 16), (2, 1024, 8), (4, 512, 8), (8, 256, 4)]
                                                 if max_autotune else [])
    configs = []
    for xblock, rblock, warps in shapes:
        xblock, rblock = min(xblock, cap_x), min(rblock, cap_r)
        configs.append(Config(xblock, rblock, min(warps, _warps(xblock * rblock, 4)), 1 if not max_autotune else 2))
    return configs
