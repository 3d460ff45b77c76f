"""Shared pytest behaviour: tests marked `gpu` skip on machines without CUDA, where Triton kernels
run in Triton's interpreter instead; `caplog` sees the records of our `compiler.*` loggers."""

import logging
import os

import pytest
import torch

# Triton binds its library functions (tl.sum, ...) when first imported, reading this switch then;
# any test module may import triton first, so it is set before collection starts.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _compiler_logs_reach_caplog(caplog):
    """Our loggers do not propagate to the root logger, where caplog listens (capture.logs):
    hand their records to caplog's handler too. `caplog.at_level(logging.INFO,
    logger="compiler.<channel>")` then turns a channel on and captures it."""
    parent = logging.getLogger("compiler")
    parent.addHandler(caplog.handler)
    yield
    parent.removeHandler(caplog.handler)


def _register_hypothesis_profiles():
    """Property tests and fuzzers draw the same examples on every run by default, so a CI result
    is reproducible and a red run is a finding rather than luck; `HYPOTHESIS_PROFILE=explore`
    draws fresh random examples (how new findings are made, e.g. with CAPTURE_FUZZ_EXAMPLES)."""
    try:
        from hypothesis import settings
    except ImportError:  # a package whose tests do not use hypothesis
        return
    settings.register_profile("reproducible", derandomize=True)
    settings.register_profile("explore", derandomize=False)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "reproducible"))


_register_hypothesis_profiles()
