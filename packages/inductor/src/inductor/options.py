"""What `mode=` and `options=` ask of inductor: one frozen `CompileOptions`, checked once.

`CompileOptions.from_user(mode, options)` starts from the mode's settings (torch.compile's
modes, with torch's option names where the setting is the same thing), applies `options` on
top, and raises `InductorError` naming the valid modes or keys for anything else, as
torch.compile does for its own. The rest of inductor reads fields, never the dict.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

from .errors import InductorError

COMBO_KERNELS_ENV = "PTC_INDUCTOR_COMBO_KERNELS"  # the default of `combo_kernels`, for A/B runs

# torch.compile's modes (torch._inductor.list_mode_options()) minus "lite", which asks for
# aten fallbacks instead of generated kernels: nothing inductor here does.
MODES: dict[str, dict] = {
    "default": {},
    "reduce-overhead": {"triton.cudagraphs": True},
    "max-autotune-no-cudagraphs": {"max_autotune": True},
    "max-autotune": {"max_autotune": True, "triton.cudagraphs": True},
}


@dataclass(frozen=True)
class CompileOptions:
    """Inductor's settings for one compiled graph.

    Its fields, with the option key of each in brackets::

        max_autotune    ["max_autotune"] time more block sizes per Triton kernel, and (Triton
                        backend) our Triton matmul template against the aten call per matmul
        gemm_backends   ["max_autotune_gemm_backends"] what max_autotune chooses matmuls among:
                        "ATEN,TRITON" (time both), "TRITON" (the template, timed over its block
                        configs; untimed where nothing can be timed, e.g. Triton's interpreter)
                        or "ATEN" (lowering/matmul_templates.py)
        cudagraphs      ["triton.cudagraphs"] replay a CUDA graph's launches (graphs over CUDA tensors)
        cpu_backend     ["cpu_backend"] "cpp" or "triton" (its interpreter) for kernels over CPU tensors
        pad_mm          ["pad_mm"] pad misaligned matmuls; None: where it pays (lowering/matmul_padding.py)
        fallback_random ["fallback_random"] random ops as aten calls drawing eager's numbers under
                        the same seed, instead of Triton's in-kernel Philox (lowering/random.py)
        combo_kernels   ["combo_kernels"] neighbouring independent pointwise kernels of any size
                        run as one Triton launch (codegen/triton/combo_planning.py). Off unless
                        the environment sets PTC_INDUCTOR_COMBO_KERNELS=1: small kernels, and
                        kernels updating inputs in place (an optimizer step's per-parameter
                        updates), are combined either way.
        layout_optimization ["layout_optimization"] 2-d convolutions and the values between them
                        computed channels-last where the graph's convolutions run faster so
                        (layout_optimization.py says where); outputs keep eager's strides.
                        None (default): on CPU, and for CUDA inference graphs (torch's
                        rules); True: for CUDA training graphs too (slower than row-major
                        there so far); False: never
    """

    max_autotune: bool = False
    gemm_backends: str = "ATEN,TRITON"
    cudagraphs: bool = False
    cpu_backend: str = "cpp"
    pad_mm: bool | None = None
    fallback_random: bool = False
    combo_kernels: bool = field(default_factory=lambda: os.environ.get(COMBO_KERNELS_ENV, "0") == "1")
    layout_optimization: bool | None = None

    @classmethod
    def from_user(cls, mode: str | None = None, options: dict | CompileOptions | None = None) -> CompileOptions:
        if isinstance(options, CompileOptions):
            if mode not in (None, "default"):
                raise InductorError("inductor: pass mode= or a CompileOptions, not both")
            return options
        mode = mode or "default"
        if mode not in MODES:
            raise InductorError(f"inductor: unknown mode {mode!r}; the modes are: {', '.join(MODES)}")
        settings = {**MODES[mode], **(options or {})}
        unknown = sorted(set(settings) - set(OPTION_KEYS))
        if unknown:
            names = ", ".join(map(repr, unknown))
            raise InductorError(f"inductor: unknown option(s) {names}; the options are: {', '.join(OPTION_KEYS)}")
        chosen = cls(**{OPTION_KEYS[key]: value for key, value in settings.items()})
        gemm = {part.strip().upper() for part in str(chosen.gemm_backends).split(",")} - {""}
        if not gemm or gemm - set(GEMM_BACKENDS):
            raise InductorError(f"inductor: max_autotune_gemm_backends must name some of {', '.join(GEMM_BACKENDS)} "
                                f"(comma-separated), not {chosen.gemm_backends!r}")
        chosen = dataclasses.replace(chosen, gemm_backends=",".join(b for b in GEMM_BACKENDS if b in gemm))
        if chosen.cpu_backend not in ("cpp", "triton"):
            raise InductorError(f"inductor: cpu_backend must be 'cpp' or 'triton', not {chosen.cpu_backend!r}")
        return chosen

    @property
    def tuning(self) -> str:
        """How Triton launchers choose block sizes: "max-autotune" (wider search) or "default"."""
        return "max-autotune" if self.max_autotune else "default"


# What `max_autotune_gemm_backends` may name, in its canonical order (torch's also has CPP,
# CUTLASS and CK, which we do not generate).
GEMM_BACKENDS = ("ATEN", "TRITON")

# The `options=` key of each field: torch's config name where the setting is the same.
OPTION_KEYS = {
    "max_autotune": "max_autotune",
    "triton.cudagraphs": "cudagraphs",
    "cpu_backend": "cpu_backend",
    "pad_mm": "pad_mm",
    "fallback_random": "fallback_random",
    "combo_kernels": "combo_kernels",
    "layout_optimization": "layout_optimization",
    "max_autotune_gemm_backends": "gemm_backends",
}
