"""Shared pytest behaviour: tests marked `gpu` skip on machines without CUDA, where Triton kernels
run in Triton's interpreter instead; `caplog` sees the records of our `compiler.*` loggers; torch's
op_db sample inputs skip a slow stack walk (`_extract_test_fn`)."""

import logging
import os
import pathlib
import sys
import unittest

import pytest
import torch

# Triton binds its library functions (tl.sum, ...) when first imported, reading this switch then;
# any test module may import triton first, so it is set before collection starts.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


def _extract_test_fn():
    """torch.testing._internal.common_utils.extract_test_fn, walking frames without source.

    torch's walks `inspect.stack()`, which reads each frame's source line and maps its file to a
    module by scanning sys.modules: 0.2 s per call with torch loaded and pytest's deep stack, and
    every op_db `sample_inputs` call makes two. The op_db sweeps spent 80% of their time there
    (fake_tensor's dynamic op_db test: 94 of 115 s). Same frames, same test, same None."""
    try:
        frame = sys._getframe(1)
        while frame is not None:
            self_val = frame.f_locals.get("self")
            if isinstance(self_val, unittest.TestCase):
                *_, cls_name, test_name = self_val.id().rsplit(".", 2)
                if cls_name == type(self_val).__name__ and test_name.startswith("test"):
                    return getattr(self_val, test_name).__func__
            frame = frame.f_back
    except Exception:  # noqa: BLE001  (as torch's: no test function found)
        pass
    return None


def _fast_op_db_inputs():
    """Use `_extract_test_fn` wherever torch's testing modules bound theirs (once they are
    imported: test modules import op_db while being collected)."""
    for name in ("torch.testing._internal.common_utils", "torch.testing._internal.opinfo.core"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "extract_test_fn", None) not in (None, _extract_test_fn):
            module.extract_test_fn = _extract_test_fn


def pytest_runtest_setup(item):
    _fast_op_db_inputs()


def pytest_collection_modifyitems(config, items):
    _fast_op_db_inputs()
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
    _torch_is_not_local_code()
    settings.register_profile("reproducible", derandomize=True)
    settings.register_profile("explore", derandomize=False)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "reproducible"))


def _torch_is_not_local_code():
    """Hypothesis draws some integers, floats and strings from the constants in "local" code, which
    parses (cached in .hypothesis/ by hash): every loaded module outside site-packages and the
    standard library. Our sessions install torch, sympy and numpy outside site-packages (noxfile.py's
    shared --target folder), so the first test processes of a clean clone parsed ~1800 of their
    files: 32 s of CPU (52 s instead of 20 s for 40 capture fuzzer examples). They are another
    project's code, as they would be in site-packages: counted as such."""
    try:
        from hypothesis.internal import scrutineer
    except ImportError:  # a Hypothesis without local constants
        return
    shared = pathlib.Path(torch.__file__).parent.parent.resolve()
    if isinstance(getattr(scrutineer, "SITE_PACKAGES_DIRS", None), set):
        scrutineer.SITE_PACKAGES_DIRS.add(shared)


_register_hypothesis_profiles()
