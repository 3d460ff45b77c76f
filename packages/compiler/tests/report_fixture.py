"""One compile report of a model with a graph break and a recompile, written once per session
and read by the report's content, HTML-validity and browser tests (compiling it is the slow part).
Test modules import the fixture (`from report_fixture import model_report`): a conftest.py here
would be imported as the module `conftest`, the name inductor's tests import theirs by when the
whole suite runs in one process.

PYTEST_DONT_REWRITE: the model here is traced.
"""

from __future__ import annotations

import pytest
import torch

import compiler


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(8, 16)
        self.second = torch.nn.Linear(16, 4)

    def forward(self, x):
        hidden = torch.relu(self.first(x))
        print("between the layers")  # a graph break
        return self.second(hidden).sigmoid()


_written: list = []  # each importing module gets its own fixture; the report is written once


@pytest.fixture(scope="session")
def model_report(tmp_path_factory):
    """The report's path, after a first call, a cache hit with new values and a recompile, with
    the kernels' times."""
    if not _written:
        _written.append(_write_report(tmp_path_factory))
    return _written[0]


def _write_report(tmp_path_factory):
    model = TwoLayers()
    path = tmp_path_factory.mktemp("report") / "report.html"
    compiled = compiler.report(model, path, profile_kernels=True)
    for batch in (3, 3, 5):
        x = torch.randn(batch, 8)
        torch.testing.assert_close(compiled(x), model(x))
    return path
