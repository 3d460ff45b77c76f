"""What installing a package gives a user: no warning they did not cause.

torch does not declare numpy, and `import torch` without numpy warns "Failed to initialize
NumPy" (torch.export's import touches the NumPy bridge); every package of ours imports torch,
so each declares numpy."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())


@pytest.mark.parametrize("package", PACKAGES)
def test_declares_numpy(package):
    project = tomllib.loads((ROOT / "packages" / package / "pyproject.toml").read_text())["project"]
    assert any(dep.split(";")[0].strip().startswith("numpy") for dep in project["dependencies"])


def test_importing_every_package_warns_nothing():
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", "import " + ", ".join(PACKAGES)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
