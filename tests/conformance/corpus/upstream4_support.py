"""What the round-four case files (*_upstream4_cases.py) share: an input maker that builds
fresh modules with fixed weights and a random configuration per call, and a graph break.

Every call of a case builds its modules anew from the same seed for eager and for the compiled
run; `pick` draws the configuration (a flag, a layer kind, a hook present or not) before the
weights are seeded, so the second call at the same size is a cache hit only where nothing the
first capture assumed has changed."""

import random
import zlib

import torch

from . import add


def pick(*options):
    return random.choice(options)


def seeded(build):
    """An input maker calling build(n) with the torch seed fixed (same weights for eager and
    compiled) and `random` seeded from a draw made before, so `pick` differs per call."""

    def maker(n):
        config = random.random()
        torch.manual_seed(0)
        random.seed(int(config * 1e9))
        return build(n)

    return maker


def graph_break():
    """A call capture cannot trace (it runs natively between two graphs)."""
    torch._dynamo.graph_break()


# Modules, backward and optimizers make these cases slower than most of the corpus (about a
# second each on a loaded CI machine): the default CI run takes a deterministic eighth of
# them, CONFORMANCE_FULL=1 and the report take all.
CI_SHARE = 8


def add_case(source: str, name: str, fn, make_args, **options):
    options.setdefault("ci", zlib.crc32(f"ci:{name}".encode()) % CI_SHARE == 0)
    return add(source, name, fn, make_args, **options)


def register(source: str, family: str):
    """A `case(name, build, fn, **options)` function registering `family.name` cases."""

    def case(name, build, fn, **options):
        add_case(source, f"{family}.{name}", fn, seeded(build), **options)

    return case


class Twins:
    """One long-lived object for eager and one for the compiled run, built alike, that the
    input maker changes between calls the same way.

    The runner builds a call's inputs twice in a row, eager's first, then the compiled run's
    (runner.check_call): the maker hands out the twins in turn, so each side keeps its own
    object across all calls (its parameters, buffers, grads and attributes accumulate), and a
    compiled entry that kept a stale view of its object gives a result its twin does not."""

    def __init__(self, build):
        torch.manual_seed(0)
        first = build()
        torch.manual_seed(0)
        self.objects = (first, build())
        self.turn = 0

    def next(self):
        obj = self.objects[self.turn]
        self.turn = 1 - self.turn
        return obj
