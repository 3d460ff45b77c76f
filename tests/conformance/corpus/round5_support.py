"""What the round-five and round-six case files (*5_cases.py, round6_*_cases.py) share: their
cases stay out of the default CI run (CONFORMANCE_FULL=1 and report.py run them) but for a
deterministic sample, chosen by name, that keeps the default run's added time to a few seconds."""

import zlib

from . import snippets

# One case in CI_SHARE of each round-five or round-six table runs in the default CI run.
CI_SHARE = 12


def in_ci_sample(name: str) -> bool:
    return zlib.crc32(f"ci5:{name}".encode()) % CI_SHARE == 0


def sampled_snippets(source: str, family: str, table, **options):
    """`snippets`, with `ci` set per entry: True for the CI sample, False for the rest."""
    entries = []
    for name, body, *rest in table:
        overrides = dict(rest[0]) if rest else {}
        overrides.setdefault("ci", in_ci_sample(f"{family}.{name}"))
        entries.append((name, body, overrides))
    snippets(source, family, entries, **options)
