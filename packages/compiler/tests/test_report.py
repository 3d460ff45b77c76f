"""The one-file HTML compile report: for a model with a graph break and a recompile it holds
every section (graphs with shapes and source lines, breaks, recompiles with reasons, guards,
bytecode and resume functions, ATen graphs, kernels, time per phase), is self-contained,
and compiling with it prints nothing.

PYTEST_DONT_REWRITE: the functions here are traced.
"""

from __future__ import annotations

import html.parser
import os
import subprocess
import sys

import pytest
import torch

import compiler
import report_fixture

model_report = report_fixture.model_report  # the session's report, a fixture pytest finds here


class Page(html.parser.HTMLParser):
    """The ids of the sections, the text of the page, and any script or outside reference."""

    def __init__(self, text: str):
        super().__init__()
        self.ids, self.chunks, self.outside, self.scripts = set(), [], [], 0
        self.tables: dict[str, list[list[str]]] = {}  # class -> data rows (cells' text), over all tables
        self._table, self._row = None, None
        self.feed(text)
        self.text = "".join(self.chunks)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.scripts += tag == "script"
        if tag == "table" and "class" in attrs:
            self._table = self.tables.setdefault(attrs["class"], [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._row.append("")
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for name in ("src", "href"):
            if attrs.get(name, "#").split(":")[0] in ("http", "https", "file", "//"):
                self.outside.append(attrs[name])

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = None
        elif tag == "tr" and self._row:
            self._table.append(self._row)
            self._row = None

    def handle_data(self, data):
        self.chunks.append(data)
        if self._row:
            self._row[-1] += data


def test_report_of_a_model_with_a_break_and_a_recompile(model_report):
    page = Page(model_report.read_text())
    assert page.scripts == 0 and page.outside == []
    sections = {"summary", "phases", "graphs", "graph-breaks", "recompiles", "guards", "bytecode", "aot-graphs", "output-code",
                "kernel-time", "log"}
    assert sections <= page.ids
    text = page.text
    # graphs with input shapes and the user's source line
    assert "float32[3, 8]" in text and "hidden = torch.relu(self.first(x))" in text
    # the break, with its reason and the user's line
    assert "print() inside a compiled function" in text and 'print("between the layers")' in text
    # the recompile and why: the batch size guard failed
    assert "recompiling TwoLayers.forward" in text and "failed: got 5" in text
    # guards, compiled entries and resume functions, ATen graphs, kernels
    assert "def guards_forward" in text and "resume at line" in text
    assert "joint graph (before partitioning)" in text and "backward graph (after partitioning)" in text
    assert 'extern "C"' in text and page.tables["kernels"]  # kernels, and their time (profiled)
    for phase in ("capture", "lowering", "scheduling", "code generation", "kernel builds"):
        assert phase in text


def test_report_is_valid_html(model_report):
    html5lib = pytest.importorskip("html5lib", reason="html5lib is in ptc-compiler's test extra")
    parser = html5lib.HTMLParser(strict=True)  # raises at the first parse error
    parser.parse(model_report.read_text())
    assert parser.errors == []


def test_report_of_a_function(tmp_path, capfd):
    def fn(x):
        return torch.cos(x) + 1

    path = tmp_path / "fn.html"
    reported = compiler.report(fn, path, backend="eager")
    x = torch.randn(4)
    torch.testing.assert_close(reported(x), fn(x))
    assert "[compiler." not in capfd.readouterr().err  # the report listens; stderr stays quiet
    page = Page(path.read_text())
    assert "torch.cos(l_x)" in page.text and "graph breaks" in page.text
    assert "Not measured" in page.text and "kernels" not in page.tables  # kernel time only when asked


def test_report_for_a_whole_process_from_the_environment(tmp_path):
    program = (
        "import torch, compiler\n"
        "f = compiler.compile(lambda x: x.sin() * 2)\n"
        "x = torch.randn(3)\n"
        "torch.testing.assert_close(f(x), x.sin() * 2)\n"
    )
    script = tmp_path / "program.py"
    script.write_text(program)
    env = {**os.environ, "COMPILER_REPORT": str(tmp_path), "COMPILER_REPORT_PROFILE": "1"}
    subprocess.run([sys.executable, str(script)], env=env, check=True, timeout=120)
    (written,) = tmp_path.glob("compile-report-*.html")
    page = Page(written.read_text())
    assert "x.sin()" in page.text
    assert [row[1] for row in page.tables["kernels"]] == ["kernel0", "kernel0"]  # in the code section and the list


def test_report_shows_each_kernels_time_and_bytes_when_profiled(tmp_path):
    def two_kernels(x, y):
        return (x.sin() + y).sum(-1), (x * y).cos()

    path = tmp_path / "profiled.html"
    reported = compiler.report(two_kernels, path, profile_kernels=True)
    for rows in (64, 64, 96):  # a first call, a cache hit, a recompile at a new size
        x, y = torch.randn(rows, 128), torch.randn(rows, 128)
        torch.testing.assert_close(reported(x, y), two_kernels(x, y))
    page = Page(path.read_text())
    assert "kernel-time" in page.ids
    rows = page.tables["kernels"]
    kernels = {(graph, kernel) for graph, kernel, *_ in rows}
    assert len(kernels) == len(rows) // 2  # each kernel beside its code and in the list
    assert page.text.count('extern "C"') == len(kernels)  # every kernel generated was timed
    input_bytes = {rows_ * 128 * 4 for rows_ in (64, 96)}
    for _, _, calls, per_call, nbytes, bandwidth, _ in rows:
        assert int(calls) > 0 and per_call.endswith("us (wall)") and bandwidth.endswith("GB/s")
        # each kernel takes both inputs and writes one or two outputs
        assert int(nbytes.replace(",", "")) in {2 * b + out for b in input_bytes for out in (b, b // 128, b + b // 128)}



def test_channels_a_user_turned_on_still_print_while_a_report_listens(tmp_path, capfd):
    compiler.set_logs("graph_breaks")
    try:
        def breaks(x):
            y = x + 1
            print("break")
            return y * 2

        x = torch.randn(3)
        torch.testing.assert_close(compiler.report(breaks, tmp_path / "r.html", backend="eager")(x), breaks(x))
    finally:
        compiler.set_logs()
    err = capfd.readouterr().err
    assert "[compiler.graph_breaks]" in err and "[compiler.guards]" not in err


@pytest.mark.gpu
def test_profiled_report_shows_the_gpu_time_of_triton_kernels(tmp_path):
    def gelu_affine(x):
        return torch.nn.functional.gelu(x * 2 + 1)

    path = tmp_path / "gpu.html"
    x = torch.randn(1 << 20, device="cuda")
    torch.testing.assert_close(compiler.report(gelu_affine, path, profile_kernels=True)(x), gelu_affine(x))
    rows = Page(path.read_text()).tables["kernels"]
    assert rows and all(per_call.endswith("us (GPU)") for _, _, _, per_call, *_ in rows)
    assert {int(nbytes.replace(",", "")) for _, _, _, _, nbytes, *_ in rows} == {2 * x.numel() * x.element_size()}
