"""The compile report rendered by a real browser (headless Chromium): the page loads without
script errors, every section shows, every in-page link has its target, every `<details>` has
a summary, nothing is wider than the window, and a screenshot of it is not blank.

Skipped where no Chromium is installed (`apt-get install chromium`); nox runs it where one is.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
import zlib

import pytest
import report_fixture

model_report = report_fixture.model_report  # the session's report, a fixture pytest finds here

CHROMIUM = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH (apt-get install chromium)")

SECTIONS = ("summary", "phases", "graphs", "graph-breaks", "recompiles", "guards", "bytecode", "aot-graphs", "output-code",
            "kernel-time", "log")
WINDOW = (1280, 900)

# Run by the browser in a copy of the report, after layout: what is broken, as JSON in a <pre>
# that --dump-dom prints (the report itself has no script; this one only reads the page).
LAYOUT_CHECK = """
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
window.addEventListener('load', () => {
  const problems = [], shown = {}, root = document.documentElement;
  const ids = new Map();
  for (const el of document.querySelectorAll('[id]')) ids.set(el.id, (ids.get(el.id) || 0) + 1);
  for (const [id, n] of ids) if (n > 1) problems.push(`id ${id} used ${n} times`);
  for (const a of document.querySelectorAll('a[href^="#"]'))
    if (!document.getElementById(a.getAttribute('href').slice(1))) problems.push(`link to a missing ${a.getAttribute('href')}`);
  for (const d of document.querySelectorAll('details')) {
    const first = d.firstElementChild;
    if (!first || first.tagName !== 'SUMMARY' || !first.textContent.trim()) problems.push('a details without a summary');
  }
  if (root.scrollWidth > window.innerWidth) problems.push(`the page is ${root.scrollWidth}px wide`);
  for (const el of document.querySelectorAll('body *')) {  // long code scrolls inside its <pre>
    if (el.closest('pre') || el.closest('details:not([open])')) continue;
    const right = el.getBoundingClientRect().right;
    if (right > window.innerWidth + 1) problems.push(`a ${el.tagName} reaches x=${Math.round(right)}`);
  }
  for (const h of document.querySelectorAll('h2[id]')) {
    const box = h.getBoundingClientRect();
    shown[h.id] = box.width > 0 && box.height > 0 && getComputedStyle(h).visibility === 'visible' && h.textContent.trim() !== '';
  }
  const out = document.createElement('pre');
  out.id = 'layout-check';
  out.textContent = JSON.stringify({errors: window.__errors, problems, shown});
  document.body.appendChild(out);
});
"""


def _chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--window-size={WINDOW[0]},{WINDOW[1]}", *args],
        capture_output=True, text=True, timeout=120, check=True,
    )


def test_report_renders_in_chromium(model_report, tmp_path):
    checked = tmp_path / "checked.html"
    checked.write_text(model_report.read_text().replace("<head>", f"<head><script>{LAYOUT_CHECK}</script>", 1))
    dom = _chromium(f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", checked.as_uri()).stdout
    found = re.search(r'<pre id="layout-check">(.*?)</pre>', dom, re.S)
    assert found, "the layout check did not run"
    result = json.loads(html.unescape(found.group(1)))
    assert result["errors"] == []
    assert result["problems"] == []
    assert {s: result["shown"].get(s) for s in SECTIONS} == dict.fromkeys(SECTIONS, True)


def test_report_screenshot_is_not_blank(model_report, tmp_path):
    shot = tmp_path / "report.png"
    _chromium(f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", model_report.as_uri())
    width, rows = _png_rows(shot.read_bytes(), limit=240)  # the title, the links, the summary table
    background = rows[0][:4]
    inked = sum(row[i:i + 4] != background for row in rows for i in range(0, len(row), 4))
    assert width == WINDOW[0]
    assert inked > 0.01 * width * len(rows), f"only {inked} pixels differ from the background"


def _png_rows(data: bytes, limit: int) -> tuple[int, list[bytes]]:
    """The first `limit` pixel rows of an 8-bit RGB/RGBA PNG (what Chromium writes), unfiltered."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, [], None
    while position < len(data):
        (length,), kind = struct.unpack(">I", data[position:position + 4]), data[position + 4:position + 8]
        body = data[position + 8:position + 8 + length]
        header = body if kind == b"IHDR" else header
        chunks += [body] if kind == b"IDAT" else []
        position += 12 + length
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and color in (2, 6) and interlace == 0, "an unexpected PNG format"
    channels = 3 if color == 2 else 4
    stride = width * channels
    raw = zlib.decompress(b"".join(chunks))
    rows, previous = [], bytearray(stride)
    for y in range(min(height, limit)):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line) if channels == 4 else b"".join(bytes(line[i:i + 3]) + b"\xff" for i in range(0, stride, 3)))
        previous = line
    return width, rows
